package backup

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

var (
	lastSuccess = metrics.ObjectGauge("nginx_operator_backup_last_success_timestamp_seconds",
		"Completion time of the last successful run of each NginxBackup, in Unix seconds.")
	lastFailed = metrics.ObjectGauge("nginx_operator_backup_last_run_failed",
		"1 when the latest finished run of an NginxBackup failed, else 0.")
	lastDuration = metrics.ObjectGauge("nginx_operator_backup_last_duration_seconds",
		"Duration of the newest stored backup of each NginxBackup, from the agent's start to its completion.")
	lastSize = metrics.ObjectGauge("nginx_operator_backup_last_size_bytes",
		"Size of the newest stored backup of each NginxBackup (every file of the artifact).")
	scheduleInterval = metrics.ObjectGauge("nginx_operator_backup_schedule_interval_seconds",
		"Time between two consecutive scheduled runs of a scheduled NginxBackup; alerts on backup age compare against it.")
	failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nginx_operator_backup_failures_total",
		Help: "Failed runs of each NginxBackup seen by this operator process (after a restart, those still in the Jobs' history count again).",
	}, metrics.ObjectLabels)
	registerOnce sync.Once
)

// registerMetrics adds the controller's metrics to the shared registry once.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(lastSuccess, lastFailed, lastDuration, lastSize, failures, scheduleInterval)
	})
}

func forgetMetrics(namespace, name string) {
	for _, v := range []interface{ DeleteLabelValues(...string) bool }{lastSuccess, lastFailed, lastDuration, lastSize, failures, scheduleInterval} {
		v.DeleteLabelValues(namespace, name)
	}
}
