package clientchecks

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/nginx-operator/nginx-operator/test/echo"
)

func redirectToHTTPS(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	for _, tc := range []struct{ host, hostHeader, want string }{
		// Without a port of its own, the redirect names the Service port
		// of the TLS port (Spec sets it to HTTPSPort); 443 would be left
		// out.
		{PlainHost, PlainHost, fmt.Sprintf("https://%s:%d/a/b?c=d", PlainHost, tg.HTTPSPort)},
		// A client on a port of its own sends it in Host; the redirect
		// names the https port instead.
		{TLSOnlyHost, net.JoinHostPort(TLSOnlyHost, strconv.Itoa(int(tg.HTTPPort))), fmt.Sprintf("https://%s:%d/a/b?c=d", TLSOnlyHost, tg.HTTPSPort)},
	} {
		resp, _ := get(t, c, tg.url("http", tc.host, "/a/b?c=d"), "Host", tc.hostHeader)
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != tc.want {
			t.Errorf("Host %s: %s Location %q, want 308 %s", tc.hostHeader, resp.Status, resp.Header.Get("Location"), tc.want)
		}
	}
}

func redirectReplacesPrefix(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	for path, want := range map[string]string{
		"/old/x/y?z=1": fmt.Sprintf("http://%s:%d/new/x/y?z=1", NewHost, tg.HTTPPort),
		"/old/":        fmt.Sprintf("http://%s:%d/new/", NewHost, tg.HTTPPort),
	} {
		resp, _ := get(t, c, tg.url("http", AppHost, path), "Host", AppHost)
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != want {
			t.Errorf("%s: %s Location %q, want 301 %s", path, resp.Status, resp.Header.Get("Location"), want)
		}
	}
	// A redirect that changes nothing: a 303 sends a POST's client to GET
	// the same URL (Gateway API's RequestRedirect with a statusCode only).
	req, err := http.NewRequest(http.MethodPost, tg.url("http", AppHost, "/see-other?n=1"), strings.NewReader("x=1"))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = AppHost
	if resp, err := c.Do(req); err != nil {
		t.Errorf("POST /see-other: %v", err)
	} else {
		resp.Body.Close()
		if want := fmt.Sprintf("http://%s:%d/see-other?n=1", AppHost, tg.HTTPPort); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("POST /see-other: %s Location %q, want 303 %s", resp.Status, resp.Header.Get("Location"), want)
		}
	}
	// The query is kept as sent: an encoded CR LF stays encoded.
	resp, _ := get(t, c, tg.url("http", AppHost, "/secure-me/p?q=%0d%0aSet-Cookie:x"), "Host", AppHost)
	if want := "https://" + AppHost + "/secure-me/p?q=%0d%0aSet-Cookie:x"; resp.Header.Get("Location") != want || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("scheme redirect: Location %q Set-Cookie %q, want %s and none", resp.Header.Get("Location"), resp.Header.Get("Set-Cookie"), want)
	}
}

func rewriteAndHeaders(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	for _, scheme := range []string{"http", "https"} {
		url := tg.url(scheme, AppHost, "/api/users?id=7")
		resp, body := get(t, c, url, "X-Debug", "1", "X-Via", "client")
		s := seen(t, body)
		if s.URI != "/v2/users?id=7" {
			t.Errorf("%s: the Service saw %q, want /v2/users?id=7", scheme, s.URI)
		}
		// The client's Host, port included.
		host := resp.Request.URL.Host
		if s.Host != host || s.Headers.Get("X-Forwarded-Host") != host || s.Headers.Get("X-Forwarded-Proto") != scheme {
			t.Errorf("%s: Host %q X-Forwarded-Host %q X-Forwarded-Proto %q, want %s, %s and %s",
				scheme, s.Host, s.Headers.Get("X-Forwarded-Host"), s.Headers.Get("X-Forwarded-Proto"), host, host, scheme)
		}
		if s.Headers.Get("X-Team") != "a" || s.Headers.Get("X-Via") != "client,nginx" || s.Headers.Get("X-Debug") != "" {
			t.Errorf("%s: X-Team %q X-Via %q X-Debug %q, want a, client,nginx and none", scheme, s.Headers.Get("X-Team"), s.Headers.Get("X-Via"), s.Headers.Get("X-Debug"))
		}
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("X-Powered-By") != "" {
			t.Errorf("%s: response Cache-Control %q X-Powered-By %q, want the Service's replaced by no-store and none",
				scheme, resp.Header.Get("Cache-Control"), resp.Header.Get("X-Powered-By"))
		}
	}
	_, body := get(t, c, tg.url("http", AppHost, "/api/users"), "X-Forwarded-Proto", "https")
	if s := seen(t, body); s.Headers.Get("X-Forwarded-Proto") != "http" || s.Headers.Get("X-Via") != "nginx" {
		t.Errorf("an untrusted client's X-Forwarded-Proto reached the Service (%q), or X-Via without a client value is %q",
			s.Headers.Get("X-Forwarded-Proto"), s.Headers.Get("X-Via"))
	}
}

// Of splitRequests requests to /split/ on new connections, the canary must
// get its weight's share ± splitTolerance: smooth weighted round robin is
// exact per worker process, and the two workers each take a share of the
// connections, so the total can be off by a few.
const (
	splitRequests  = 200
	splitTolerance = 6
)

