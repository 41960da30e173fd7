package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// TestRealNginxSpeaksTheProtocolsAndGuardsTheDoor runs the real nginx with
// the protocol, client address, access control and log fields and checks
// what clients see: HTTP/2 by ALPN, gzip, HSTS, TLS versions, client
// certificates, basic auth, allow/deny, rate limits, the client address a
// trusted proxy reports, JSON access log lines, IPv6 listeners and the
// number of workers. test/realpods proves the same through a pod and its
// Service.
func TestRealNginxSpeaksTheProtocolsAndGuardsTheDoor(t *testing.T) {
	nginxBin := tools.Require(t, "nginx", "apt-get install -y nginx")
	echo := httptest.NewServer(echoUpstream("api"))
	defer echo.Close()
	clientCA, err := tools.NewCA("partners", time.Hour)
	tools.Must(t, err)

	httpPort, httpsPort, healthPort := int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t))
	spec := v1beta1.NginxOperatorSpec{
		Ports:     []v1beta1.Port{{Name: "http", ContainerPort: httpPort}, {Name: "https", ContainerPort: httpsPort}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
		Service:   v1beta1.ServiceSpec{IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		Config: v1beta1.NginxConfig{
			// 127.0.0.1 is the trusted proxy; 127.0.0.2 is any client.
			TrustedProxies: []string{"127.0.0.1/32"},
			RealIP:         &v1beta1.RealIP{Header: "X-Forwarded-For"},
			Gzip:           &v1beta1.Gzip{},
			AccessLog:      v1beta1.AccessLog{Format: "JSON"},
			Servers: []v1beta1.Server{
				{Port: "http", DefaultServer: true, Locations: []v1beta1.Location{
					{Path: "/", Static: &v1beta1.StaticLocation{}},
					{Path: "/quiet", Exact: true, Static: &v1beta1.StaticLocation{}, DisableAccessLog: true},
					{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: portOf(t, echo.URL)}},
					{Path: "/internal/", Static: &v1beta1.StaticLocation{}, IPAccess: &v1beta1.IPAccess{Deny: []string{"203.0.113.0/24"}, Allow: []string{"127.0.0.0/8", "198.51.100.0/24"}}},
					{Path: "/private/", Static: &v1beta1.StaticLocation{}, BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Realm: "Team A"}},
					{Path: "/limited/", Static: &v1beta1.StaticLocation{}, RateLimit: &v1beta1.RateLimit{RequestsPerMinute: 1, Burst: 2}},
				}},
				{Port: "https", DefaultServer: true, TLS: &v1beta1.TLS{SecretName: "web-tls", HSTS: &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](600), IncludeSubDomains: true}},
					Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}},
				{Port: "https", ServerNames: []string{"partners.test"}, TLS: &v1beta1.TLS{SecretName: "web-tls",
					ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "partners-ca"}}}},
			},
		},
	}
	admitted := validationtest.Spec(t, spec)
	big := strings.Repeat("compressible text\n", 512)
	content := map[string]string{
		"index.html": "<h1>edge</h1>\n", "big.txt": big, "quiet": "shh\n",
		"internal/index.html": "inside\n", "private/index.html": "secret\n", "limited/index.html": "limited\n",
	}
	proc := startRendered(t, nginxBin, admitted, healthPort, content, func(paths Paths) {
		tools.Must(t, os.WriteFile(paths.CAFile(admitted.Config.Servers[2].TLS.ClientCertificates.CACertificate), clientCA.CertPEM, 0o644))
	})

	from := func(source string, tlsConfig *tls.Config) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}).DialContext,
			TLSClientConfig:   tlsConfig,
			ForceAttemptHTTP2: true,
		}}
	}
	proxy, client := from("127.0.0.1", nil), from("127.0.0.2", nil)
	base := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	get := func(c *http.Client, path string, header ...string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		tools.Must(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return fetch(t, proc, c, req)
	}

	t.Run("gzip", func(t *testing.T) {
		// Set by hand, Accept-Encoding leaves the body compressed.
		resp, body := get(client, "/big.txt", "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("Content-Encoding %q, Vary %q; want gzip and Accept-Encoding", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
		}
		zr, err := gzip.NewReader(strings.NewReader(body))
		tools.Must(t, err)
		plain, err := io.ReadAll(zr)
		tools.Must(t, err)
		if string(plain) != big || len(body) >= len(big)/4 {
			t.Errorf("gzip body: %d bytes for %d, decompressed equal: %v", len(body), len(big), string(plain) == big)
		}
		if resp, _ := get(client, "/", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("a %d-byte page was compressed; minLengthBytes is 1024", len(content["index.html"]))
		}
	})

	t.Run("client address from a trusted proxy only", func(t *testing.T) {
		var seen echoed
		_, body := get(proxy, "/api/who", "X-Forwarded-For", "192.0.2.7")
		tools.Must(t, json.Unmarshal([]byte(body), &seen))
		if ip, xff := seen.Headers.Get("X-Real-Ip"), seen.Headers.Get("X-Forwarded-For"); ip != "192.0.2.7" || xff != "192.0.2.7, 127.0.0.1" {
			t.Errorf("through the trusted proxy the Service saw X-Real-IP %q, X-Forwarded-For %q; want 192.0.2.7 and \"192.0.2.7, 127.0.0.1\"", ip, xff)
		}
		_, body = get(client, "/api/who", "X-Forwarded-For", "192.0.2.7")
		tools.Must(t, json.Unmarshal([]byte(body), &seen))
		if ip, xff := seen.Headers.Get("X-Real-Ip"), seen.Headers.Get("X-Forwarded-For"); ip != "127.0.0.2" || xff != "127.0.0.2" {
			t.Errorf("from an untrusted client the Service saw X-Real-IP %q, X-Forwarded-For %q; want its own address 127.0.0.2 for both", ip, xff)
		}
	})

	t.Run("allow and deny", func(t *testing.T) {
		for _, tc := range []struct {
			client *http.Client
			xff    string
			want   int
		}{
			{client, "", 200},
			{proxy, "198.51.100.4", 200},
			{proxy, "203.0.113.9", 403},  // denied, as the trusted proxy reports it
			{proxy, "192.0.2.7", 403},    // not allowed
			{client, "203.0.113.9", 200}, // an untrusted claim changes nothing
		} {
			if resp, _ := get(tc.client, "/internal/", "X-Forwarded-For", tc.xff); resp.StatusCode != tc.want {
				t.Errorf("client for X-Forwarded-For %q: %d, want %d", tc.xff, resp.StatusCode, tc.want)
			}
		}
	})

	t.Run("basic auth", func(t *testing.T) {
		resp, _ := get(client, "/private/")
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="Team A"` {
			t.Errorf("without a password: %d %q, want 401 with the realm", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if resp, _ := get(client, "/private/", "Authorization", basic(testUser, "wrong")); resp.StatusCode != 401 {
			t.Errorf("a wrong password: %d, want 401", resp.StatusCode)
		}
		if resp, body := get(client, "/private/", "Authorization", basic(testUser, testPassword)); resp.StatusCode != 200 || body != "secret\n" {
			t.Errorf("the right password: %d %q, want 200", resp.StatusCode, body)
		}
		if resp, _ := get(client, "/"); resp.StatusCode != 200 {
			t.Errorf("a location without basicAuth: %d, want 200", resp.StatusCode)
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		var codes []int
		for range 5 {
			resp, _ := get(client, "/limited/")
			codes = append(codes, resp.StatusCode)
		}
		// One a minute with a burst of 2: the first and the two of the
		// burst pass, the rest get 429.
		if fmt.Sprint(codes) != "[200 200 200 429 429]" {
			t.Errorf("five requests at once: %v, want [200 200 200 429 429]", codes)
		}
		if resp, _ := get(proxy, "/limited/", "X-Forwarded-For", "192.0.2.8"); resp.StatusCode != 200 {
			t.Errorf("another client (by the trusted proxy's report): %d, want 200", resp.StatusCode)
		}
	})

	t.Run("TLS: HTTP/2, HTTP/1.1, HSTS, versions", func(t *testing.T) {
		url := fmt.Sprintf("https://127.0.0.1:%d/", httpsPort)
		h2 := from("127.0.0.2", &tls.Config{InsecureSkipVerify: true})
		h1 := from("127.0.0.2", &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		h1.Transport.(*http.Transport).ForceAttemptHTTP2 = false
		for _, tc := range []struct {
			client *http.Client
			proto  string
		}{{h2, "HTTP/2.0"}, {h1, "HTTP/1.1"}} {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			tools.Must(t, err)
			resp, _ := fetch(t, proc, tc.client, req)
			if resp.Proto != tc.proto || resp.StatusCode != 200 {
				t.Errorf("got %s %d, want %s 200", resp.Proto, resp.StatusCode, tc.proto)
			}
			if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=600; includeSubDomains" {
				t.Errorf("Strict-Transport-Security %q", got)
			}
		}
		for version, refused := range map[uint16]bool{tls.VersionTLS11: true, tls.VersionTLS12: false, tls.VersionTLS13: false} {
			err := handshake(httpsPort, "", &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10, MaxVersion: version})
			if (err != nil) != refused {
				t.Errorf("a client of at most %s: handshake error %v, want refused=%v", tls.VersionName(version), err, refused)
			}
		}
	})

	t.Run("client certificates", func(t *testing.T) {
		url := fmt.Sprintf("https://127.0.0.1:%d/", httpsPort)
		certPEM, keyPEM, err := clientCA.Issue(tools.Client("partner-1"), time.Hour)
		tools.Must(t, err)
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		tools.Must(t, err)
		stranger, err := tools.NewCA("stranger", time.Hour)
		tools.Must(t, err)
		strangerPEM, strangerKey, err := stranger.Issue(tools.Client("partner-1"), time.Hour)
		tools.Must(t, err)
		strangerCert, err := tls.X509KeyPair(strangerPEM, strangerKey)
		tools.Must(t, err)
		for _, tc := range []struct {
			name, sni string
			certs     []tls.Certificate
			want      int
		}{
			{"no certificate", "partners.test", nil, 400},
			{"a stranger's certificate", "partners.test", []tls.Certificate{strangerCert}, 400},
			{"the CA's certificate", "partners.test", []tls.Certificate{cert}, 200},
			// The handshake with the default server asks for no
			// certificate; the request for partners.test is refused all the same.
			{"another server in SNI", "www.test", nil, 400},
		} {
			c := from("127.0.0.2", &tls.Config{InsecureSkipVerify: true, ServerName: tc.sni, Certificates: tc.certs})
			req, err := http.NewRequest(http.MethodGet, url, nil)
			tools.Must(t, err)
			req.Host = "partners.test"
			if resp, _ := fetch(t, proc, c, req); resp.StatusCode != tc.want {
				t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
			}
		}
	})

	t.Run("IPv6", func(t *testing.T) {
		if _, err := os.Stat("/proc/net/if_inet6"); err != nil {
			t.Skip("this machine has no IPv6")
		}
		c := &http.Client{Timeout: 5 * time.Second}
		for _, port := range []int32{httpPort, healthPort} {
			resp, err := c.Get(fmt.Sprintf("http://[::1]:%d/", port))
			if err != nil {
				t.Errorf("port %d on IPv6: %v", port, err)
				continue
			}
			resp.Body.Close()
		}
	})

	t.Run("worker processes", func(t *testing.T) {
		if got := workersOf(t, proc.PID()); got != 2 {
			t.Errorf("%d workers; want 2 for a CPU limit of 1500m", got)
		}
	})

	t.Run("JSON access log", func(t *testing.T) {
		get(proxy, "/quiet", "X-Forwarded-For", "192.0.2.9")
		get(proxy, "/index.html?log=json", "X-Forwarded-For", "192.0.2.9", "User-Agent", `probe "1"`)
		var line map[string]any
		tools.Eventually(t, 5*time.Second, "the access log line", func() error {
			for _, l := range strings.Split(proc.Output(), "\n") {
				if strings.Contains(l, "/quiet") {
					return &tools.Stop{Err: fmt.Errorf("a location with disableAccessLog was logged: %s", l)}
				}
				if strings.HasPrefix(l, "{") && strings.Contains(l, "log=json") {
					return json.Unmarshal([]byte(l), &line)
				}
			}
			return fmt.Errorf("not logged yet")
		})
		for field, want := range map[string]any{
			"method": "GET", "uri": "/index.html?log=json", "status": 200.0, "bytes": float64(len(content["index.html"])),
			"client_ip": "192.0.2.9", "user_agent": `probe "1"`, "upstream_time": "", "protocol": "HTTP/1.1",
		} {
			if line[field] != want {
				t.Errorf("%s = %#v, want %#v (line %v)", field, line[field], want, line)
			}
		}
		if id, _ := line["request_id"].(string); len(id) != 32 {
			t.Errorf("request_id %q: want nginx's 32 hex digits", id)
		}
		if _, ok := line["request_time"].(float64); !ok {
			t.Errorf("request_time %#v is not a number", line["request_time"])
		}
		if _, err := time.Parse(time.RFC3339, fmt.Sprint(line["time"])); err != nil {
			t.Errorf("time: %v", err)
		}
	})
}

// TestRealNginxOffersOnlyTheConfiguredTLSProtocols proves ssl_protocols
// comes from spec.config.tls: with TLSv1.3 alone, a TLS 1.2 client is
// refused (TLS 1.1 is refused whatever the spec, by the CRD's enum).
func TestRealNginxOffersOnlyTheConfiguredTLSProtocols(t *testing.T) {
	nginxBin := tools.Require(t, "nginx", "apt-get install -y nginx")
	httpsPort, healthPort := int32(tools.Port(t)), int32(tools.Port(t))
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "https", ContainerPort: httpsPort}},
		Config: v1beta1.NginxConfig{
			DisableHTTP2: true,
			TLS:          v1beta1.TLSPolicy{Protocols: []string{"TLSv1.3"}},
			Servers:      []v1beta1.Server{{Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls"}}},
		},
	}
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), healthPort, map[string]string{"index.html": "x\n"}, nil)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/", httpsPort), nil)
	tools.Must(t, err)
	if resp, _ := fetch(t, proc, c, req); resp.Proto != "HTTP/1.1" || resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("%s over %s; want HTTP/1.1 (disableHTTP2) over TLS 1.3", resp.Proto, tls.VersionName(resp.TLS.Version))
	}
	if err := handshake(httpsPort, "", &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}); err == nil {
		t.Error("a TLS 1.2 client was served; protocols is [TLSv1.3]")
	}
}

// handshake opens a TLS connection to port on loopback with config.
func handshake(port int32, serverName string, config *tls.Config) error {
	config.ServerName = serverName
	d := &net.Dialer{Timeout: 3 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", "127.0.0.1:"+strconv.Itoa(int(port)), config)
	if err != nil {
		return err
	}
	return conn.Close()
}

func basic(user, password string) string {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "/", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
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
