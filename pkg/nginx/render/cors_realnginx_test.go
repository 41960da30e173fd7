package render

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// TestRealNginxAnswersCORSAsBrowsersExpect: real nginx answers preflights
// itself, with the allowed origin echoed (exactly, by a "*." wildcard over
// several labels, or by "*"), and the methods and headers allowed (a "*"
// echoes what the preflight asks); other responses carry the origin,
// credentials and exposed headers in place of the Service's own; an origin
// not allowed gets no CORS header at all, and its requests still reach the
// Service.
func TestRealNginxAnswersCORSAsBrowsersExpect(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*") // the Service's own, hidden
		w.Header().Set("X-Reached", r.Method)
	}))
	t.Cleanup(backend.Close)
	port := portOf(t, backend.URL)
	proxy := func(path string, c v1beta1.CORS) v1beta1.Location {
		return v1beta1.Location{Path: path, CORS: &c, Proxy: &v1beta1.ProxyLocation{Service: "app", Port: port}}
	}
	c := startBalancing(t,
		proxy("/listed", v1beta1.CORS{AllowOrigins: []string{"https://www.foo.com", "https://*.bar.com"}, AllowCredentials: true,
			AllowMethods: []string{"GET", "OPTIONS"}, AllowHeaders: []string{"x-header-1", "x-header-2"},
			ExposeHeaders: []string{"x-header-3"}, MaxAgeSeconds: 3600}),
		proxy("/any", v1beta1.CORS{AllowOrigins: []string{"*"}, AllowMethods: []string{"*"}, AllowHeaders: []string{"*"}, AllowCredentials: true, MaxAgeSeconds: 5}),
	)
	const (
		origin      = "Access-Control-Allow-Origin"
		credentials = "Access-Control-Allow-Credentials"
		methods     = "Access-Control-Allow-Methods"
		headers     = "Access-Control-Allow-Headers"
		expose      = "Access-Control-Expose-Headers"
		maxAge      = "Access-Control-Max-Age"
		reached     = "X-Reached"
	)
	for _, tc := range []struct {
		name, method, path string
		request            map[string]string
		status             int
		want               map[string]string
	}{
		{"preflight from a listed origin", "OPTIONS", "/listed", map[string]string{"Origin": "https://www.foo.com", "Access-Control-Request-Method": "GET"}, 204,
			map[string]string{origin: "https://www.foo.com", credentials: "true", methods: "GET, OPTIONS", headers: "x-header-1, x-header-2", expose: "x-header-3", maxAge: "3600"}},
		{"preflight from labels under a wildcard", "OPTIONS", "/listed", map[string]string{"Origin": "https://a.www.BAR.com", "Access-Control-Request-Method": "GET"}, 204,
			map[string]string{origin: "https://a.www.BAR.com", credentials: "true", methods: "GET, OPTIONS", headers: "x-header-1, x-header-2", expose: "x-header-3", maxAge: "3600"}},
		{"preflight from the wildcard's own name", "OPTIONS", "/listed", map[string]string{"Origin": "https://bar.com", "Access-Control-Request-Method": "GET"}, 204, map[string]string{}},
		{"preflight from an origin with another port", "OPTIONS", "/listed", map[string]string{"Origin": "https://www.foo.com:8443", "Access-Control-Request-Method": "GET"}, 204, map[string]string{}},
		{"preflight from anywhere, wildcards echo the request", "OPTIONS", "/any",
			map[string]string{"Origin": "https://x.test:12345", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-a, x-b"}, 204,
			map[string]string{origin: "https://x.test:12345", credentials: "true", methods: "PUT", headers: "x-a, x-b", maxAge: "5"}},
		{"a request from a listed origin", "GET", "/listed", map[string]string{"Origin": "https://www.foo.com"}, 200,
			map[string]string{origin: "https://www.foo.com", credentials: "true", expose: "x-header-3", reached: "GET"}},
		{"a request from an origin not listed", "GET", "/listed", map[string]string{"Origin": "https://foobar.com"}, 200, map[string]string{reached: "GET"}},
		{"OPTIONS that is no preflight reaches the Service", "OPTIONS", "/listed", map[string]string{"Origin": "https://www.foo.com"}, 200,
			map[string]string{origin: "https://www.foo.com", credentials: "true", expose: "x-header-3", reached: "OPTIONS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, c.base+tc.path, nil)
			tools.Must(t, err)
			for k, v := range tc.request {
				req.Header.Set(k, v)
			}
			resp, _ := fetch(t, c.proc, &http.Client{Timeout: 10 * time.Second}, req)
			got := map[string]string{}
			for _, name := range []string{origin, credentials, methods, headers, expose, maxAge, reached} {
				if v := resp.Header.Values(name); len(v) > 0 {
					got[name] = strings.Join(v, " | ")
				}
			}
			if diff := cmp.Diff(tc.want, got); resp.StatusCode != tc.status || diff != "" {
				t.Errorf("%s %s: status %d (want %d), CORS headers (-want +got):\n%s", tc.method, tc.path, resp.StatusCode, tc.status, diff)
			}
		})
	}
}
