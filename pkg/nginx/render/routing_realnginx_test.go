package render

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// echoed is what the echo upstream saw of a request.
type echoed struct {
	Name    string
	Path    string // as sent on the request line
	Host    string
	Headers http.Header
}

// echoUpstream answers with what it saw as JSON, sleeps for ?sleep=<duration>
// first, echoes WebSocket messages on /ws, and sends X-Powered-By and
// Cache-Control for the response header filters to act on.
func echoUpstream(name string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ws", websocket.Handler(func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
			time.Sleep(d)
		}
		w.Header().Set("X-Powered-By", "echo")
		w.Header().Set("Cache-Control", "public, max-age=600")
		if code, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
			w.WriteHeader(code)
		}
		_ = json.NewEncoder(w).Encode(echoed{Name: name, Path: r.RequestURI, Host: r.Host, Headers: r.Header})
	})
	return mux
}

func portOf(t *testing.T, url string) int32 {
	t.Helper()
	p, err := strconv.Atoi(url[strings.LastIndex(url, ":")+1:])
	tools.Must(t, err)
	return int32(p)
}

// TestRealNginxRoutesAsGatewayAPIDescribes runs the real nginx with every
// routing field and checks what a client and the Services see: WebSocket
// upgrades, redirects that keep path and query, prefix rewrites, request and
// response header filters, weighted backends, backend TLS, timeouts, a
// single-page application's fallback and a custom error page. test/realpods
// proves the same through a pod and its Service.
func TestRealNginxRoutesAsGatewayAPIDescribes(t *testing.T) {
	nginxBin := tools.Require(t, "nginx", "apt-get install -y nginx")
	stable := httptest.NewServer(echoUpstream("stable"))
	defer stable.Close()
	canary := httptest.NewServer(echoUpstream("canary"))
	defer canary.Close()
	secure := httptest.NewTLSServer(echoUpstream("secure")) // certificate for example.com
	defer secure.Close()

	httpPort, healthPort := int32(tools.Port(t)), int32(tools.Port(t))
	svc := func(u *httptest.Server) (string, int32) { return "svc", portOf(t, u.URL) }
	stableName, stablePort := svc(stable)
	_, canaryPort := svc(canary)
	_, securePort := svc(secure)
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: httpPort}},
		Config: v1beta1.NginxConfig{TrustedProxies: []string{"127.0.0.2/32"}, Servers: []v1beta1.Server{
			{Port: "http", ServerNames: []string{"plain.test"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{}},
			{
				Port: "http", ServerNames: []string{"app.test"}, DefaultServer: true,
				ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/errors/404.html"}},
				Locations: []v1beta1.Location{
					{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}},
					{Path: "/files/", Static: &v1beta1.StaticLocation{}, Expires: "1h"},
					{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: stableName, Port: stablePort, ReadTimeoutSeconds: 2,
						URLRewrite: &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/v2")}}},
						RequestHeaders: &v1beta1.HeaderModifier{
							Set:    []v1beta1.Header{{Name: "X-Team", Value: "a"}},
							Add:    []v1beta1.Header{{Name: "X-Via", Value: "nginx"}},
							Remove: []string{"X-Debug"},
						},
						ResponseHeaders: &v1beta1.HeaderModifier{
							Set:    []v1beta1.Header{{Name: "Cache-Control", Value: "no-store"}},
							Remove: []string{"X-Powered-By"},
						},
					},
					{Path: "/ws", Proxy: &v1beta1.ProxyLocation{Service: stableName, Port: stablePort}},
					{Path: "/split/", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{
						{Service: stableName, Port: stablePort, Weight: ptr.To[int32](3)},
						{Service: stableName, Port: canaryPort, Weight: ptr.To[int32](1)},
					}}},
					{Path: "/secure/", Proxy: &v1beta1.ProxyLocation{Service: stableName, Port: securePort, TLS: &v1beta1.BackendTLS{
						Hostname: "example.com", CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "secure-ca"},
					}}},
					{Path: "/old/", Redirect: &v1beta1.RedirectLocation{Hostname: "new.test", Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/new/")}, Code: 301}},
					{Path: "/secure-me/", Redirect: &v1beta1.RedirectLocation{Scheme: "https"}},
				},
			},
		}},
	}
	admitted := validationtest.Spec(t, spec)
	content := map[string]string{"index.html": "<h1>app</h1>\n", "files/a.txt": "a\n", "errors/404.html": "<h1>not here</h1>\n"}
	proc := startRendered(t, nginxBin, admitted, healthPort, content, func(paths Paths) {
		// The secure upstream's own certificate is the CA nginx trusts.
		caFile := paths.CAFile(*admitted.Config.Servers[1].Locations[5].Proxy.TLS.CACertificate)
		tools.Must(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o644))
	})

	addr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// The trusted hop: the same loopback, from another source address.
	trustedHop := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext,
	}}
	doWith := func(client *http.Client, host, path string, header http.Header) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		tools.Must(t, err)
		req.Host = host
		for k, v := range header {
			req.Header[k] = v
		}
		return fetch(t, proc, client, req)
	}
	do := func(host, path string, header http.Header) (*http.Response, string) {
		t.Helper()
		return doWith(client, host, path, header)
	}
	upstreamSaw := func(body string) echoed {
		t.Helper()
		var e echoed
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("not the upstream's answer: %q", body)
		}
		return e
	}

	do("app.test", "/", nil) // nginx is up

	t.Run("redirectToHTTPS keeps host, path and query", func(t *testing.T) {
		resp, _ := do("plain.test", "/a/b?c=d", nil)
		if resp.StatusCode != 308 || resp.Header.Get("Location") != "https://plain.test/a/b?c=d" {
			t.Errorf("got %d Location %q, want 308 https://plain.test/a/b?c=d", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("redirect replaces the prefix and keeps the rest", func(t *testing.T) {
		for path, want := range map[string]string{
			"/old/x/y?z=1": "http://new.test:" + strconv.Itoa(int(httpPort)) + "/new/x/y?z=1",
			"/old/":        "http://new.test:" + strconv.Itoa(int(httpPort)) + "/new/",
		} {
			resp, _ := do("app.test", path, nil)
			if resp.StatusCode != 301 || resp.Header.Get("Location") != want {
				t.Errorf("%s: got %d Location %q, want 301 %s", path, resp.StatusCode, resp.Header.Get("Location"), want)
			}
		}
		resp, _ := do("app.test", "/secure-me/p?q=%0d%0aSet-Cookie:x", nil)
		if want := "https://app.test/secure-me/p?q=%0d%0aSet-Cookie:x"; resp.Header.Get("Location") != want || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("scheme redirect: Location %q Set-Cookie %q, want %s and none", resp.Header.Get("Location"), resp.Header.Get("Set-Cookie"), want)
		}
	})
	t.Run("prefix rewrite and request headers reach the Service", func(t *testing.T) {
		resp, body := do("app.test:8080", "/api/users?id=7", http.Header{"X-Debug": {"1"}, "X-Via": {"client"}})
		e := upstreamSaw(body)
		if e.Path != "/v2/users?id=7" {
			t.Errorf("the Service saw %q, want /v2/users?id=7", e.Path)
		}
		if e.Host != "app.test:8080" || e.Headers.Get("X-Forwarded-Host") != "app.test:8080" || e.Headers.Get("X-Forwarded-Proto") != "http" {
			t.Errorf("Host %q X-Forwarded-Host %q X-Forwarded-Proto %q, want the client's host with its port, and http",
				e.Host, e.Headers.Get("X-Forwarded-Host"), e.Headers.Get("X-Forwarded-Proto"))
		}
		if e.Headers.Get("X-Team") != "a" || e.Headers.Get("X-Via") != "client,nginx" || e.Headers.Get("X-Debug") != "" {
			t.Errorf("X-Team %q X-Via %q X-Debug %q, want a, client,nginx and none", e.Headers.Get("X-Team"), e.Headers.Get("X-Via"), e.Headers.Get("X-Debug"))
		}
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("X-Powered-By") != "" {
			t.Errorf("response Cache-Control %q X-Powered-By %q, want no-store and none", resp.Header.Get("Cache-Control"), resp.Header.Get("X-Powered-By"))
		}
		_, body = do("app.test", "/api/users", http.Header{"X-Forwarded-Proto": {"https"}})
		if e := upstreamSaw(body); e.Headers.Get("X-Forwarded-Proto") != "http" || e.Headers.Get("X-Via") != "nginx" {
			t.Errorf("an untrusted client's X-Forwarded-Proto reached the Service (%q), or X-Via without a client value is %q",
				e.Headers.Get("X-Forwarded-Proto"), e.Headers.Get("X-Via"))
		}
	})
	t.Run("a trusted hop's forwarded headers are kept", func(t *testing.T) {
		_, body := doWith(trustedHop, "app.test", "/api/", http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"203.0.113.9"}})
		e := upstreamSaw(body)
		if e.Headers.Get("X-Forwarded-Proto") != "https" || e.Headers.Get("X-Forwarded-Port") != "443" || e.Headers.Get("X-Forwarded-For") != "203.0.113.9, 127.0.0.2" {
			t.Errorf("X-Forwarded-Proto %q -Port %q -For %q, want https, 443 and 203.0.113.9, 127.0.0.2",
				e.Headers.Get("X-Forwarded-Proto"), e.Headers.Get("X-Forwarded-Port"), e.Headers.Get("X-Forwarded-For"))
		}
		_, body = do("app.test", "/api/", http.Header{"X-Forwarded-For": {"203.0.113.9"}})
		if e := upstreamSaw(body); e.Headers.Get("X-Forwarded-For") != "127.0.0.1" {
			t.Errorf("an untrusted client's X-Forwarded-For: the Service saw %q, want 127.0.0.1", e.Headers.Get("X-Forwarded-For"))
		}
	})
	t.Run("read timeout", func(t *testing.T) {
		if resp, _ := do("app.test", "/api/?sleep=1s", nil); resp.StatusCode != 200 {
			t.Errorf("1 s answer with a 2 s read timeout: %d", resp.StatusCode)
		}
		if resp, _ := do("app.test", "/api/?sleep=3s", nil); resp.StatusCode != 504 {
			t.Errorf("3 s answer with a 2 s read timeout: %d, want 504", resp.StatusCode)
		}
	})
	t.Run("weighted split", func(t *testing.T) {
		counts := map[string]int{}
		for range 40 {
			_, body := do("app.test", "/split/", nil)
			counts[upstreamSaw(body).Name]++
		}
		// nginx's smooth weighted round robin is exact per cycle of 4.
		if counts["stable"] != 30 || counts["canary"] != 10 {
			t.Errorf("40 requests at 3:1 went %v", counts)
		}
	})
	t.Run("backend TLS verified against the CA", func(t *testing.T) {
		resp, body := do("app.test", "/secure/x", nil)
		if resp.StatusCode != 200 || upstreamSaw(body).Name != "secure" {
			t.Errorf("https Service: %d %q", resp.StatusCode, body)
		}
	})
	t.Run("WebSocket round trips", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		tools.Must(t, err)
		defer conn.Close()
		wsCfg, err := websocket.NewConfig("ws://app.test/ws", "http://app.test/")
		tools.Must(t, err)
		ws, err := websocket.NewClient(wsCfg, conn)
		if err != nil {
			t.Fatalf("upgrade through nginx: %v", err)
		}
		for _, msg := range []string{"one", "two"} {
			tools.Must(t, websocket.Message.Send(ws, msg))
			var got string
			tools.Must(t, websocket.Message.Receive(ws, &got))
			if got != msg {
				t.Errorf("echo %q, want %q", got, msg)
			}
		}
	})
	t.Run("static: SPA fallback, error page, expires", func(t *testing.T) {
		if resp, body := do("app.test", "/deep/link", nil); resp.StatusCode != 200 || body != "<h1>app</h1>\n" {
			t.Errorf("deep link: %d %q, want the index", resp.StatusCode, body)
		}
		if resp, body := do("app.test", "/files/missing", nil); resp.StatusCode != 404 || body != "<h1>not here</h1>\n" {
			t.Errorf("missing file: %d %q, want 404 with the custom page", resp.StatusCode, body)
		}
		if resp, _ := do("app.test", "/files/a.txt", nil); resp.Header.Get("Cache-Control") != "max-age=3600" {
			t.Errorf("expires 1h: Cache-Control %q", resp.Header.Get("Cache-Control"))
		}
	})
}
