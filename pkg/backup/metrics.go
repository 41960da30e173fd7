package backup

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

var (
	lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_backup_last_success_timestamp_seconds",
		Help: "Completion time of the last successful run of each NginxBackup, in Unix seconds.",
	}, []string{"namespace", "name"})
	lastFailed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_backup_last_run_failed",
		Help: "1 when the last run of a one-shot NginxBackup failed, else 0.",
	}, []string{"namespace", "name"})
	registerOnce sync.Once
)

// registerMetrics adds the controller's metrics to the shared registry once.
func registerMetrics() {
	registerOnce.Do(func() { metrics.Registry.MustRegister(lastSuccess, lastFailed) })
}

func forgetMetrics(namespace, name string) {
	lastSuccess.DeleteLabelValues(namespace, name)
	lastFailed.DeleteLabelValues(namespace, name)
}
