package reloader

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Request metrics: nginx sends one syslog line per request as a UDP
// datagram to a loopback address the reloader reads (the renderer's
// request_metrics log format: server, route, Service, status, request time
// and upstream response time, tab-separated). Requests counts them by
// server, route and Service, the labels the configuration set, and by
// status class.
//
// Sending never blocks nginx: when the reloader falls behind and its
// socket's receive buffer is full, the kernel drops the datagram and counts
// it (the "drops" of the socket in /proc/net/udp), which the reloader
// reports as reloader_request_lines_dropped_total. Counts are then short by
// that much; requests are never slowed.

// MaxRouteSeries bounds the label sets (server, route, Service) a pod
// reports: past it, new label sets are counted under OverflowLabel. The
// configuration bounds them already (a Gateway's instance has one route
// per rule); this bounds the reloader's memory whatever it is sent.
const MaxRouteSeries = 5000

// OverflowLabel is the server, route and Service of the requests of label
// sets beyond MaxRouteSeries.
const OverflowLabel = "_other"

// requestBuckets are the upper bounds of the request and upstream
// duration histograms, in seconds (Prometheus' defaults, as ingress-nginx
// uses for its request histograms).
var requestBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// statusClasses label the status counts: 1xx to 5xx.
var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

type routeKey struct{ server, route, service string }

// routeSeries are one label set's counts.
type routeSeries struct {
	byClass  [len(statusClasses)]uint64
	request  histogram
	upstream histogram
}

// Requests counts the request lines nginx sends. Its zero value is not
// usable; use NewRequests.
type Requests struct {
	mu        sync.Mutex
	series    map[routeKey]*routeSeries
	order     []routeKey // first seen first: the metrics' order
	malformed uint64
	// port is the UDP port Serve reads, whose drops the kernel counts.
	port int
}

// NewRequests returns an empty count.
func NewRequests() *Requests {
	return &Requests{series: map[routeKey]*routeSeries{}}
}

// requestBufferBytes is the receive buffer the reloader asks for: room for
// thousands of lines while it is not scheduled. The kernel caps it at
// net.core.rmem_max (208 KiB by default, some 300 lines).
const requestBufferBytes = 4 << 20

// ListenRequests binds the loopback UDP address for nginx to send request
// lines to.
func ListenRequests(address string) (*net.UDPConn, error) {
	addr, err := net.ResolveUDPAddr("udp", address)
	if err != nil {
		return nil, fmt.Errorf("request metrics: %w", err)
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("request metrics: %w", err)
	}
	_ = conn.SetReadBuffer(requestBufferBytes) // capped, never refused
	return conn, nil
}

// Serve counts the lines conn receives until ctx ends, then closes conn.
func (q *Requests) Serve(ctx context.Context, conn *net.UDPConn) error {
	if port, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		q.mu.Lock()
		q.port = port.Port
		q.mu.Unlock()
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	// nginx writes at most 2 KiB to syslog per line; a longer datagram
	// is cut to the buffer and then malformed.
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("reading request lines: %w", err)
		}
		q.Count(buf[:n])
	}
}

// Count counts one syslog datagram from nginx.
func (q *Requests) Count(datagram []byte) {
	line, ok := parseRequestLine(datagram)
	q.mu.Lock()
	defer q.mu.Unlock()
	if !ok {
		q.malformed++
		return
	}
	s := q.series[line.key]
	if s == nil {
		if len(q.series) >= MaxRouteSeries {
			line.key = routeKey{OverflowLabel, OverflowLabel, OverflowLabel}
			s = q.series[line.key]
		}
		if s == nil {
			s = &routeSeries{request: histogram{bounds: requestBuckets}, upstream: histogram{bounds: requestBuckets}}
			q.series[line.key] = s
			q.order = append(q.order, line.key)
		}
	}
	s.byClass[line.class]++
	s.request.observe(line.requestTime)
	if line.upstream {
		s.upstream.observe(line.upstreamTime)
	}
}

// requestLine is one request as nginx logged it.
type requestLine struct {
	key          routeKey
	class        int // index in statusClasses
	requestTime  float64
	upstream     bool // a Service answered
	upstreamTime float64
}

