package framework

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Condition reads the object at key into obj, which may be of any kind whose
// status has conditions, and returns its condition typ (nil when the object
// or the condition is missing).
func Condition(ctx context.Context, c client.Reader, key client.ObjectKey, obj client.Object, typ string) *metav1.Condition {
	if c.Get(ctx, key, obj) != nil {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	var status struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	raw, _ := u["status"].(map[string]any)
	if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status) != nil {
		return nil
	}
	return meta.FindStatusCondition(status.Conditions, typ)
}
