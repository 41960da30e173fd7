package monitor

import (
	"sync"

	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

// monitorTargets is nginx_operator_monitor_targets: the pods a monitor's
// scrape configuration makes Prometheus scrape (the replicas of its selected
// instances that have metrics enabled).
var monitorTargets = metrics.ObjectGauge("nginx_operator_monitor_targets",
	"Scrape targets (pods of selected instances with metrics enabled) of each NginxMonitor.")

var registerOnce sync.Once

// registerMetrics adds the controller's metrics to the shared registry once,
// so tests may build several managers in one process.
func registerMetrics() {
	registerOnce.Do(func() { metrics.Registry.MustRegister(monitorTargets) })
}

func setTargets(namespace, name string, n int) {
	monitorTargets.WithLabelValues(namespace, name).Set(float64(n))
}

func forgetTargets(namespace, name string) {
	monitorTargets.DeleteLabelValues(namespace, name)
}
