package render

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// countRequests binds a reloader's request address for the nginx prepare
// starts: set as startRendered's prepare, it points the configuration at
// it. Requests are counted until the test ends.
func countRequests(t *testing.T) (*reloader.Requests, func(*Paths)) {
	t.Helper()
	conn, err := reloader.ListenRequests("127.0.0.1:0")
	tools.Must(t, err)
	requests := reloader.NewRequests()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- requests.Serve(ctx, conn) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	address := conn.LocalAddr().String()
	return requests, func(p *Paths) { p.RequestLog = address }
}

// requestSamples are the request metrics requests would serve, by series.
func requestSamples(t *testing.T, requests *reloader.Requests) map[string]float64 {
	t.Helper()
	r := reloader.New(reloader.Options{})
	r.Requests = requests
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(bytes.NewReader(r.Metrics()))
	tools.Must(t, err)
	out := map[string]float64{}
	for _, family := range parsed {
		vector, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, family)
		tools.Must(t, err)
		for _, s := range vector {
			out[s.Metric.String()] = float64(s.Value)
		}
	}
	return out
}

// TestRealNginxCountsEveryRequestByRouteForTheReloader: nginx, with the
// rendered configuration, sends a line per request to the reloader's
// socket, and the reloader's counts are exact at a rate it keeps up with:
// by server, by route (a location's name, or its path, a regular
// expression's '$' included), by Service and by status class; a location
// whose access log is off still counts; the upstream histogram counts the
// proxied requests only; no line is malformed.
func TestRealNginxCountsEveryRequestByRouteForTheReloader(t *testing.T) {
	nginxBin := tools.Nginx(t)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("fail") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer shop.Close()
	port := int32(tools.Port(t))
	spec := validationtest.Spec(t, v1beta1.NginxOperatorSpec{
		Ports:   []v1beta1.Port{{Name: "http", ContainerPort: port}},
		Metrics: v1beta1.MetricsSpec{Enabled: true},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", ServerNames: []string{"app.test"}, Locations: []v1beta1.Location{
			{Path: "/api/", Name: "checkout", Proxy: &v1beta1.ProxyLocation{Service: "shop", Port: portOf(t, shop.URL)}},
			{Path: `^/v[0-9]+/items$`, PathType: v1beta1.PathRegularExpression, Respond: &v1beta1.RespondLocation{Status: 204}},
			{Path: "/healthz", Exact: true, DisableAccessLog: true, Respond: &v1beta1.RespondLocation{Status: 200, Body: "ok"}},
			{Path: "/", Static: &v1beta1.StaticLocation{}},
		}}}},
	})
	requests, prepare := countRequests(t)
	proc := startRendered(t, nginxBin, spec, int32(tools.Port(t)), map[string]string{"index.html": "home"}, prepare)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 5 * time.Second}
	send := func(path string, n int) {
		for range n {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			tools.Must(t, err)
			req.Host = "app.test"
			fetch(t, proc, client, req)
		}
	}
	send("/api/cart", 40)
	send("/api/cart?fail", 7)
	send("/v2/items", 11)
	send("/healthz", 5)
	send("/", 13)
	send("/missing", 3)
	const sent = 40 + 7 + 11 + 5 + 13 + 3

	series := func(name, route, service, status string) string {
		return fmt.Sprintf(`%s{route=%q, server="app.test", service=%q, status=%q}`, name, route, service, status)
	}
	want := map[string]float64{
		series("nginx_route_requests_total", "checkout", "shop", "2xx"):                                    40,
		series("nginx_route_requests_total", "checkout", "shop", "5xx"):                                    7,
		series("nginx_route_requests_total", `^/v[0-9]+/items$`, "", "2xx"):                                11,
		series("nginx_route_requests_total", "/healthz", "", "2xx"):                                        5,
		series("nginx_route_requests_total", "/", "", "2xx"):                                               13,
		series("nginx_route_requests_total", "/", "", "4xx"):                                               3,
		`nginx_route_upstream_duration_seconds_count{route="checkout", server="app.test", service="shop"}`: 47,
		`reloader_request_lines_malformed_total`:                                                           0,
	}
	var got map[string]float64
	total := 0.0
	deadline := time.Now().Add(5 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got, total = requestSamples(t, requests), 0
		for name, v := range got {
			if strings.HasPrefix(name, "nginx_route_requests_total{") {
				total += v
			}
		}
		if total >= sent {
			break
		}
	}
	if total != sent {
		t.Errorf("the reloader counted %v requests, want the %d sent", total, sent)
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
	for name := range got {
		if strings.HasPrefix(name, "nginx_route_upstream_duration_seconds_count") && !strings.Contains(name, "checkout") {
			t.Errorf("%s: a route no Service answers has no upstream duration", name)
		}
	}
	if t.Failed() {
		t.Logf("samples: %v", got)
	}
}