// parseRequestLine reads "<PRI>Mmm dd hh:mm:ss nginx: " and the six
// fields of the log format.
func parseRequestLine(datagram []byte) (requestLine, bool) {
	var l requestLine
	_, msg, ok := bytes.Cut(datagram, []byte(": "))
	if !ok || len(datagram) == 0 || datagram[0] != '<' {
		return l, false
	}
	fields := strings.Split(strings.TrimRight(string(msg), "\n"), "\t")
	if len(fields) != 6 {
		return l, false
	}
	status, err := strconv.Atoi(fields[3])
	if err != nil || status < 100 || status > 599 {
		return l, false
	}
	l.class = status/100 - 1
	if l.requestTime, err = strconv.ParseFloat(fields[4], 64); err != nil {
		return l, false
	}
	l.upstreamTime, l.upstream = upstreamTime(fields[5])
	l.key = routeKey{label(fields[0]), label(fields[1]), label(fields[2])}
	return l, true
}

// upstreamTime adds the times of every Service nginx tried: nginx lists
// them separated by ", " (the next server of an upstream) and " : " (an
// internal redirect to another one). "-" or none: no Service answered.
func upstreamTime(field string) (float64, bool) {
	total, any := 0.0, false
	for _, part := range strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == ':' || r == ' ' }) {
		if v, err := strconv.ParseFloat(part, 64); err == nil {
			total, any = total+v, true
		}
	}
	return total, any
}

// label is a field's value: nginx writes an unset variable as "-" and
// escapes '"', '\' and bytes outside printable ASCII as \xHH.
func label(field string) string {
	if field == "-" {
		return ""
	}
	if !strings.Contains(field, `\x`) {
		return field
	}
	var b strings.Builder
	for i := 0; i < len(field); i++ {
		if field[i] == '\\' && i+3 < len(field) && field[i+1] == 'x' {
			if v, err := strconv.ParseUint(field[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(field[i])
	}
	return b.String()
}

// write appends the request metrics in Prometheus' text format.
func (q *Requests) write(b *bytes.Buffer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	fmt.Fprintf(b, "# HELP reloader_request_lines_malformed_total Request lines from nginx the reloader could not read.\n"+
		"# TYPE reloader_request_lines_malformed_total counter\nreloader_request_lines_malformed_total %d\n", q.malformed)
	// Declared always; a sample only where the kernel counts the socket's
	// drops (a reloader that serves, on Linux).
	fmt.Fprintf(b, "# HELP reloader_request_lines_dropped_total Request lines the kernel dropped, the reloader's receive buffer full: requests not counted.\n"+
		"# TYPE reloader_request_lines_dropped_total counter\n")
	if dropped, ok := udpDrops(q.port); ok {
		fmt.Fprintf(b, "reloader_request_lines_dropped_total %d\n", dropped)
	}
	// The families are declared with no series too, for readers to find
	// the names before the first request.
	const requests = "nginx_route_requests_total"
	fmt.Fprintf(b, "# HELP %s Requests nginx answered, by server, route, Service and status class.\n# TYPE %s counter\n", requests, requests)
	for _, k := range q.order {
		labels := routeLabels(k)
		for class, n := range q.series[k].byClass {
			if n > 0 {
				fmt.Fprintf(b, "%s{%s,status=%q} %d\n", requests, labels, statusClasses[class], n)
			}
		}
	}
	histograms := []struct {
		name, help string
		of         func(*routeSeries) *histogram
	}{
		{"nginx_route_request_duration_seconds", "How long nginx took to answer, from the request's first byte to the response's last.", func(s *routeSeries) *histogram { return &s.request }},
		{"nginx_route_upstream_duration_seconds", "How long the route's Services took to answer, every one tried included.", func(s *routeSeries) *histogram { return &s.upstream }},
	}
	for _, h := range histograms {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", h.name, h.help, h.name)
		for _, k := range q.order {
			if hist := h.of(q.series[k]); hist.count > 0 {
				hist.samples(b, h.name, routeLabels(k))
			}
		}
	}
}

// routeLabels are k's labels in Prometheus' text format.
func routeLabels(k routeKey) string {
	return "server=" + quoteLabel(k.server) + ",route=" + quoteLabel(k.route) + ",service=" + quoteLabel(k.service)
}

// quoteLabel quotes a label value as Prometheus' text format escapes it:
// backslash, double quote and line feed only.
func quoteLabel(v string) string { return `"` + labelEscaper.Replace(v) + `"` }

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
