package clientchecks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// RulesHost is where the request matching locations of Spec redirect: the
// Location header's path names the location that answered.
const RulesHost = "rules.test"

// Closed is the body /m/closed answers with, status 503.
const Closed = "closed for maintenance\n"

// matchLocations are AppHost's locations under /m/, each answering with a
// redirect to RulesHost/<its name> (two proxy to API and Canary): path
// types, header, query and method matches, and their precedence.
func matchLocations(o Options) []v1beta1.Location {
	named := func(name, path, pathType string, m *v1beta1.RequestMatch) v1beta1.Location {
		return v1beta1.Location{Path: path, PathType: pathType, Match: m,
			Redirect: &v1beta1.RedirectLocation{URL: "http://" + RulesHost + "/" + name, Code: http.StatusFound}}
	}
	headers := func(pairs ...string) *v1beta1.RequestMatch {
		m := &v1beta1.RequestMatch{}
		for i := 0; i+1 < len(pairs); i += 2 {
			m.Headers = append(m.Headers, v1beta1.HeaderMatch{Name: pairs[i], Value: pairs[i+1]})
		}
		return m
	}
	const prefix, regex = v1beta1.PathPrefixElements, v1beta1.PathRegularExpression
	return []v1beta1.Location{
		named("exact", "/m/exact", v1beta1.PathExact, nil),
		named("elements", "/m/elements/", prefix, nil),
		named("string", "/m/string", "", nil),
		named("h-two", "/m/h", prefix, headers("Version", "two")),
		// More headers win over fewer, whatever the order of the list.
		named("h-two-orange", "/m/h", prefix, headers("version", "two", "color", "orange")),
		named("h-regex", "/m/h", prefix, &v1beta1.RequestMatch{Headers: []v1beta1.HeaderMatch{
			{Type: v1beta1.MatchRegularExpression, Name: "X-Color", Value: "bl(ue|ack)"}}}),
		named("q-whale", "/m/q", prefix, &v1beta1.RequestMatch{QueryParams: []v1beta1.QueryParamMatch{{Name: "animal", Value: "whale"}}}),
		named("q-id", "/m/q", prefix, &v1beta1.RequestMatch{QueryParams: []v1beta1.QueryParamMatch{
			{Type: v1beta1.MatchRegularExpression, Name: "id", Value: "[0-9]+"}}}),
		// A method wins over query parameters.
		named("q-post", "/m/q", prefix, &v1beta1.RequestMatch{Method: http.MethodPost}),
		// A longer path wins; when its match fails, the shorter answers.
		named("q-deep", "/m/q/deep", prefix, headers("version", "deep")),
		named("r-digits", "/m/r/[0-9]+", regex, nil),
		named("r-put", "/m/r/x.*", regex, &v1beta1.RequestMatch{Method: http.MethodPut}),
		named("r-prefix", "/m/r", prefix, nil),
		{Path: "/m/api", PathType: prefix, Match: headers("X-Canary", "yes"), Proxy: &v1beta1.ProxyLocation{Service: Canary, Port: o.CanaryPort}},
		{Path: "/m/api", PathType: prefix, Proxy: &v1beta1.ProxyLocation{Service: API, Port: o.APIPort}},
		{Path: "/m/closed", PathType: v1beta1.PathExact, Respond: &v1beta1.RespondLocation{Status: http.StatusServiceUnavailable, Body: Closed}},
	}
}

func requestMatching(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	for _, tc := range []struct {
		method, path string
		header       []string
		want         string // the location's name; "" for none of /m/'s (/ answers)
	}{
		{"GET", "/m/exact", nil, "exact"},
		{"GET", "/m/exact/x", nil, ""},
		{"GET", "/m/elements", nil, "elements"},
		{"GET", "/m/elements/", nil, "elements"},
		{"GET", "/m/elements/a/b", nil, "elements"},
		{"GET", "/m/elementsx", nil, ""},
		{"GET", "/m/string", nil, "string"},
		{"GET", "/m/stringy", nil, "string"},
		{"GET", "/m/h", []string{"Version", "two"}, "h-two"},
		{"GET", "/m/h/x", []string{"VERSION", "two"}, "h-two"},
		{"GET", "/m/h", []string{"Version", "TWO"}, ""},
		{"GET", "/m/h", []string{"Version", "two", "Color", "orange"}, "h-two-orange"},
		{"GET", "/m/h", []string{"X-Color", "blue"}, "h-regex"},
		{"GET", "/m/h", []string{"X-Color", "blueberry"}, ""},
		{"GET", "/m/q?animal=whale", nil, "q-whale"},
		{"GET", "/m/q?x=1&animal=whale", nil, "q-whale"},
		{"GET", "/m/q?ANIMAL=whale", nil, ""},
		{"GET", "/m/q?animal=whaleshark", nil, ""},
		{"GET", "/m/q?xanimal=whale", nil, ""},
		{"GET", "/m/q?id=42", nil, "q-id"},
		{"GET", "/m/q?id=4a", nil, ""},
		{"POST", "/m/q?animal=whale", nil, "q-post"},
		{"GET", "/m/q/deep/1", []string{"version", "deep"}, "q-deep"},
		{"GET", "/m/q/deep/1?animal=whale", nil, "q-whale"},
		{"GET", "/m/r/123", nil, "r-digits"},
		{"GET", "/m/r/123/4", nil, "r-prefix"},
		{"PUT", "/m/r/xyz", nil, "r-put"},
		{"GET", "/m/r/xyz", nil, "r-prefix"},
	} {
		resp := send(t, c, tc.method, tg.url("http", AppHost, tc.path), tc.header...)
		got := ""
		if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, "http://"+RulesHost+"/") {
			got = strings.TrimPrefix(loc, "http://"+RulesHost+"/")
		}
		if got != tc.want {
			t.Errorf("%s %s %v: answered by %q (%s), want %q", tc.method, tc.path, tc.header, got, resp.Status, tc.want)
		}
	}
	if resp, body := get(t, c, tg.url("http", AppHost, "/m/closed")); resp.StatusCode != http.StatusServiceUnavailable || body != Closed || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("respond: %s %q (%s), want 503 %q as text/plain", resp.Status, body, resp.Header.Get("Content-Type"), Closed)
	}
	// A proxied location behind a match gets the request's URI as sent.
	for service, header := range map[string][]string{Canary: {"X-Canary", "yes"}, API: nil} {
		_, body := get(t, c, tg.url("http", AppHost, "/m/api/a%2Fb?x=%20"), header...)
		if s := seen(t, body); s.Server != service || s.URI != "/m/api/a%2Fb?x=%20" {
			t.Errorf("header %v: %s saw %q, want %s to see /m/api/a%%2Fb?x=%%20", header, s.Server, s.URI, service)
		}
	}
}

// send sends a request with method and the header name and value pairs and
// returns the answer, its body read.
func send(t *testing.T, c *http.Client, method, url string, header ...string) *http.Response {
	t.Helper()
	resp, _ := do(t, c, request(t.Context(), t, method, url, nil, header...))
	return resp
}
