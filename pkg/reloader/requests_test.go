package reloader

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// line is a datagram as nginx's syslog client sends it with nohostname.
func line(fields ...string) []byte {
	return []byte("<190>Nov 28 15:46:03 nginx: " + strings.Join(fields, "\t"))
}

func TestParseRequestLineReadsNginxsFieldsAndRefusesAnythingElse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		datagram []byte
		want     requestLine
		ok       bool
	}{
		{"proxied", line("app.test", "api", "shop", "200", "0.012", "0.011"),
			requestLine{key: routeKey{"app.test", "api", "shop"}, class: 1, requestTime: 0.012, upstream: true, upstreamTime: 0.011}, true},
		{"retried on two endpoints and redirected to another upstream", line("app.test", "api", "shop", "502", "1.500", "0.500, 0.250 : 0.125"),
			requestLine{key: routeKey{"app.test", "api", "shop"}, class: 4, requestTime: 1.5, upstream: true, upstreamTime: 0.875}, true},
		{"no upstream, unset variables", line("", "-", "-", "404", "0.000", "-"),
			requestLine{key: routeKey{"", "", ""}, class: 3, requestTime: 0}, true},
		{"escaped quote, backslash and tab in a route", line("_", `^/a\x22b\x5C\x09$`, "", "301", "0.001", ""),
			requestLine{key: routeKey{"_", "^/a\"b\\\t$", ""}, class: 2, requestTime: 0.001}, true},
		{"an incomplete escape stays as it is", line("_", `/a\x2`, "", "200", "0", ""),
			requestLine{key: routeKey{"_", `/a\x2`, ""}, class: 1}, true},
		{"a trailing line feed", append(line("s", "r", "", "101", "2.000", "-"), '\n'),
			requestLine{key: routeKey{"s", "r", ""}, class: 0, requestTime: 2}, true},
		{"five fields", line("s", "r", "", "200", "0.1"), requestLine{}, false},
		{"seven fields", line("s", "r", "", "200", "0.1", "-", "x"), requestLine{}, false},
		{"status out of range", line("s", "r", "", "600", "0.1", "-"), requestLine{}, false},
		{"status not a number", line("s", "r", "", "2xx", "0.1", "-"), requestLine{}, false},
		{"time not a number", line("s", "r", "", "200", "fast", "-"), requestLine{}, false},
		{"no syslog header", []byte("s\tr\t\t200\t0.1\t-"), requestLine{}, false},
		{"empty", nil, requestLine{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRequestLine(tc.datagram)
			if ok != tc.ok {
				t.Fatalf("parseRequestLine(%q) ok = %v, want %v", tc.datagram, ok, tc.ok)
			}
			if ok {
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(requestLine{}, routeKey{})); diff != "" {
					t.Errorf("parseRequestLine(%q) (-want +got):\n%s", tc.datagram, diff)
				}
			}
		})
	}
}

// families parses what Metrics writes as Prometheus does.
func families(t *testing.T, text []byte) map[string]*model.Sample {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus cannot read the metrics: %v\n%s", err, text)
	}
	out := map[string]*model.Sample{}
	vector, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, mapValues(parsed)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range vector {
		out[s.Metric.String()] = s
	}
	return out
}

func TestRequestsCountsByLabelsAndStatusClassInPrometheusTextFormat(t *testing.T) {
	q := NewRequests()
	for range 3 {
		q.Count(line("app.test", "api", "shop", "200", "0.020", "0.019"))
	}
	q.Count(line("app.test", "api", "shop", "503", "0.300", "0.300"))
	q.Count(line("app.test", `/a"b\c`, "", "404", "0.000", "-"))
	q.Count([]byte("garbage"))
	var b bytes.Buffer
	q.write(&b)
	got := families(t, b.Bytes())
	want := map[string]float64{
		`nginx_route_requests_total{route="api", server="app.test", service="shop", status="2xx"}`:                3,
		`nginx_route_requests_total{route="api", server="app.test", service="shop", status="5xx"}`:                1,
		`nginx_route_requests_total{route="/a\"b\\c", server="app.test", service="", status="4xx"}`:               1,
		`nginx_route_request_duration_seconds_bucket{le="0.025", route="api", server="app.test", service="shop"}`: 3,
		`nginx_route_request_duration_seconds_bucket{le="0.5", route="api", server="app.test", service="shop"}`:   4,
		`nginx_route_request_duration_seconds_count{route="api", server="app.test", service="shop"}`:              4,
		`nginx_route_request_duration_seconds_count{route="/a\"b\\c", server="app.test", service=""}`:             1,
		`nginx_route_upstream_duration_seconds_count{route="api", server="app.test", service="shop"}`:             4,
		`nginx_route_upstream_duration_seconds_bucket{le="0.01", route="api", server="app.test", service="shop"}`: 0,
		`reloader_request_lines_malformed_total`:                                                                  1,
	}
	for series, v := range want {
		s, ok := got[series]
		if !ok {
			t.Errorf("no series %s in:\n%s", series, b.String())
			continue
		}
		if float64(s.Value) != v {
			t.Errorf("%s = %v, want %v", series, s.Value, v)
		}
	}
	// A route no Service answered has no upstream histogram, and a class
	// with no request no counter.
	for series := range got {
		if strings.Contains(series, "nginx_route_upstream_duration") && strings.Contains(series, `route="/a`) ||
			strings.Contains(series, `status="3xx"`) {
			t.Errorf("unexpected series %s", series)
		}
	}
}

func TestRequestsCountsLabelSetsBeyondTheBoundAsOther(t *testing.T) {
	q := NewRequests()
	for i := range MaxRouteSeries + 10 {
		q.Count(line("s", fmt.Sprintf("r%d", i), "", "200", "0", "-"))
	}
	q.Count(line("s", "r0", "", "200", "0", "-"))
	var b bytes.Buffer
	q.write(&b)
	got := families(t, b.Bytes())
	series := 0
	for name := range got {
		if strings.HasPrefix(name, "nginx_route_requests_total") {
			series++
		}
	}
	if series != MaxRouteSeries+1 {
		t.Errorf("%d series of nginx_route_requests_total, want %d and the overflow's", series, MaxRouteSeries)
	}
	other := `nginx_route_requests_total{route="_other", server="_other", service="_other", status="2xx"}`
	if s := got[other]; s == nil || s.Value != 10 {
		t.Errorf("%s = %v, want the 10 requests beyond the bound", other, s)
	}
	if s := got[`nginx_route_requests_total{route="r0", server="s", service="", status="2xx"}`]; s == nil || s.Value != 2 {
		t.Errorf("r0 = %v, want 2: a known label set keeps counting", s)
	}
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
