package clientchecks

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

func gzipped(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	// Set by hand, Accept-Encoding leaves the body compressed.
	resp, body := get(t, c, tg.url("http", AppHost, "/big.txt"), "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("Content-Encoding %q, Vary %q; want gzip and Accept-Encoding", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(strings.NewReader(body))
	tools.Must(t, err)
	plain, err := io.ReadAll(zr)
	tools.Must(t, err)
	if string(plain) != bigText || len(body) >= len(bigText)/4 {
		t.Errorf("gzip body: %d bytes for %d, decompressed equal: %v", len(body), len(bigText), string(plain) == bigText)
	}
	if resp, _ := get(t, c, tg.url("http", AppHost, "/"), "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("a %d-byte page was compressed; minLengthBytes is 1024", len(tg.Content["index.html"]))
	}
}

func tlsProtocols(t *testing.T, tg *Target) {
	for _, h2 := range []bool{true, false} {
		c, wantProto := tg.client(Untrusted), "HTTP/2.0"
		transport(c).ForceAttemptHTTP2 = h2
		if !h2 {
			transport(c).TLSClientConfig.NextProtos, wantProto = []string{"http/1.1"}, "HTTP/1.1"
		}
		resp, body := get(t, c, tg.url("https", AppHost, "/"))
		if resp.Proto != wantProto || resp.StatusCode != http.StatusOK || body != tg.Content["index.html"] {
			t.Errorf("%s %s %q, want %s 200 with the page", resp.Proto, resp.Status, body, wantProto)
		}
		if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=600; includeSubDomains" {
			t.Errorf("%s: Strict-Transport-Security %q, want max-age=600; includeSubDomains", resp.Proto, got)
		}
	}
	for version, refused := range map[uint16]bool{tls.VersionTLS11: true, tls.VersionTLS12: false, tls.VersionTLS13: false} {
		cfg := tg.TLS.Clone()
		cfg.ServerName, cfg.MinVersion, cfg.MaxVersion = AppHost, tls.VersionTLS10, version
		if err := tg.handshake(t, cfg); (err != nil) != refused {
			t.Errorf("a client of at most %s: handshake error %v, want refused=%v", tls.VersionName(version), err, refused)
		}
	}
}

// handshake opens a TLS connection to the https port with cfg.
func (tg *Target) handshake(t *testing.T, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := tg.Dial(ctx, Untrusted, tg.HTTPSPort)
	if err != nil {
		t.Fatalf("dial the https port: %v", err)
	}
	defer conn.Close()
	return tls.Client(conn, cfg).HandshakeContext(ctx)
}

func clientCertificates(t *testing.T, tg *Target) {
	partner := keyPair(t, tg.PartnersCA)
	stranger, err := tools.NewCA("stranger", time.Hour)
	tools.Must(t, err)
	for _, tc := range []struct {
		name, sni string
		certs     []tls.Certificate
		want      int
	}{
		{"no certificate", PartnersHost, nil, http.StatusBadRequest},
		{"a stranger's certificate", PartnersHost, []tls.Certificate{keyPair(t, stranger)}, http.StatusBadRequest},
		{"the CA's certificate", PartnersHost, []tls.Certificate{partner}, http.StatusOK},
		// The handshake with the default server asks for no certificate;
		// the request for PartnersHost is refused all the same.
		{"another server in SNI", "www.test", nil, http.StatusBadRequest},
	} {
		c := tg.client(Untrusted)
		// What is checked is the client's certificate: the server's is
		// AppHost's, not verified for the names sent here.
		transport(c).TLSClientConfig = &tls.Config{InsecureSkipVerify: true, ServerName: tc.sni, Certificates: tc.certs} //nolint:gosec // see above
		if resp, _ := get(t, c, tg.url("https", PartnersHost, "/"), "Host", PartnersHost); resp.StatusCode != tc.want {
			t.Errorf("%s: %s, want %d", tc.name, resp.Status, tc.want)
		}
	}
}

