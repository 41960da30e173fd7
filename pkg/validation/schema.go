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
	return s.validate(ctx, obj, obj)
}

// ValidateCreate is Validate as for a create: rules with optionalOldSelf,
// which only a new object meets (such as the name rules), run too.
func (s *Schema) ValidateCreate(ctx context.Context, obj map[string]any) field.ErrorList {
	return s.validate(ctx, obj, nil)
}

func (s *Schema) validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	obj = runtime.DeepCopyJSON(obj)
	defaulting.Default(obj, s.structural)
	if old != nil {
		old = obj
	}
	errs := apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI)
	// Uniqueness in listType=set and listType=map lists is checked apart
	// from the OpenAPI schema, as the apiserver does.
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// Load compiles the schema of version of the shipped CRD whose kind is kind.
func Load(kind, version string) (*Schema, error) {
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
				return compile(v.Schema.OpenAPIV3Schema)
			}
		}
		return nil, fmt.Errorf("CRD of %s has no schema for version %s", kind, version)
	}
	return nil, fmt.Errorf("no shipped CRD for kind %s", kind)
}

func compile(v1Props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
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
	return &Schema{
		structural: structural,
		openAPI:    openAPI,
		cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}, nil
}

// lazy compiles the schema once, on first use; tests prove the shipped CRDs
// compile, and a failure is reported on every call rather than by a panic.
func lazy(kind, version string) func() (*Schema, error) {
	return sync.OnceValues(func() (*Schema, error) { return Load(kind, version) })
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
