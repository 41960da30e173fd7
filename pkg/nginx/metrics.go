package nginx

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

var (
	instanceAvailable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_instance_available",
		Help: "1 when an NginxOperator's Available condition is True, else 0.",
	}, []string{"namespace", "name"})
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
