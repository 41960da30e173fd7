package realpods

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// seen is the test server's description of a request as it received it.
type seen struct {
	Server  string      `json:"server"`
	TLS     bool        `json:"tls"`
	URI     string      `json:"uri"`
	Host    string      `json:"host"`
	Headers http.Header `json:"headers"`
}

// Canary tolerance: of routingSplitRequests requests at 90/10 the canary
// must get routingSplitCanary ± routingSplitTolerance. nginx's smooth
// weighted round robin is exact per worker process; the pod's two workers
// each take a share of the requests, so the total can be off by a few.
const (
	routingSplitRequests  = 200
	routingSplitCanary    = 20
	routingSplitTolerance = 6
)

// An NginxOperator routes as a client expects, seen through its Service from
// the node: a WebSocket echo (also after 30 s idle), an HTTP → HTTPS redirect
// that keeps path and query, a prefix rewrite and request header filters as
// the Service sees them, a replaced response header, HTTPS to a Service, a
// weighted split, a single-page application's deep link, a custom 404 page,
// and read timeouts of 60 s (a 30 s answer arrives) and 5 s (504).
func TestNginxOperatorRoutesWebSocketsRedirectsRewritesHeadersWeightsTLSAndTimeouts(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	rn := realcluster.NodeOf(c)
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()

	const host = "app.realpods.test"
	ca, err := tools.NewCA("routing test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secureCert, secureKey, err := ca.Issue(tools.Server("secure."+ns+".svc"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pool, certPEM, keyPEM := framework.ServingCert(t, host)
	tlsSecret(ctx, t, cs, ns, "web-tls", certPEM, keyPEM)
	tlsSecret(ctx, t, cs, ns, "secure-tls", secureCert, secureKey)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "secure-ca"}, Data: map[string]string{"ca.crt": string(ca.CertPEM)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realcluster.RunTestServer(ctx, t, cs, ns, "api", "")
	realcluster.RunTestServer(ctx, t, cs, ns, "api-canary", "")
	realcluster.RunTestServer(ctx, t, cs, ns, "secure", "secure-tls")

	objs := apply(ctx, t, c, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: site
data:
  index.html: "<h1>the app</h1>\n"
  404.html: "<h1>nothing here</h1>\n"
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: routes
spec:
  replicas: 1
  ports:
  - {name: http, containerPort: 8080}
  - {name: https, containerPort: 8443}
  content:
    configMaps: [{name: site}]
  config:
    servers:
    - port: http
      serverNames: [`+host+`]
      redirectToHTTPS: {port: 8443}
    - port: https
      serverNames: [`+host+`]
      tls: {secretName: web-tls}
      errorPages:
      - {codes: [404], path: /404.html}
      locations:
      - path: /
        static: {fallback: /index.html}
      - path: /files/
        static: {}
      - path: /api/
        proxy:
          service: api
          port: 80
          readTimeoutSeconds: 60
          urlRewrite:
            path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2/}
        requestHeaders:
          set: [{name: X-Team, value: a}]
          remove: [X-Debug]
        responseHeaders:
          set: [{name: Cache-Control, value: no-store}]
      - path: /short/
        proxy: {service: api, port: 80, readTimeoutSeconds: 5}
      - path: /ws
        proxy: {service: api, port: 80, readTimeoutSeconds: 60}
      - path: /split/
        proxy:
          backends:
          - {service: api, port: 80, weight: 90}
          - {service: api-canary, port: 80, weight: 10}
      - path: /secure/
        proxy:
          service: secure
          port: 443
          tls:
            caCertificate: {kind: ConfigMap, name: secure-ca}
`)
	began := time.Now()
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	t.Logf("NginxOperator routes Available %s after it was applied", time.Since(began).Round(time.Millisecond))

	ip := clusterIP(ctx, t, cs, ns, "routes")
	https := "https://" + net.JoinHostPort(ip, "8443")
	tlsConfig := &tls.Config{RootCAs: pool, ServerName: host}
	client := func(timeout time.Duration) *http.Client {
		return noRedirects(&http.Client{Timeout: timeout, Transport: &http.Transport{
			DialContext: rn.DialContext, DisableKeepAlives: true, TLSClientConfig: tlsConfig,
		}})
	}
	hc := client(15 * time.Second)
	// Every backend answers through nginx before the checks begin.
	get(ctx, t, hc, https+"/api/", want(http.StatusOK, "hello from api"))
	get(ctx, t, hc, https+"/secure/", want(http.StatusOK, "hello from secure"))
	do := func(hc *http.Client, url string, header http.Header) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Host = host + ":" + req.URL.Port() // as a browser sends it for a port of its own
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	// The slow checks run beside the others.
	var wg sync.WaitGroup
	wg.Go(func() {
		began := time.Now()
		if resp, body := do(client(90*time.Second), https+"/api/slow?sleep=30s", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "hello from api") {
			t.Errorf("a 30 s answer with a 60 s read timeout: %s %q", resp.Status, body)
		}
		t.Logf("the 30 s answer arrived after %s", time.Since(began).Round(time.Millisecond))
		began = time.Now()
		if resp, _ := do(client(90*time.Second), https+"/short/slow?sleep=30s", nil); resp.StatusCode != http.StatusGatewayTimeout {
			t.Errorf("a 30 s answer with a 5 s read timeout: %s, want 504", resp.Status)
		}
		t.Logf("504 after %s", time.Since(began).Round(time.Millisecond))
	})
	wg.Go(func() {
		conn, err := rn.DialContext(ctx, "tcp", net.JoinHostPort(ip, "8443"))
		if err != nil {
			t.Errorf("dial: %v", err)
			return
		}
		defer conn.Close()
		cfg, _ := websocket.NewConfig("wss://"+host+"/ws", "https://"+host+"/")
		ws, err := websocket.NewClient(cfg, tls.Client(conn, tlsConfig))
		if err != nil {
			t.Errorf("WebSocket upgrade through nginx: %v", err)
			return
		}
		for i, msg := range []string{"first", "after 30 s idle"} {
			if i == 1 {
				time.Sleep(30 * time.Second) // the connection stays idle: what is tested
			}
			var got string
			if err := websocket.Message.Send(ws, msg); err != nil {
				t.Errorf("send %q: %v", msg, err)
				return
			}
			if err := websocket.Message.Receive(ws, &got); err != nil || got != msg {
				t.Errorf("echo of %q: %q, %v", msg, got, err)
				return
			}
		}
	})

	// HTTP → HTTPS keeps host, path and query.
	resp, _ := do(hc, "http://"+net.JoinHostPort(ip, "8080")+"/a/b?c=d", nil)
	if want := "https://" + host + ":8443/a/b?c=d"; resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Errorf("HTTP: %s Location %q, want 308 %s", resp.Status, resp.Header.Get("Location"), want)
	}

	// The prefix rewrite and the request headers, as the Service saw them;
	// the response header as the client sees it.
	resp, body := do(hc, https+"/api/users?id=7", http.Header{"X-Debug": {"1"}})
	saw := serverSaw(t, body)
	if saw.URI != "/v2/users?id=7" || saw.Headers.Get("X-Team") != "a" || saw.Headers.Get("X-Debug") != "" {
		t.Errorf("the Service saw %s with X-Team %q and X-Debug %q, want /v2/users?id=7, a and none", saw.URI, saw.Headers.Get("X-Team"), saw.Headers.Get("X-Debug"))
	}
	if saw.Headers.Get("X-Forwarded-Proto") != "https" || saw.Host != host+":8443" {
		t.Errorf("the Service saw X-Forwarded-Proto %q and Host %q, want https and %s:8443", saw.Headers.Get("X-Forwarded-Proto"), saw.Host, host)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want the Service's replaced by no-store", got)
	}

	// HTTPS to a Service whose certificate is checked against the ConfigMap's CA.
	if _, body := do(hc, https+"/secure/x", nil); !serverSaw(t, body).TLS {
		t.Errorf("the secure Service was not reached over TLS: %q", body)
	}

	// The weighted split.
	counts := map[string]int{}
	for range routingSplitRequests {
		_, body := do(hc, https+"/split/", nil)
		counts[serverSaw(t, body).Server]++
	}
	if c := counts["api-canary"]; c < routingSplitCanary-routingSplitTolerance || c > routingSplitCanary+routingSplitTolerance || c+counts["api"] != routingSplitRequests {
		t.Errorf("%d requests at 90/10 went %v, want api-canary %d ± %d", routingSplitRequests, counts, routingSplitCanary, routingSplitTolerance)
	}
	t.Logf("%d requests at 90/10: %v", routingSplitRequests, counts)

	// Static: the deep link of the single-page app, the custom 404 page.
	if resp, body := do(hc, https+"/orders/42", nil); resp.StatusCode != http.StatusOK || body != "<h1>the app</h1>\n" {
		t.Errorf("deep link: %s %q, want the index", resp.Status, body)
	}
	if resp, body := do(hc, https+"/files/missing.txt", nil); resp.StatusCode != http.StatusNotFound || body != "<h1>nothing here</h1>\n" {
		t.Errorf("missing file: %s %q, want 404 with the custom page", resp.Status, body)
	}
	wg.Wait()
}

// serverSaw decodes the test server's description of the request from the
// second line of its answer.
func serverSaw(t *testing.T, body string) seen {
	t.Helper()
	var s seen
	_, rest, _ := strings.Cut(body, "\n")
	if err := json.Unmarshal([]byte(rest), &s); err != nil {
		t.Errorf("not the test server's answer (%v): %q", err, body)
	}
	return s
}
