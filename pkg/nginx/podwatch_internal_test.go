package nginx

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// A pod of an instance's StatefulSet wakes that instance; the operator's
// other pods (a backup Job's) wake nothing.
func TestPodsMapToTheirInstance(t *testing.T) {
	pod := func(labels map[string]string, ownerKind string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "team-a", Labels: labels}}
		if ownerKind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: ownerKind, Name: "web", Controller: ptr.To(true)}}
		}
		return p
	}
	got := podInstance(context.Background(), pod(layout.Labels("web"), "StatefulSet"))
	if len(got) != 1 || got[0].Namespace != "team-a" || got[0].Name != "web" {
		t.Errorf("StatefulSet pod maps to %v, want team-a/web", got)
	}
	backup := naming.Labels(layout.AppName, "nightly", "backup")
	for name, p := range map[string]*corev1.Pod{
		"a backup Job's pod": pod(backup, "Job"),
		"an orphaned pod":    pod(layout.Labels("web"), ""),
	} {
		if got := podInstance(context.Background(), p); len(got) != 0 {
			t.Errorf("%s maps to %v, want nothing", name, got)
		}
	}
}

// Only changes observe reads pass the pod predicate.
func TestPodUpdatesWakeTheInstanceOnlyWhenContainerStatesChange(t *testing.T) {
	base := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Annotations: map[string]string{layout.ConfigHashAnnotation: "a"}},
		Status:     corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: layout.NginxContainerName}}},
	}
	p := podStatusChanged()
	same := base.DeepCopy()
	same.ResourceVersion = "2"
	if p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: same}) {
		t.Error("an update changing nothing observe reads passed")
	}
	crashed := base.DeepCopy()
	crashed.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
	rehashed := base.DeepCopy()
	rehashed.Annotations[layout.ConfigHashAnnotation] = "b"
	for name, n := range map[string]*corev1.Pod{"a container state": crashed, "the configuration hash": rehashed} {
		if !p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n}) {
			t.Errorf("an update of %s did not pass", name)
		}
	}
}
