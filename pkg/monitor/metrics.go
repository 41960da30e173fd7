package monitor

import (
	"sync"

	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

// monitorTargets is nginx_operator_monitor_targets: the pods a monitor's
// scrape configuration makes Prometheus scrape (the replicas of its selected
// instances that have metrics enabled). It counts pods, not Prometheus
// targets: each pod is scraped twice, through its exporter and its reloader,
// and the count keeps its meaning (0: nothing monitored) whatever the jobs.
var monitorTargets = metrics.ObjectGauge("nginx_operator_monitor_targets",
	"Scraped pods (of selected instances with metrics enabled) of each NginxMonitor; each is scraped through its exporter and its reloader.")

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
