package k8sutil

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// AppliedHashAnnotation records the hash of the configuration the operator last
// applied to an object. Comparing it with the hash of the new desired object
// tells whether a field the operator used to set has since been dropped from
// the desired state, which a comparison with the live object cannot see.
const AppliedHashAnnotation = "nginx.operator.dev/applied-hash"

// Outcome says what Apply did.
type Outcome string

const (
	// Unchanged: the live object already matched; no request was sent.
	Unchanged Outcome = "Unchanged"
	// Created: the object did not exist and was created.
	Created Outcome = "Created"
	// Updated: the live object differed and was patched.
	Updated Outcome = "Updated"
)

// Applier writes desired objects with server-side apply under the field manager
// ManagedBy, sending nothing when the live object already matches.
type Applier struct {
	// Client sends the apply requests.
	Client client.Client
	// Reader reads the live objects; in the operator it is the informer cache, so
	// a steady-state reconcile costs no API request at all.
	Reader client.Reader
	// Scheme knows the Go types of the desired objects.
	Scheme *runtime.Scheme
}

// Apply makes the live object match desired in every field desired sets, using
// server-side apply with forced ownership (the operator is the authority on
// the fields it sets; fields it does not set stay with whoever set them).
//
// The request is skipped when the live object carries the same applied hash and
// every field of desired already has the desired value in the live object. The
// hash catches fields dropped from the desired state; the field comparison
// catches drift, such as a user editing or removing a field the operator owns.
// desired is not modified.
func (a *Applier) Apply(ctx context.Context, desired client.Object) (Outcome, error) {
	gvk, err := apiutil.GVKForObject(desired, a.Scheme)
	if err != nil {
		return "", fmt.Errorf("apply: %w", err)
	}
	body, err := applyBody(desired, a.Scheme)
	if err != nil {
		return "", err
	}
	body.SetGroupVersionKind(gvk)
	hash := Hash(body.Object)
	annotations := body.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedHashAnnotation] = hash
	body.SetAnnotations(annotations)

	live, err := a.Scheme.New(gvk)
	if err != nil {
		return "", fmt.Errorf("apply %s: %w", gvk.Kind, err)
	}
	liveObj := live.(client.Object)
	outcome := Updated
	switch err := a.Reader.Get(ctx, client.ObjectKeyFromObject(desired), liveObj); {
	case apierrors.IsNotFound(err):
		outcome = Created
	case err != nil:
		return "", fmt.Errorf("apply %s %s: reading the live object: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	default:
		if liveObj.GetAnnotations()[AppliedHashAnnotation] == hash {
			liveMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(liveObj)
			if err != nil {
				return "", fmt.Errorf("apply %s: %w", gvk.Kind, err)
			}
			// Typed reads drop apiVersion and kind; the type already matched them.
			liveMap["apiVersion"], liveMap["kind"] = body.GetAPIVersion(), body.GetKind()
			if IsSubset(body.Object, liveMap) {
				return Unchanged, nil
			}
		}
	}

	err = a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(body), client.FieldOwner(ManagedBy), client.ForceOwnership)
	if err != nil {
		return "", fmt.Errorf("apply %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	}
	return outcome, nil
}

// applyBody converts desired to the map sent as the apply configuration: no
// status (written through the status subresource only), no server-populated
// metadata, and no nulls (which would claim ownership of absent fields).
func applyBody(desired client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return nil, fmt.Errorf("apply: converting %T: %w", desired, err)
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink"} {
			delete(meta, k)
		}
	}
	return &unstructured.Unstructured{Object: dropNulls(m).(map[string]any)}, nil
}

// dropNulls removes null values and the keys holding them, recursively.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if val == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(val)
		}
	case []any:
		for i := range t {
			t[i] = dropNulls(t[i])
		}
	}
	return v
}

// IsSubset reports whether every field set in want has the same value in have.
// Maps may hold extra keys in have (fields defaulted by the API server or owned
// by someone else). Lists match when each element of want matches a distinct
// element of have, in order, so elements other managers added are tolerated
// but a missing or edited element is not.
//
// A zero scalar in want (0, "", false) matches anything: a typed Go object
// cannot tell "unset" from "zero" for fields without omitempty (a Service
// port's targetPort, for one), and the API server defaults such fields. Drift
// of a field to or from its zero value is therefore not detected here; a
// change of the desired value still is, through the applied hash.
func IsSubset(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok && !isEmpty(wv) {
				return false
			}
			if ok && !IsSubset(wv, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		j := 0
		for _, wv := range w {
			for j < len(h) && !IsSubset(wv, h[j]) {
				j++
			}
			if j == len(h) {
				return false
			}
			j++
		}
		return true
	default:
		return isEmpty(want) || numericEqual(want, have) || reflect.DeepEqual(want, have)
	}
}

// isEmpty is true for zero values: empty maps, lists and strings, false, 0.
func isEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	case bool:
		return !t
	case int64:
		return t == 0
	case float64:
		return t == 0
	}
	return v == nil
}

// numericEqual compares numbers whatever their Go type: the unstructured
// converter yields int64 for integers, JSON decoding float64.
func numericEqual(a, b any) bool {
	fa, ok1 := toFloat(a)
	fb, ok2 := toFloat(b)
	return ok1 && ok2 && fa == fb
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case int32:
		return float64(t), true
	case int:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}
