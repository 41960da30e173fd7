package operator

import (
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

func TestTrimForCacheKeepsOnlyTheOperatorsApplyRecord(t *testing.T) {
	own := metav1.ManagedFieldsEntry{Manager: k8sutil.ManagedBy, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Annotations: map[string]string{lastAppliedAnnotation: "{}", "keep": "me"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
				own,
				{Manager: k8sutil.ManagedBy, Operation: metav1.ManagedFieldsOperationUpdate},
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply},
			},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas: new(int32),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"hash": "1"}},
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "restore"}},
					Containers:     []corev1.Container{{Name: "nginx", Image: "nginx"}},
					Volumes:        []corev1.Volume{{Name: "config"}},
				},
			},
		},
	}
	got, err := TrimForCache(sts)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := got.(*appsv1.StatefulSet)
	compacted := []metav1.ManagedFieldsEntry{own}
	k8sutil.CompactApplyRecord(compacted)
	if compacted[0].FieldsType != k8sutil.FieldsDigestType {
		t.Fatalf("CompactApplyRecord left %+v", compacted[0])
	}
	if diff := cmp.Diff(compacted, trimmed.ManagedFields); diff != "" {
		t.Errorf("managedFields of a built-in kind (-want +got):\n%s", diff)
	}
	// A kind without a schema in the client keeps its full record.
	sm := &monitoringv1.ServiceMonitor{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{own}}}
	got, _ = TrimForCache(sm)
	if diff := cmp.Diff([]metav1.ManagedFieldsEntry{own}, got.(*monitoringv1.ServiceMonitor).ManagedFields); diff != "" {
		t.Errorf("managedFields of a ServiceMonitor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"keep": "me"}, trimmed.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	spec := trimmed.Spec.Template.Spec
	if spec.Containers != nil || spec.Volumes != nil || len(spec.InitContainers) != 1 || trimmed.Spec.Template.Annotations["hash"] != "1" || trimmed.Spec.Replicas == nil {
		t.Errorf("StatefulSet spec: containers and volumes should go, the rest stay: %+v", trimmed.Spec)
	}

	secret := &corev1.Secret{Data: map[string][]byte{"nginx.conf": []byte("events {}")}}
	if got, _ := TrimForCache(secret); got.(*corev1.Secret).Data != nil {
		t.Error("a cached Secret keeps its data")
	}
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	if got, _ := TrimForCache(meta); len(got.(*metav1.PartialObjectMetadata).ManagedFields) != 0 {
		t.Error("metadata-only objects keep other managers' records")
	}
	if got, err := TrimForCache("not an object"); err != nil || got != "not an object" {
		t.Errorf("TrimForCache(string) = %v, %v; want it unchanged", got, err)
	}
}

func TestCacheOptionsTrimObjects(t *testing.T) {
	if CacheOptions(Options{}).DefaultTransform == nil {
		t.Error("the cache stores objects untrimmed")
	}
}
