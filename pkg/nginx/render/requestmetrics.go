package render

import (
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// Request metrics: nginx writes one line per request to the nginx-reloader
// beside it, which counts them (pkg/reloader/requests.go). The line goes
// through nginx's syslog client as a UDP datagram to loopback: a line the
// reloader's receive buffer has no room for is dropped by the kernel, which
// counts it, so a reloader that falls behind costs counts, never requests.
// (A unix datagram socket, the other transport nginx's syslog has, queues
// only net.unix.max_dgram_qlen datagrams, 10 in a pod: a burst of requests
// lost a quarter of its lines at 5,000 requests per second.)
//
// The labels come from the configuration, never from the request: the
// server is $server_name (the server's first name), the route and the
// Service are set in each location from the spec. So the series a pod can
// have are bounded by its configuration.

// Names of the variables and the log format. RequestMetricsFormat is what
// pkg/reloader parses: tab-separated server, route, Service, status,
// request time and upstream response time. nginx escapes a tab inside a
// value (escape=default writes it as \x09), so the separator is never
// part of one.
const (
	routeLabelVariable   = "$request_metrics_route"
	serviceLabelVariable = "$request_metrics_service"
	dollarVariable       = "$request_metrics_dollar"
	requestLogFormat     = "request_metrics"
	// RequestMetricsFormat is the log format's text.
	RequestMetricsFormat = "$server_name\t" + routeLabelVariable + "\t" + serviceLabelVariable +
		"\t$status\t$request_time\t$upstream_response_time"
)

// requestMetricsOn reports whether spec's requests are counted: the
// instance is monitored (metrics.enabled), has not turned request metrics
// off, and the pod has a reloader to count them (Paths.RequestLog).
func (r *renderer) requestMetricsOn(spec *v1beta1.NginxOperatorSpec) bool {
	m := spec.Metrics
	return r.opts.Paths.RequestLog != "" && m.Enabled && (m.Requests == nil || !m.Requests.Disabled)
}

// requestLog is the access log every user server inherits from the http
// context, with the format and the variables it needs declared: nginx
// refuses a format naming a variable no directive defines, so the
// health server's location sets them (its requests are not logged).
func (r *renderer) requestLog() []conf.Directive {
	return []conf.Directive{
		conf.D("log_format", requestLogFormat, "escape=default", RequestMetricsFormat),
		r.requestLogDirective(),
		// nginx has no escape for '$' in a value that may hold variables:
		// a route label with one takes it from this variable instead.
		conf.B("geo", []string{dollarVariable}, conf.D("default", "$")),
	}
}

// requestLogDirective sends each request's line to the reloader's socket.
// nohostname: the reloader is on the same host; the tag names the sender.
func (r *renderer) requestLogDirective() conf.Directive {
	return conf.D("access_log", "syslog:server="+r.opts.Paths.RequestLog+",nohostname,tag=nginx", requestLogFormat)
}

// declareRequestVariables defines the variables of the log format for
// nginx (a "set" anywhere declares a variable everywhere).
func declareRequestVariables() []conf.Directive {
	return []conf.Directive{conf.D("set", routeLabelVariable, ""), conf.D("set", serviceLabelVariable, "")}
}

// requestLabels set the route and Service labels of location l's
// requests; nothing when requests are not counted.
func (r *renderer) requestLabels(l v1beta1.Location) []conf.Directive {
	if !r.countRequests {
		return nil
	}
	out := []conf.Directive{conf.D("set", routeLabelVariable, literalValue(RouteLabel(l)))}
	if l.Proxy != nil {
		out = append(out, conf.D("set", serviceLabelVariable, ServiceLabel(l.Proxy)))
	}
	return out
}

// RouteLabel is the route label of l's requests: its name, or its path.
func RouteLabel(l v1beta1.Location) string {
	if l.Name != "" {
		return l.Name
	}
	return l.Path
}

// ServiceLabel is the Service label of p's requests: its Service, or its
// weighted backends' joined by commas (a split is one series: name each
// version's location apart to compare them). A Service in another
// namespace is namespace/name.
func ServiceLabel(p *v1beta1.ProxyLocation) string {
	var names []string
	for _, b := range backendsOf(p) {
		names = append(names, b.key())
	}
	return strings.Join(names, ",")
}

// literalValue is s as the value of a directive that reads variables: each
// '$' comes from dollarVariable.
func literalValue(s string) string {
	return strings.ReplaceAll(s, "$", "${"+dollarVariable[1:]+"}")
}
