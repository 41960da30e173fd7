package hostile

// The apiserver's create and read of an NginxOperator, in process, as far as
// the shipped CRD and the conversion webhook decide them: what lets the whole
// corpus be judged in seconds, with a covering sample sent to the real
// apiserver to prove that the two agree (agreement_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

var nginxOperatorGK = schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: "NginxOperator"}

// crdVersion is one served version of the NginxOperator CRD: its structural
// schema, which the apiserver prunes and defaults by as it decodes, and the
// compiled schema it validates a write by.
type crdVersion struct {
	structural *structuralschema.Structural
	validator  *validation.Schema
	// verdicts holds the validation of each distinct decoded object, by
	// verdictKey: most of the corpus's values are pruned or refused, so the
	// 15,802 sends and re-checks decode to far fewer objects, and CEL is
	// most of what admission costs.
	verdicts sync.Map // string -> field.ErrorList
	// validated and reused count the objects validated and the verdicts
	// taken from verdicts.
	validated, reused atomic.Int64
}

func loadCRDVersion(version string) (*crdVersion, error) {
	props, err := validation.ShippedSchema("NginxOperator", version)
	if err != nil {
		return nil, err
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	validator, err := validation.Compile(props)
	if err != nil {
		return nil, err
	}
	return &crdVersion{structural: structural, validator: validator}, nil
}

// decode is what the apiserver does to an object of this version as it
// reads it, from a request or from etcd: fields the schema does not know
// dropped, nulls where the schema allows none dropped, defaults filled.
func (v *crdVersion) decode(obj map[string]any) {
	pruning.Prune(obj, v.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, v.structural)
	v.validator.Default(obj)
}

// validateCreate is the create strategy's validation: the object's
// annotations (the rest of its metadata is the test's own, and valid), the
// OpenAPI schema, the list types and the CEL rules.
func (v *crdVersion) validateCreate(ctx context.Context, obj map[string]any) field.ErrorList {
	key, err := verdictKey(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if errs, ok := v.verdicts.Load(key); ok {
		v.reused.Add(1)
		return errs.(field.ErrorList)
	}
	errs := v.validate(ctx, obj)
	v.verdicts.Store(key, errs)
	v.validated.Add(1)
	return errs
}

// verdictKey is obj as JSON (its keys sorted) without its name: every name
// the corpus uses (hostile-<case>-<path>, and -recheck) passes the CRD's
// rule on names, and nothing else of the validation reads it, so objects
// that differ only in their names have the same verdict. The name is
// restored in the refusal's message (create).
func verdictKey(obj map[string]any) (string, error) {
	meta, _ := obj["metadata"].(map[string]any)
	name, had := meta["name"]
	if had {
		meta["name"] = ""
		defer func() { meta["name"] = name }()
	}
	b, err := json.Marshal(obj)
	return string(b), err
}

// validate is validateCreate without the memo.
func (v *crdVersion) validate(ctx context.Context, obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			strs := map[string]string{}
			for k, val := range annotations {
				strs[k], _ = val.(string)
			}
			errs = append(errs, apimachineryvalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotations"))...)
		}
	}
	return append(errs, v.validator.ValidateCreate(ctx, obj)...)
}

// admission is the apiserver's path for a create of either version: the
// v1alpha1 object is validated by its own schema and converted by the real
// conversion webhook's handler (called in process) before it is stored as
// v1beta1, the storage version.
type admission struct {
	beta, alpha *crdVersion
	webhook     http.Handler
}

func newAdmission() (*admission, error) {
	beta, err := loadCRDVersion("v1beta1")
	if err != nil {
		return nil, err
	}
	alpha, err := loadCRDVersion("v1alpha1")
	if err != nil {
		return nil, err
	}
	return &admission{beta: beta, alpha: alpha, webhook: conversion.NewHandler()}, nil
}

// create is a create of obj (either version) and the read of what was stored
// as v1beta1: the stored object, or the apiserver's refusal as its message.
func (a *admission) create(ctx context.Context, obj map[string]any) (map[string]any, string) {
	// What the client sends is JSON, and the apiserver decodes numbers the
	// way apimachinery does (int64 where integral).
	obj, err := jsonRoundTrip(obj)
	if err != nil {
		return nil, "decoding the request: " + err.Error()
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	version := a.beta
	if obj["apiVersion"] == v1alpha1.GroupVersion.String() {
		version = a.alpha
	}
	version.decode(obj)
	if errs := version.validateCreate(ctx, obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(nginxOperatorGK, name, errs).Error()
	}
	if version == a.alpha {
		if obj, err = a.convert(obj); err != nil {
			return nil, err.Error()
		}
	}
	// The conversion's output is pruned by the storage version's schema
	// before it is stored, and read back as every object is decoded.
	a.beta.decode(obj)
	return obj, ""
}

// convert is the conversion webhook's answer for obj, as the apiserver asks
// for it: one object in a ConversionReview, to v1beta1.
func (a *admission) convert(obj map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: "hostile", DesiredAPIVersion: v1beta1.GroupVersion.String(),
			Objects: []runtime.RawExtension{{Raw: raw}}},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, conversion.Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	a.webhook.ServeHTTP(rec, req)
	var answer apiextensionsv1.ConversionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Response == nil {
		return nil, fmt.Errorf("conversion webhook answered %d: %s", rec.Code, rec.Body.String())
	}
	if answer.Response.Result.Status != "Success" || len(answer.Response.ConvertedObjects) != 1 {
		return nil, fmt.Errorf("conversion webhook for %s failed: %s", v1alpha1.GroupVersion.WithKind("NginxOperator"), answer.Response.Result.Message)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(answer.Response.ConvertedObjects[0].Raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func jsonRoundTrip(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, utiljson.Unmarshal(b, &out)
}
