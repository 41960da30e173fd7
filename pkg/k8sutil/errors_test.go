package k8sutil

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// What the API server refuses in a body the operator built from a spec is
// the spec's fault, even wrapped; what may pass by itself is not.
func TestRefusedBodyIsInvalidOrUndecodableOnly(t *testing.T) {
	sts := schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"invalid", apierrors.NewInvalid(sts, "web", field.ErrorList{field.Required(field.NewPath("spec"), "")}), true},
		{"undecodable, wrapped", fmt.Errorf("apply: %w", apierrors.NewBadRequest("error decoding YAML: control characters are not allowed")), true},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "statefulsets"}, "web", errors.New("changed")), false},
		{"the API server down", apierrors.NewServiceUnavailable("later"), false},
		{"no error", nil, false},
	} {
		if got := RefusedBody(c.err); got != c.want {
			t.Errorf("%s: RefusedBody = %v, want %v", c.name, got, c.want)
		}
	}
}
