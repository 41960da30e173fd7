package nginx

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

var (
	instanceAvailable = metrics.ObjectGauge("nginx_operator_instance_available",
		"1 when an NginxOperator's Available condition is True, else 0.")
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() { metrics.Registry.MustRegister(instanceAvailable) })
}

// updateMetrics reflects one instance's status.
func updateMetrics(nginx *v1beta1.NginxOperator) {
	available := 0.0
	if meta.IsStatusConditionTrue(nginx.Status.Conditions, v1beta1.ConditionAvailable) {
		available = 1
	}
	instanceAvailable.WithLabelValues(nginx.Namespace, nginx.Name).Set(available)
}

func forgetMetrics(namespace, name string) {
	instanceAvailable.DeleteLabelValues(namespace, name)
}
