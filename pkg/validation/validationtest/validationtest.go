// Package validationtest gives tests the objects the controllers build from:
// defaulted and validated by the shipped CRDs (pkg/validation), so a test
// renders what a cluster would, and a hand-written spec that the CRD refuses
// fails the test instead of testing what no cluster can hold.
package validationtest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// NginxOperator is obj as validation.NginxOperator returns it; t fails when
// the CRD or the rules of the children refuse obj.
func NginxOperator(t testing.TB, obj *v1beta1.NginxOperator) *v1beta1.NginxOperator {
	t.Helper()
	out, errs := validation.NginxOperator(context.Background(), obj)
	return admitted(t, out, errs, "NginxOperator "+obj.Namespace+"/"+obj.Name)
}

// Spec is NginxOperator for a spec alone, as the spec of an instance named
// web in namespace team-a.
func Spec(t testing.TB, spec v1beta1.NginxOperatorSpec) *v1beta1.NginxOperatorSpec {
	t.Helper()
	obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}, Spec: spec}
	return &NginxOperator(t, obj).Spec
}

// NginxMonitor is obj as validation.NginxMonitor returns it; t fails when the
// CRD refuses obj.
func NginxMonitor(t testing.TB, obj *v1beta1.NginxMonitor) *v1beta1.NginxMonitor {
	t.Helper()
	out, errs := validation.NginxMonitor(context.Background(), obj)
	return admitted(t, out, errs, "NginxMonitor "+obj.Namespace+"/"+obj.Name)
}

func admitted[T any](t testing.TB, out *T, errs field.ErrorList, what string) *T {
	t.Helper()
	if len(errs) > 0 {
		t.Fatalf("the CRD refuses %s: %v", what, errs.ToAggregate())
	}
	return out
}
