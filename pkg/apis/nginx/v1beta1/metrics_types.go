// The metrics of an instance: the exporter and the per-request metrics.

package v1beta1

// MetricsSpec turns nginx metrics on.
type MetricsSpec struct {
	// Enabled serves stub_status on loopback inside the pod and runs the
	// nginx-prometheus-exporter sidecar, whose port is named "metrics";
	// and the nginx-reloader of each pod counts every request on its port
	// "reloader" (see requests). NginxMonitors scrape both.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Requests are the per-request metrics of a monitored instance: nginx
	// sends a line per request (a UDP datagram on the pod's loopback,
	// 127.0.0.1:18083) to the nginx-reloader in its pod, which
	// exports nginx_route_requests_total and histograms of request and
	// upstream duration, labelled by server, route (the location's name, or
	// its path), Service and status class.
	// +optional
	Requests *RequestMetrics `json:"requests,omitempty"`
}

// RequestMetrics configures the per-request metrics.
type RequestMetrics struct {
	// Disabled stops counting requests, where the cost of a log line per
	// request matters more than the metrics (see the docs' figures).
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}
