package realpods

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// An NginxOperator speaks the protocols and guards the door as a client
// expects, seen through its Service from the node: HTTP/2 by ALPN and
// HTTP/1.1, gzip with Vary, HSTS, TLS 1.1 refused, basic auth (401, then 200),
// a denied address (403), requests beyond the burst (429), the client address
// taken from a trusted proxy's header and ignored from anyone else, a JSON
// access log line from the pod's log, workers from the CPU limit, and nginx
// on the pod's IPv6 address when its Service is dual-stack, and not when it
// is IPv4 only.
func TestNginxOperatorSpeaksHTTP2GzipTLSPolicyAndGuardsTheDoor(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	rn := realcluster.NodeOf(c)
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()

	const host = "edge.realpods.test"
	pool, certPEM, keyPEM := framework.ServingCert(t, host)
	tlsSecret(ctx, t, cs, ns, "edge-tls", certPEM, keyPEM)
	const user, password = "ada", "lovelace 1843"
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "users"}, StringData: map[string]string{"auth": tools.Htpasswd(user, password)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realcluster.RunTestServer(ctx, t, cs, ns, "api", "")
	big := strings.Repeat("compressible line of text\n", 400)

	// The node reaches the pods from its own subnet: 10.0.0.0/8 holds it,
	// so "edge" trusts the node's X-Forwarded-For and "strict" does not.
	objs := apply(ctx, t, c, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: edge-site
data:
  index.html: "<h1>edge</h1>\n"
  internal.html: "inside\n"
  private.html: "secret\n"
  limited.html: "scarce\n"
  big.txt: |
`+indent(big, "    ")+`
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: edge
spec:
  replicas: 1
  ports:
  - {name: http, containerPort: 8080}
  - {name: https, containerPort: 8443}
  resources:
    requests: {cpu: 10m}
    limits: {cpu: 1500m}
  content:
    configMaps: [{name: edge-site}]
  config:
    trustedProxies: [10.0.0.0/8]
    realIP: {header: X-Forwarded-For}
    gzip: {}
    accessLog: {format: JSON}
    servers:
    - port: http
      locations:
      - {path: /, static: {}}
      - {path: /api/, proxy: {service: api, port: 80}}
      - path: /internal
        static: {}
        ipAccess: {deny: [203.0.113.0/24]}
      - path: /private
        static: {}
        basicAuth: {secretName: users, realm: Edge}
      - path: /limited
        static: {}
        rateLimit: {requestsPerMinute: 1, burst: 2}
    - port: https
      serverNames: [`+host+`]
      tls:
        secretName: edge-tls
        hsts: {maxAgeSeconds: 600}
      locations:
      - {path: /, static: {}}
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: dual
spec:
  replicas: 1
  service:
    ipFamilyPolicy: RequireDualStack
  config:
    servers:
    - port: http
      locations:
      - {path: /api/, proxy: {service: api, port: 80}}
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: strict
spec:
  replicas: 1
  config:
    trustedProxies: [192.0.2.0/24]
    realIP: {header: X-Forwarded-For}
    servers:
    - port: http
      locations:
      - {path: /api/, proxy: {service: api, port: 80}}
`)
	began := time.Now()
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	t.Logf("edge, dual and strict Available %s after they were applied", time.Since(began).Round(time.Millisecond))

	ip := clusterIP(ctx, t, cs, ns, "edge")
	plain := "http://" + net.JoinHostPort(ip, "8080")
	tlsConfig := &tls.Config{RootCAs: pool, ServerName: host}
	transport := func(h2 bool) *http.Transport {
		tr := &http.Transport{DialContext: rn.DialContext, DisableKeepAlives: true, TLSClientConfig: tlsConfig.Clone(), ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
		}
		return tr
	}
	hc := &http.Client{Timeout: 15 * time.Second, Transport: transport(false)}
	get(ctx, t, hc, plain+"/api/", want(http.StatusOK, "hello from api"))
	do := func(hc *http.Client, url string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	t.Run("HTTP/2 by ALPN, HTTP/1.1, HSTS", func(t *testing.T) {
		for _, h2 := range []bool{true, false} {
			resp, body := do(&http.Client{Timeout: 15 * time.Second, Transport: transport(h2)}, "https://"+net.JoinHostPort(ip, "8443")+"/")
			wantProto := map[bool]string{true: "HTTP/2.0", false: "HTTP/1.1"}[h2]
			if resp.Proto != wantProto || resp.StatusCode != http.StatusOK || body != "<h1>edge</h1>\n" {
				t.Errorf("%s %s %q, want %s 200 with the page", resp.Proto, resp.Status, body, wantProto)
			}
			if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=600" {
				t.Errorf("%s: Strict-Transport-Security %q, want max-age=600", resp.Proto, got)
			}
		}
	})

	t.Run("TLS 1.1 refused", func(t *testing.T) {
		for version, refused := range map[uint16]bool{tls.VersionTLS11: true, tls.VersionTLS12: false} {
			conn, err := rn.DialContext(ctx, "tcp", net.JoinHostPort(ip, "8443"))
			if err != nil {
				t.Fatal(err)
			}
			cfg := tlsConfig.Clone()
			cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, version
			err = tls.Client(conn, cfg).HandshakeContext(ctx)
			conn.Close()
			if (err != nil) != refused {
				t.Errorf("a client of at most %s: handshake error %v, want refused=%v", tls.VersionName(version), err, refused)
			}
		}
	})

	t.Run("gzip with Vary", func(t *testing.T) {
		resp, body := do(hc, plain+"/big.txt", "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("Content-Encoding %q, Vary %q; want gzip and Accept-Encoding", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
		}
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if plainBody, err := io.ReadAll(zr); err != nil || string(plainBody) != big {
			t.Errorf("the gzipped body does not decompress to the file (%v)", err)
		}
		t.Logf("%d bytes sent for a %d-byte file", len(body), len(big))
	})

	t.Run("basic auth", func(t *testing.T) {
		if resp, _ := do(hc, plain+"/private.html"); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Basic realm="Edge"` {
			t.Errorf("without a password: %s %q, want 401 with realm Edge", resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, plain+"/private.html", nil)
		req.SetBasicAuth(user, password)
		if resp, body := do(hc, plain+"/private.html", "Authorization", req.Header.Get("Authorization")); resp.StatusCode != http.StatusOK || body != "secret\n" {
			t.Errorf("with the password: %s %q, want 200 with the page", resp.Status, body)
		}
	})

	t.Run("the client address from a trusted proxy only, and a denied CIDR", func(t *testing.T) {
		_, body := do(hc, plain+"/api/who", "X-Forwarded-For", "203.0.113.9")
		trusted := serverSaw(t, body)
		if got := trusted.Headers.Get("X-Real-Ip"); got != "203.0.113.9" {
			t.Errorf("through edge, which trusts the node, the Service saw X-Real-IP %q, want 203.0.113.9", got)
		}
		if resp, _ := do(hc, plain+"/internal.html", "X-Forwarded-For", "203.0.113.9"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a client in the denied CIDR, as the trusted proxy reports it: %s, want 403", resp.Status)
		}
		if resp, _ := do(hc, plain+"/internal.html", "X-Forwarded-For", "198.51.100.4"); resp.StatusCode != http.StatusOK {
			t.Errorf("a client outside the denied CIDR: %s, want 200", resp.Status)
		}
		strictURL := "http://" + net.JoinHostPort(clusterIP(ctx, t, cs, ns, "strict"), "8080")
		get(ctx, t, hc, strictURL+"/api/", want(http.StatusOK, "hello from api"))
		_, body = do(hc, strictURL+"/api/who", "X-Forwarded-For", "203.0.113.9")
		untrusted := serverSaw(t, body)
		if ip, xff := untrusted.Headers.Get("X-Real-Ip"), untrusted.Headers.Get("X-Forwarded-For"); ip == "203.0.113.9" || ip == "" || xff != ip {
			t.Errorf("through strict, which does not trust the node, the Service saw X-Real-IP %q and X-Forwarded-For %q; want the node's own address in both", ip, xff)
		}
		t.Logf("edge saw the claimed client 203.0.113.9; strict saw the connection's %s", untrusted.Headers.Get("X-Real-Ip"))
	})

	t.Run("requests beyond the burst", func(t *testing.T) {
		var codes []int
		for range 5 {
			resp, _ := do(hc, plain+"/limited.html", "X-Forwarded-For", "198.51.100.77")
			codes = append(codes, resp.StatusCode)
		}
		// One a minute and a burst of 2: the first three pass, the rest
		// get 429.
		if fmt.Sprint(codes) != "[200 200 200 429 429]" {
			t.Errorf("five requests at once: %v, want [200 200 200 429 429]", codes)
		}
	})

	t.Run("JSON access log", func(t *testing.T) {
		do(hc, plain+"/big.txt?from=logs", "X-Forwarded-For", "198.51.100.23", "User-Agent", "realpods")
		var line map[string]any
		tools.Eventually(t, 30*time.Second, "the request in the pod's log", func() error {
			for _, logs := range containerLogs(ctx, t, cs, ns, labels.SelectorFromSet(layout.Selector("edge")).String()) {
				sc := bufio.NewScanner(strings.NewReader(logs))
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "{") && strings.Contains(sc.Text(), "from=logs") {
						return json.Unmarshal(sc.Bytes(), &line)
					}
				}
			}
			return fmt.Errorf("not logged yet")
		})
		for field, want := range map[string]any{"method": "GET", "uri": "/big.txt?from=logs", "status": 200.0, "client_ip": "198.51.100.23", "user_agent": "realpods"} {
			if line[field] != want {
				t.Errorf("%s = %#v, want %#v (line %v)", field, line[field], want, line)
			}
		}
	})

	t.Run("workers from the CPU limit", func(t *testing.T) {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, "edge-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := nginxWorkers(t, string(pod.UID)); n != 2 {
			t.Errorf("%d nginx workers in the pod; want 2 for a CPU limit of 1500m", n)
		}
	})

	t.Run("IPv6 where the Service has it, and only there", func(t *testing.T) {
		for name, families := range map[string]string{"dual": "[IPv4 IPv6]", "strict": "[IPv4]"} {
			svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(svc.Spec.IPFamilies); got != families {
				t.Fatalf("Service %s has families %s, want %s", name, got, families)
			}
		}
		if !podHasIPv6(ctx, t, cs, ns, "strict-0") {
			t.Skip("the node's pods have no IPv6 address: this machine has no IPv6")
		}
		// The pod may still be starting: wait until it answers.
		v6 := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: rn.DialContext, DisableKeepAlives: true}}
		var dual string
		tools.Eventually(t, 90*time.Second, "dual serving on its pod's IPv6 address", func() error {
			dual = podIPv6(ctx, t, cs, ns, "dual-0")
			for _, url := range []string{"http://" + net.JoinHostPort(dual, "8080") + "/api/", "http://" + net.JoinHostPort(dual, "18080") + "/healthz"} {
				resp, err := v6.Get(url)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("GET %s: %s", url, resp.Status)
				}
			}
			return nil
		})
		// strict's Service is IPv4 only, so its nginx does not listen on
		// IPv6 (it would not start in a pod without IPv6 otherwise): its
		// pod's IPv6 address refuses the connection its IPv4 address takes.
		strict := podIPv6(ctx, t, cs, ns, "strict-0")
		_, err := rn.DialContext(ctx, "tcp", net.JoinHostPort(strict, "8080"))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("nginx of an IPv4-only Service on its pod's IPv6 address %s: %v, want connection refused", strict, err)
		}
		v4, err := cs.CoreV1().Pods(ns).Get(ctx, "strict-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		get(ctx, t, v6, "http://"+net.JoinHostPort(v4.Status.PodIP, "8080")+"/api/", want(http.StatusOK, "hello from api"))
		t.Logf("dual served on [%s]:8080; strict refused [%s]:8080", dual, strict)
	})
}

// podHasIPv6 tells whether pod has an IPv6 address.
func podHasIPv6(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, pod string) bool {
	return podIPv6(ctx, t, cs, ns, pod) != ""
}

// podIPv6 is the IPv6 address of pod, or "" without one.
func podIPv6(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, pod string) string {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range p.Status.PodIPs {
		if strings.Contains(ip.IP, ":") {
			return ip.IP
		}
	}
	return ""
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix)
}

// nginxWorkers counts, in the host's /proc, the nginx worker processes of
// the pod with uid: the node's kubelet puts each pod in a cgroup named after
// its uid (cgroupfs driver).
func nginxWorkers(t *testing.T, uid string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("nginx: worker process")) {
			continue
		}
		if cgroup, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup")); err == nil && bytes.Contains(cgroup, []byte("pod"+uid)) {
			n++
		}
	}
	return n
}
