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
		Help: "1 when the latest finished run of an NginxBackup failed, else 0.",
	}, []string{"namespace", "name"})
	lastDuration = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_backup_last_duration_seconds",
		Help: "Duration of the newest stored backup of each NginxBackup, from the agent's start to its completion.",
	}, []string{"namespace", "name"})
	lastSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_backup_last_size_bytes",
		Help: "Size of the newest stored backup of each NginxBackup (every file of the artifact).",
	}, []string{"namespace", "name"})
	failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nginx_operator_backup_failures_total",
		Help: "Failed runs of each NginxBackup seen by this operator process (after a restart, those still in the Jobs' history count again).",
	}, []string{"namespace", "name"})
	scheduleInterval = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_backup_schedule_interval_seconds",
		Help: "Time between two consecutive scheduled runs of a scheduled NginxBackup; alerts on backup age compare against it.",
	}, []string{"namespace", "name"})
	registerOnce sync.Once
)

// registerMetrics adds the controller's metrics to the shared registry once.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(lastSuccess, lastFailed, lastDuration, lastSize, failures, scheduleInterval)
	})
}

func forgetMetrics(namespace, name string) {
	lastSuccess.DeleteLabelValues(namespace, name)
	for _, v := range []interface{ DeleteLabelValues(...string) bool }{lastFailed, lastDuration, lastSize, failures, scheduleInterval} {
		v.DeleteLabelValues(namespace, name)
	}
}