func weightedSplit(t *testing.T, tg *Target) {
	wantCanary := splitRequests * int(splitWeights[Canary]) / int(splitWeights[API]+splitWeights[Canary])
	// One connection is one worker's: the split is exact.
	oneConnection := tg.client(Untrusted)
	transport(oneConnection).DisableKeepAlives = false
	url := tg.url("http", AppHost, "/split/")
	if counts := split(t, oneConnection, url); counts[Canary] != wantCanary || counts[API] != splitRequests-wantCanary {
		t.Errorf("%d requests at %v on one connection went %v, want exactly %d to %s", splitRequests, splitWeights, counts, wantCanary, Canary)
	}
	counts := split(t, tg.client(Untrusted), url)
	if c := counts[Canary]; c < wantCanary-splitTolerance || c > wantCanary+splitTolerance || c+counts[API] != splitRequests {
		t.Errorf("%d requests at %v went %v, want %s %d ± %d", splitRequests, splitWeights, counts, Canary, wantCanary, splitTolerance)
	}
	t.Logf("%d requests at %v on new connections: %v", splitRequests, splitWeights, counts)
}

// split sends splitRequests requests for url with c and counts them by the
// Service that answered.
func split(t *testing.T, c *http.Client, url string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for range splitRequests {
		_, body := get(t, c, url)
		counts[seen(t, body).Server]++
	}
	return counts
}

func backendTLS(t *testing.T, tg *Target) {
	resp, body := get(t, tg.client(Untrusted), tg.url("http", AppHost, "/secure/x"))
	if s := seen(t, body); resp.StatusCode != http.StatusOK || s.Server != Secure || !s.TLS {
		t.Errorf("the https Service: %s %q, want 200 from %s over TLS", resp.Status, body, Secure)
	}
}

func static(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	for _, scheme := range []string{"http", "https"} {
		if resp, body := get(t, c, tg.url(scheme, AppHost, "/orders/42")); resp.StatusCode != http.StatusOK || body != tg.Content["index.html"] {
			t.Errorf("%s: a deep link: %s %q, want the index", scheme, resp.Status, body)
		}
		if resp, body := get(t, c, tg.url(scheme, AppHost, "/files/missing.txt")); resp.StatusCode != http.StatusNotFound || body != tg.Content["404.html"] {
			t.Errorf("%s: a missing file: %s %q, want 404 with the custom page", scheme, resp.Status, body)
		}
	}
	if resp, _ := get(t, c, tg.url("http", AppHost, "/cached.txt")); resp.Header.Get("Cache-Control") != "max-age=3600" {
		t.Errorf("expires 1h: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
}

// readTimeouts waits for half the long read timeout: /api/ answers, /short/
// gives up with 504, and answers within the short timeout.
func readTimeouts(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	c.Timeout = tg.LongReadTimeout + 30*time.Second
	slow, fast := tg.LongReadTimeout/2, tg.ShortReadTimeout/2
	var wg sync.WaitGroup
	for _, tc := range []struct {
		path  string
		sleep time.Duration
		want  int
	}{{"/api/", slow, http.StatusOK}, {"/short/", slow, http.StatusGatewayTimeout}, {"/short/", fast, http.StatusOK}} {
		wg.Go(func() {
			began := time.Now()
			resp, body, err := fetch(t.Context(), c, tg.url("http", AppHost, fmt.Sprintf("%s?sleep=%s", tc.path, tc.sleep)))
			s, _ := echo.Decode(body)
			switch {
			case err != nil:
				t.Errorf("%s answering after %s: %v", tc.path, tc.sleep, err)
			case resp.StatusCode != tc.want || tc.want == http.StatusOK && s.Server != API:
				t.Errorf("%s answering after %s: %s %q, want %d", tc.path, tc.sleep, resp.Status, body, tc.want)
			default:
				t.Logf("%s answering after %s: %s after %s", tc.path, tc.sleep, resp.Status, time.Since(began).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
}

// webSockets upgrade through nginx over http and https and echo a message
// at once and after idling for half the read timeout of /ws.
func webSockets(t *testing.T, tg *Target) {
	conns := map[string]*websocket.Conn{"ws": tg.webSocket(t, false), "wss": tg.webSocket(t, true)}
	for i, msg := range []string{"first", "after idling"} {
		if i == 1 {
			time.Sleep(tg.LongReadTimeout / 2) // the connections stay idle: what is tested
		}
		for scheme, ws := range conns {
			var got string
			if err := websocket.Message.Send(ws, msg); err != nil {
				t.Fatalf("%s: send %q: %v", scheme, msg, err)
			}
			if err := websocket.Message.Receive(ws, &got); err != nil || got != msg {
				t.Errorf("%s: echo of %q: %q, %v", scheme, msg, got, err)
			}
		}
	}
}

// webSocket is a WebSocket to /ws of AppHost, over TLS when secure.
func (tg *Target) webSocket(t *testing.T, secure bool) *websocket.Conn {
	t.Helper()
	scheme, port := "ws", tg.HTTPPort
	if secure {
		scheme, port = "wss", tg.HTTPSPort
	}
	conn, err := tg.Dial(t.Context(), Untrusted, port)
	if err != nil {
		t.Fatalf("dial %s: %v", scheme, err)
	}
	if secure {
		cfg := tg.TLS.Clone()
		cfg.ServerName = AppHost
		conn = tls.Client(conn, cfg)
	}
	cfg, err := websocket.NewConfig(scheme+"://"+AppHost+"/ws", "http://"+AppHost+"/")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := websocket.NewClient(cfg, conn)
	if err != nil {
		conn.Close()
		t.Fatalf("%s upgrade through nginx: %v", scheme, err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}
