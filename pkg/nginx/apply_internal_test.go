package nginx

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

// A new instance is dry-run before its first write only where its spec,
// as admission defaults it, sets a field a child's API server checks
// beyond the CRD: the common instance is spared the dry runs.
func TestNewInstancesAreDryRunOnlyWhereTheSpecReachesAChildsAPI(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*v1beta1.NginxOperatorSpec)
		want bool
	}{
		{"the defaults", func(*v1beta1.NginxOperatorSpec) {}, false},
		{"a grace period", func(s *v1beta1.NginxOperatorSpec) { s.Pod.TerminationGracePeriodSeconds = 120 }, false},
		{"servers and locations", func(s *v1beta1.NginxOperatorSpec) {
			s.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}}}
		}, false},
		{"pod affinity", func(s *v1beta1.NginxOperatorSpec) {
			s.Pod.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}}
		}, true},
		{"a toleration", func(s *v1beta1.NginxOperatorSpec) {
			s.Pod.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Exists"}}
		}, true},
		{"pod labels", func(s *v1beta1.NginxOperatorSpec) { s.Pod.Labels = map[string]string{"team": "a"} }, true},
		{"resources", func(s *v1beta1.NginxOperatorSpec) {
			s.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, true},
		{"a NetworkPolicy", func(s *v1beta1.NginxOperatorSpec) { s.NetworkPolicy = &v1beta1.NetworkPolicySpec{} }, true},
		{"a PodDisruptionBudget", func(s *v1beta1.NginxOperatorSpec) {
			s.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
		}, true},
		{"a NodePort Service", func(s *v1beta1.NginxOperatorSpec) { s.Service.Type = corev1.ServiceTypeNodePort }, true},
		{"Service annotations", func(s *v1beta1.NginxOperatorSpec) { s.Service.Annotations = map[string]string{"a": "b"} }, true},
	} {
		obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
			Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}}}
		tc.edit(&obj.Spec)
		admitted := validationtest.NginxOperator(t, obj)
		if got := reachesChildAPIs(&admitted.Spec); got != tc.want {
			t.Errorf("%s: reachesChildAPIs = %v, want %v", tc.name, got, tc.want)
		}
	}
}
