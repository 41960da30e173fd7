package render

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/clientchecks"
	"github.com/nginx-operator/nginx-operator/test/echo"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// loopbackAddress is where each source connects from: the trusted hop from
// 127.0.0.1, any other client from 127.0.0.2.
var loopbackAddress = map[clientchecks.Source]string{clientchecks.Trusted: "127.0.0.1", clientchecks.Untrusted: "127.0.0.2"}

// TestRealNginxRoutesSpeaksAndGuardsTheDoorAsClientsExpect runs the real
// nginx on loopback with test/clientchecks' spec, its upstreams the echo
// handler on loopback too, and runs every client check against it:
// routing (redirects, rewrites, header filters, weighted backends, backend
// TLS, timeouts, WebSockets, static files), protocols (HTTP/2, gzip, HSTS,
// TLS versions, client certificates) and the door (trusted hops, allow and
// deny, basic auth, rate limits, the access log, workers). test/realpods runs
// the same checks through a pod and its Service.
func TestRealNginxRoutesSpeaksAndGuardsTheDoorAsClientsExpect(t *testing.T) {
	nginxBin := tools.Nginx(t)
	api := httptest.NewServer(echo.Handler(clientchecks.API))
	defer api.Close()
	canary := httptest.NewServer(echo.Handler(clientchecks.Canary))
	defer canary.Close()
	secure := httptest.NewTLSServer(echo.Handler(clientchecks.Secure)) // certificate for example.com
	defer secure.Close()

	opts := clientchecks.Options{
		HTTPPort: int32(tools.Port(t)), HTTPSPort: int32(tools.Port(t)),
		APIPort: portOf(t, api.URL), CanaryPort: portOf(t, canary.URL), SecurePort: portOf(t, secure.URL),
		SecureHostname: "example.com", SecureCAKind: "Secret",
		TrustedProxies: []string{loopbackAddress[clientchecks.Trusted] + "/32"}, ClientCIDR: "127.0.0.0/8",
		ShortReadTimeout: time.Second, LongReadTimeout: 4 * time.Second,
	}
	fixtures := clientchecks.NewFixtures(t)
	spec := clientchecks.Spec(opts)
	// A dual-stack Service makes nginx listen on IPv6 too (see below).
	spec.Service = v1beta1.ServiceSpec{IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}}
	healthPort := int32(tools.Port(t))
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), healthPort, fixtures.Content, func(paths *Paths) {
		// The secure upstream's own certificate is the CA nginx trusts.
		writeCA(t, *paths, opts.SecureCAKind, clientchecks.SecureCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}))
		writeCA(t, *paths, "Secret", clientchecks.PartnersCA, fixtures.PartnersCA.CertPEM)
	})
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", opts.HTTPPort), nil)
	tools.Must(t, err)
	fetch(t, proc, http.DefaultClient, req) // nginx is up

	clientchecks.Run(t, &clientchecks.Target{
		Options: opts, Fixtures: fixtures,
		Dial:    dialLoopback,
		Address: loopbackAddress,
		// testPaths's certificates are self-signed.
		TLS:       &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
		AccessLog: func(*testing.T) []string { return strings.Split(proc.Output(), "\n") },
		Workers:   func(t *testing.T) int { return workersOf(t, proc.PID()) },
	})

	// test/realpods checks IPv6 by the pods' addresses, which loopback has not.
	t.Run("IPv6 listeners", func(t *testing.T) {
		if _, err := os.Stat("/proc/net/if_inet6"); err != nil {
			tools.Missing(t, "this machine has no IPv6 (/proc/net/if_inet6): the IPv6 listeners cannot be checked")
		}
		c := &http.Client{Timeout: 5 * time.Second}
		for _, port := range []int32{opts.HTTPPort, healthPort} {
			resp, err := c.Get(fmt.Sprintf("http://[::1]:%d/", port))
			if err != nil {
				t.Errorf("port %d on IPv6: %v", port, err)
				continue
			}
			resp.Body.Close()
		}
	})
}

// dialLoopback connects to port on loopback from the source's address.
func dialLoopback(ctx context.Context, from clientchecks.Source, port int32) (net.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(loopbackAddress[from])}}
	return d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
}

// writeCA writes certPEM where nginx reads the CA of kind and name.
func writeCA(t *testing.T, paths Paths, kind, name string, certPEM []byte) {
	t.Helper()
	tools.Must(t, os.WriteFile(paths.CAFile(v1beta1.CACertificateRef{Kind: kind, Name: name, Key: "ca.crt"}), certPEM, 0o644))
}

func portOf(t *testing.T, url string) int32 {
	t.Helper()
	p, err := strconv.Atoi(url[strings.LastIndex(url, ":")+1:])
	tools.Must(t, err)
	return int32(p)
}

// workersOf counts the worker processes of the nginx master pid.
func workersOf(t *testing.T, master int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	tools.Must(t, err)
	n := 0
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(master) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(cmdline), "worker process") {
				n++
			}
		}
	}
	return n
}
