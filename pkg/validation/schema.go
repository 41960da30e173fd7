// Package validation checks custom resources against the CRDs the operator
// ships, exactly as the apiserver's admission does: defaulting, the OpenAPI
// schema (patterns, bounds, enums) and the CEL rules. The CRD stays the one
// source of truth; this package evaluates it where the apiserver does not: in
// the conversion webhook, whose output for a v1alpha1 request is never checked
// against the v1beta1 schema, and in the controller, for every object it
// reconciles whatever version it came through.
package validation

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	crds "github.com/nginx-operator/nginx-operator/config/crd"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// Schema is one served version of one CRD, compiled for validation.
type Schema struct {
	structural *structuralschema.Structural
	openAPI    apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// Validate defaults a copy of obj (an object of this schema's kind and
// version, as JSON-compatible values) and returns every schema and CEL
// violation, with the messages the apiserver would give.
//
// Rules that compare with the previous object (transition rules, and rules
// with optionalOldSelf that only run on create) are evaluated as for an
// update that changes nothing: they pass. They guard transitions the
// apiserver sees itself; a converted or reconciled object has no meaningful
// "before".
func (s *Schema) Validate(ctx context.Context, obj map[string]any) field.ErrorList {
	_, errs := s.admit(ctx, obj, false)
	return errs
}

// ValidateCreate is Validate as for a create: rules with optionalOldSelf,
// which only a new object meets (such as the name rules), run too.
func (s *Schema) ValidateCreate(ctx context.Context, obj map[string]any) field.ErrorList {
	_, errs := s.admit(ctx, obj, true)
	return errs
}

// Default fills, in place, every field of obj that the schema defaults and
// obj leaves out, as the apiserver does when it decodes an object.
func (s *Schema) Default(obj map[string]any) {
	defaulting.Default(obj, s.structural)
}

// admit defaults a copy of obj and validates it, as for a create or as for an
// update that changes nothing (see Validate); it returns the defaulted copy.
func (s *Schema) admit(ctx context.Context, obj map[string]any, create bool) (map[string]any, field.ErrorList) {
	obj = runtime.DeepCopyJSON(obj)
	s.Default(obj)
	errs := apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI)
	// Uniqueness in listType=set and listType=map lists is checked apart
	// from the OpenAPI schema, as the apiserver does.
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	var oldObj any
	if !create {
		oldObj = obj
	}
	celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return obj, append(errs, celErrs...)
}

// Admit is admission for a typed object of kind: it defaults a copy of obj
// by s, checks the copy against the schema and CEL rules (as Validate), and
// returns it with every violation. The copy is what the apiserver would
// store and what the controllers build from: the CRD's defaults are stated
// once, in the CRD, and reach Go only through here.
func Admit[T any](ctx context.Context, s *Schema, kind string, obj *T) (*T, field.ErrorList) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	m["apiVersion"], m["kind"] = v1beta1.GroupVersion.String(), kind
	m, errs := s.admit(ctx, m, false)
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &out); err != nil {
		return nil, append(errs, field.InternalError(nil, err))
	}
	return &out, errs
}

// Load compiles the schema of version of the shipped CRD whose kind is kind.
func Load(kind, version string) (*Schema, error) {
	props, err := ShippedSchema(kind, version)
	if err != nil {
		return nil, err
	}
	return Compile(props)
}

// ShippedSchema is the OpenAPI schema of version of the shipped CRD whose
// kind is kind, decoded afresh: a caller may change it (a test removes a rule
// to prove that nothing else enforces it) and Compile the result. Nothing
// keeps the decoded CRDs: the operator compiles each schema once, and the
// CRDs' Go form would stay in its heap for nothing.
func ShippedSchema(kind, version string) (*apiextensionsv1.JSONSchemaProps, error) {
	files, err := crds.Files()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(f, &crd); err != nil {
			return nil, fmt.Errorf("decoding a shipped CRD: %w", err)
		}
		if crd.Spec.Names.Kind != kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				return v.Schema.OpenAPIV3Schema, nil
			}
		}
		return nil, fmt.Errorf("CRD of %s has no schema for version %s", kind, version)
	}
	return nil, fmt.Errorf("no shipped CRD for kind %s", kind)
}

// Compile compiles a CRD version's OpenAPI schema for validation.
func Compile(v1Props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	s, err := compileOpenAPI(v1Props)
	if err != nil {
		return nil, err
	}
	s.cel = cel.NewValidator(s.structural, true, celconfig.PerCallLimit)
	return s, nil
}

// compileOpenAPI compiles all of a schema but its CEL rules, which cost
// most of Compile's time.
func compileOpenAPI(v1Props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1Props, &internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema: %w", err)
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	openAPI, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	return &Schema{structural: structural, openAPI: openAPI}, nil
}

// lazy compiles the schema once, on first use; tests prove the shipped CRDs
// compile, and a failure is reported on every call rather than by a panic.
func lazy(kind, version string) func() (*Schema, error) {
	return lazyFrom(func() (*apiextensionsv1.JSONSchemaProps, error) { return ShippedSchema(kind, version) })
}

// lazyFrom compiles the schema props returns, once, on first use.
func lazyFrom(props func() (*apiextensionsv1.JSONSchemaProps, error)) func() (*Schema, error) {
	return sync.OnceValues(func() (*Schema, error) {
		p, err := props()
		if err != nil {
			return nil, err
		}
		return Compile(p)
	})
}

// V1beta1 is the compiled v1beta1 schema of kind (NginxOperator,
// NginxMonitor or NginxBackup).
func V1beta1(kind string) (*Schema, error) {
	switch kind {
	case "NginxOperator":
		return nginxOperatorV1beta1()
	case "NginxMonitor":
		return nginxMonitorV1beta1()
	case "NginxBackup":
		return nginxBackupV1beta1()
	}
	return nil, fmt.Errorf("no schema for kind %s", kind)
}

var (
	nginxMonitorV1beta1 = lazy("NginxMonitor", "v1beta1")
	nginxBackupV1beta1  = lazy("NginxBackup", "v1beta1")
)

// NginxMonitor is obj with the CRD's defaults, checked against the v1beta1
// NginxMonitor CRD: what the monitor controller builds from.
func NginxMonitor(ctx context.Context, obj *v1beta1.NginxMonitor) (*v1beta1.NginxMonitor, field.ErrorList) {
	s, err := nginxMonitorV1beta1()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return Admit(ctx, s, "NginxMonitor", obj)
}

// NginxBackup is obj with the CRD's defaults, checked against the v1beta1
// NginxBackup CRD: what the backup controller builds from.
func NginxBackup(ctx context.Context, obj *v1beta1.NginxBackup) (*v1beta1.NginxBackup, field.ErrorList) {
	s, err := nginxBackupV1beta1()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return Admit(ctx, s, "NginxBackup", obj)
}

// Defaulted is obj, of kind, with its v1beta1 CRD's defaults and nothing
// checked: what a controller builds from when it reads an object it does
// not own (the backup controller, its instance), whose own controller
// reports whether that object is valid.
func Defaulted[T any](kind string, obj *T) (*T, error) {
	s, err := V1beta1(kind)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	s.Default(m)
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
