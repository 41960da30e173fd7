package render

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// One worker per CPU of the limit, rounded up, and never more than nginx
// and a node can run, however large the limit: the hostile corpus found
// "3000000000" rendering a negative count (int32 overflow) and "3000000"
// three million workers.
func TestWorkerProcessesFollowTheCPULimitWithinTheBound(t *testing.T) {
	for _, c := range []struct{ limit, want string }{
		{"", "auto"},
		{"0", "auto"},
		{"1m", "1"},
		{"500m", "1"},
		{"1", "1"},
		{"1001m", "2"},
		{"4", "4"},
		{"127001m", "128"},
		{"128", "128"},
		{"129", "128"},
		{"3000000", "128"},
		{"3000000000", "128"},
		{"9E", "128"},
		{"1e30", "128"},
	} {
		r := corev1.ResourceRequirements{}
		if c.limit != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(c.limit)}
		}
		if got := workerProcesses(r); got != c.want {
			t.Errorf("limits.cpu %q: worker_processes %s, want %s", c.limit, got, c.want)
		}
	}
}
