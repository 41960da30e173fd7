package framework

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// InstanceCondition is Condition of the NginxOperator ns/name.
func InstanceCondition(ctx context.Context, c client.Reader, ns, name, typ string) *metav1.Condition {
	return Condition(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, &v1beta1.NginxOperator{}, typ)
}

// BackupCondition is Condition of the NginxBackup ns/name.
func BackupCondition(ctx context.Context, c client.Reader, ns, name, typ string) *metav1.Condition {
	return Condition(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, &v1beta1.NginxBackup{}, typ)
}

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

// EventRecorded waits up to timeout for an events.k8s.io Event in namespace
// about the object named regarding, of type typ and reason, whose note
// contains noteHas.
func EventRecorded(ctx context.Context, cs kubernetes.Interface, namespace, regarding, typ, reason, noteHas string, timeout time.Duration) bool {
	return WaitFor(ctx, timeout, func(ctx context.Context) bool {
		events, err := cs.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Regarding.Name == regarding && e.Type == typ && e.Reason == reason && strings.Contains(e.Note, noteHas) {
				return true
			}
		}
		return false
	})
}

// PodReady is true when the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