// keyPair is a client certificate of ca's.
func keyPair(t *testing.T, ca *tools.CA) tls.Certificate {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(tools.Client("partner-1"), time.Hour)
	tools.Must(t, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	tools.Must(t, err)
	return cert
}

func trustedHop(t *testing.T, tg *Target) {
	const claimed = "203.0.113.9"
	url := tg.url("http", AppHost, "/api/who")
	_, body := get(t, tg.client(Trusted), url, "X-Forwarded-Proto", "https", "X-Forwarded-For", claimed)
	s, hop := seen(t, body), tg.Address[Trusted]
	if s.Headers.Get("X-Forwarded-Proto") != "https" || s.Headers.Get("X-Forwarded-Port") != "443" || s.Headers.Get("X-Forwarded-For") != claimed+", "+hop {
		t.Errorf("through the trusted hop: X-Forwarded-Proto %q -Port %q -For %q, want https, 443 and %s, %s",
			s.Headers.Get("X-Forwarded-Proto"), s.Headers.Get("X-Forwarded-Port"), s.Headers.Get("X-Forwarded-For"), claimed, hop)
	}
	if ip := s.Headers.Get("X-Real-Ip"); ip != claimed {
		t.Errorf("through the trusted hop the Service saw X-Real-IP %q, want the client it reported, %s", ip, claimed)
	}
	_, body = get(t, tg.client(Untrusted), url, "X-Forwarded-For", claimed)
	s, own := seen(t, body), tg.Address[Untrusted]
	if ip, xff := s.Headers.Get("X-Real-Ip"), s.Headers.Get("X-Forwarded-For"); ip != own || xff != own {
		t.Errorf("from an untrusted client the Service saw X-Real-IP %q, X-Forwarded-For %q; want its own address %s for both", ip, xff, own)
	}
}

func allowAndDeny(t *testing.T, tg *Target) {
	for _, tc := range []struct {
		from Source
		xff  string
		want int
	}{
		{Untrusted, "", http.StatusOK},
		{Trusted, "198.51.100.4", http.StatusOK},
		{Trusted, "203.0.113.9", http.StatusForbidden}, // denied, as the trusted hop reports it
		{Trusted, "192.0.2.7", http.StatusForbidden},   // not allowed
		{Untrusted, "203.0.113.9", http.StatusOK},      // an untrusted claim changes nothing
	} {
		var header []string
		if tc.xff != "" {
			header = []string{"X-Forwarded-For", tc.xff}
		}
		if resp, _ := get(t, tg.client(tc.from), tg.url("http", AppHost, "/internal.html"), header...); resp.StatusCode != tc.want {
			t.Errorf("source %d with X-Forwarded-For %q: %s, want %d", tc.from, tc.xff, resp.Status, tc.want)
		}
	}
}

func basicAuth(t *testing.T, tg *Target) {
	c, url := tg.client(Untrusted), tg.url("http", AppHost, "/private.html")
	resp, _ := get(t, c, url)
	if want := `Basic realm="` + Realm + `"`; resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("without a password: %s %q, want 401 with %s", resp.Status, resp.Header.Get("WWW-Authenticate"), want)
	}
	if resp, _ := get(t, c, url, "Authorization", basic(User, "wrong")); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: %s, want 401", resp.Status)
	}
	if resp, body := get(t, c, url, "Authorization", basic(User, Password)); resp.StatusCode != http.StatusOK || body != tg.Content["private.html"] {
		t.Errorf("the right password: %s %q, want 200 with the page", resp.Status, body)
	}
	if resp, _ := get(t, c, tg.url("http", AppHost, "/")); resp.StatusCode != http.StatusOK {
		t.Errorf("a location without basicAuth: %s, want 200", resp.Status)
	}
}

// basic is the Authorization header of user and password.
func basic(user, password string) string {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "/", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
}

// rateLimit: one a minute with a burst of 2, by client address: of five
// requests at once the first and the two of the burst pass, the rest get
// 429; another client still passes.
func rateLimit(t *testing.T, tg *Target) {
	burst := func(from Source, header ...string) string {
		var codes []int
		for range 5 {
			resp, _ := get(t, tg.client(from), tg.url("http", AppHost, "/limited.html"), header...)
			codes = append(codes, resp.StatusCode)
		}
		return fmt.Sprint(codes)
	}
	const want = "[200 200 200 429 429]"
	if got := burst(Untrusted); got != want {
		t.Errorf("five requests at once: %s, want %s", got, want)
	}
	if got := burst(Trusted, "X-Forwarded-For", "198.51.100.77"); got != want {
		t.Errorf("five requests at once from a client the trusted hop reports: %s, want %s", got, want)
	}
	if resp, _ := get(t, tg.client(Trusted), tg.url("http", AppHost, "/limited.html"), "X-Forwarded-For", "192.0.2.8"); resp.StatusCode != http.StatusOK {
		t.Errorf("another client by the trusted hop's report: %s, want 200", resp.Status)
	}
}

func accessLog(t *testing.T, tg *Target) {
	c := tg.client(Trusted)
	get(t, c, tg.url("http", AppHost, "/quiet"), "X-Forwarded-For", "192.0.2.9")
	get(t, c, tg.url("http", AppHost, "/index.html?log=json"), "X-Forwarded-For", "192.0.2.9", "User-Agent", `probe "1"`)
	var line map[string]any
	tools.Eventually(t, 30*time.Second, "the access log line", func() error {
		for _, l := range tg.AccessLog(t) {
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
		"method": "GET", "uri": "/index.html?log=json", "status": 200.0, "bytes": float64(len(tg.Content["index.html"])),
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
}

func workers(t *testing.T, tg *Target) {
	if got := tg.Workers(t); got != 2 {
		t.Errorf("%d workers; want 2 for a CPU limit of 1500m", got)
	}
}
