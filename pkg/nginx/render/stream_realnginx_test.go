package render

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// serveTCP accepts connections on a loopback port until the test ends and
// hands each to handle; it returns the port.
func serveTCP(t *testing.T, l net.Listener, handle func(net.Conn)) int32 {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

func loopbackListener(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	tools.Must(t, err)
	return l
}

// greetAndEcho speaks first, as SMTP and MySQL servers do ("hello <name>"),
// then echoes every line.
func greetAndEcho(name string) func(net.Conn) {
	return func(c net.Conn) {
		fmt.Fprintf(c, "hello %s\n", name)
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			fmt.Fprint(c, line)
		}
	}
}

// echoProxyHeader reads the PROXY protocol line the connection starts
// with, completes the TLS handshake that follows with cert, and answers
// with the line.
func echoProxyHeader(cert tls.Certificate) func(net.Conn) {
	return func(c net.Conn) {
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		tc := tls.Server(readerConn{c, r}, &tls.Config{Certificates: []tls.Certificate{cert}})
		fmt.Fprint(tc, line)
		tc.Close()
	}
}

// readerConn is a connection whose first bytes were read into a buffer.
type readerConn struct {
	net.Conn
	r *bufio.Reader
}

func (c readerConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// serveUDP answers each datagram on a loopback port with "pong <payload>".
func serveUDP(t *testing.T) int32 {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	tools.Must(t, err)
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(append([]byte("pong "), buf[:n]...), from)
		}
	}()
	return int32(pc.LocalAddr().(*net.UDPAddr).Port)
}

// streamClient talks to nginx's stream ports on loopback.
type streamClient struct {
	proc *tools.Process
}

// dial connects to port, over TLS asking for serverName when it is not
// empty, retrying while nginx starts.
func (c streamClient) dial(t *testing.T, port int32, serverName string) net.Conn {
	t.Helper()
	var conn net.Conn
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	tools.Eventually(t, 5*time.Second, "connecting to "+addr, func() error {
		if err := c.proc.Exited(); err != nil {
			return &tools.Stop{Err: err}
		}
		var err error
		if serverName == "" {
			conn, err = net.DialTimeout("tcp", addr, time.Second)
		} else {
			conn, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		}
		return err
	})
	t.Cleanup(func() { conn.Close() })
	tools.Must(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	return conn
}

// lines reads n lines from conn, after writing send (when not empty).
func lines(t *testing.T, conn net.Conn, r *bufio.Reader, send string, n int) []string {
	t.Helper()
	if send != "" {
		if _, err := fmt.Fprint(conn, send); err != nil {
			t.Fatalf("writing %q: %v", send, err)
		}
	}
	var out []string
	for range n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading after %q: %v (got %q)", send, err, out)
		}
		out = append(out, strings.TrimSuffix(line, "\n"))
	}
	return out
}

// peerSubject is the common name of the certificate conn's server showed.
func peerSubject(conn net.Conn) string {
	tc, ok := conn.(*tls.Conn)
	if !ok || len(tc.ConnectionState().PeerCertificates) == 0 {
		return ""
	}
	return tc.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestRealNginxRelaysStreamsAsClientsExpect runs the real nginx on loopback
// with streams of every kind and checks what a client sees: a server that
// speaks first is heard at once (no reading of the client's first bytes on
// a port of its own); UDP datagrams are answered; on one port, a TLS name
// passed through reaches the backend's own certificate while another name
// is terminated by nginx's HTTPS server, which sees the client's address
// and port; a backend asking for the PROXY protocol gets the client's
// address through the router; a TLS stream terminates with nginx's
// certificate; a name nothing takes is closed; and an open connection
// outlives a reload that changes the configuration.
// longName is a server name of 253 characters.
var longName = strings.Repeat(strings.Repeat("a", 62)+".", 3) + strings.Repeat("b", 60) + ".io"

func TestRealNginxRelaysStreamsAsClientsExpect(t *testing.T) {
	nginxBin := tools.Nginx(t)
	backendCA, err := tools.NewCA("backend CA", time.Hour)
	tools.Must(t, err)
	certPEM, keyPEM, err := backendCA.Issue(tools.Server("db.example.com"), time.Hour)
	tools.Must(t, err)
	backendCert, err := tls.X509KeyPair(certPEM, keyPEM)
	tools.Must(t, err)

	plain := serveTCP(t, loopbackListener(t), greetAndEcho("plain"))
	passthrough := serveTCP(t, tls.NewListener(loopbackListener(t), &tls.Config{Certificates: []tls.Certificate{backendCert}}), greetAndEcho("db"))
	proxied := serveTCP(t, loopbackListener(t), echoProxyHeader(backendCert))
	dns := serveUDP(t)
	web := serveTCP(t, loopbackListener(t), func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		body := fmt.Sprintf("xff=%s port=%s proto=%s", req.Header.Get("X-Forwarded-For"), req.Header.Get("X-Forwarded-Port"), req.Header.Get("X-Forwarded-Proto"))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	})

	tcpPort, udpPort, sharedPort, tlsPort, namedOnly, healthPort := int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t))
	backend := func(port int32) []v1beta1.Backend { return []v1beta1.Backend{{Service: "svc", Port: port}} }
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{
			{Name: "tcp", ContainerPort: tcpPort}, {Name: "udp", ContainerPort: udpPort, Protocol: corev1.ProtocolUDP},
			{Name: "shared", ContainerPort: sharedPort}, {Name: "tls", ContainerPort: tlsPort}, {Name: "named", ContainerPort: namedOnly},
		},
		Config: v1beta1.NginxConfig{
			Servers: []v1beta1.Server{{Port: "shared", ServerNames: []string{"www.example.com"}, TLS: &v1beta1.TLS{SecretName: "www"},
				Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "svc", Port: web}}}},
				// A name under a stream's wildcard.
				{Port: "shared", ServerNames: []string{"www.proxied.example.com"}, TLS: &v1beta1.TLS{SecretName: "www"},
					Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "svc", Port: web}}}}},
			Streams: []v1beta1.Stream{
				{Port: "tcp", Backends: backend(plain)},
				{Port: "udp", Backends: backend(dns), ExpectedResponses: ptr.To[int32](1)},
				{Port: "shared", ServerNames: []string{"db.example.com"}, Backends: backend(passthrough)},
				{Port: "shared", ServerNames: []string{"*.proxied.example.com"}, ProxyProtocol: true, Backends: backend(proxied)},
				{Port: "tls", TLS: &v1beta1.StreamTLS{SecretName: "broker"}, Backends: backend(plain)},
				{Port: "named", ServerNames: []string{"only.example.com"}, Backends: backend(passthrough)},
				// The longest name the schema allows: nginx's default map
				// buckets refuse it.
				{Port: "named", ServerNames: []string{longName}, Backends: backend(passthrough)},
			},
		},
	}
	admitted := validationtest.Spec(t, spec)
	var paths Paths
	proc := startRendered(t, nginxBin, admitted, healthPort, nil, func(p *Paths) { paths = *p })
	c := streamClient{proc}

	t.Run("TCP: the server speaks first and echoes", func(t *testing.T) {
		conn := c.dial(t, tcpPort, "")
		r := bufio.NewReader(conn)
		if got := lines(t, conn, r, "", 1); got[0] != "hello plain" {
			t.Errorf("first line %q, want the backend's greeting before the client sent anything", got[0])
		}
		if got := lines(t, conn, r, "ping\n", 1); got[0] != "ping" {
			t.Errorf("echo %q", got[0])
		}
	})

	t.Run("UDP: a datagram is answered", func(t *testing.T) {
		conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", udpPort))
		tools.Must(t, err)
		defer conn.Close()
		buf := make([]byte, 64)
		tools.Eventually(t, 5*time.Second, "a UDP answer", func() error {
			conn.Write([]byte("query"))
			conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, err := conn.Read(buf)
			if err == nil && string(buf[:n]) != "pong query" {
				return &tools.Stop{Err: fmt.Errorf("answer %q", buf[:n])}
			}
			return err
		})
	})

	t.Run("one port: a name passed through to the backend's certificate, another terminated by nginx", func(t *testing.T) {
		conn := c.dial(t, sharedPort, "db.example.com")
		if got := peerSubject(conn); got != "db.example.com" {
			t.Errorf("passthrough: certificate of %q, want the backend's own (db.example.com)", got)
		}
		tc := conn.(*tls.Conn)
		if err := tc.ConnectionState().PeerCertificates[0].CheckSignatureFrom(backendCA.Cert); err != nil {
			t.Errorf("passthrough: the certificate is not the backend's: %v", err)
		}
		if got := lines(t, conn, bufio.NewReader(conn), "", 1); got[0] != "hello db" {
			t.Errorf("passthrough: %q", got[0])
		}

		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "www.example.com", InsecureSkipVerify: true}}}
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/", sharedPort), nil)
		resp, body := fetch(t, proc, client, req)
		if resp.TLS == nil || resp.TLS.PeerCertificates[0].Subject.CommonName != "example.com" {
			t.Errorf("terminated: not nginx's own certificate (example.com): %+v", resp.TLS)
		}
		// The client named the port it used in Host.
		if want := fmt.Sprintf("xff=127.0.0.1 port=%d proto=https", sharedPort); resp.StatusCode != 200 || body != want {
			t.Errorf("terminated: %d %q, want %q: the HTTPS server behind the router sees the client's address and port", resp.StatusCode, body, want)
		}
		// A Host without a port came through the Service: the Service port
		// of a port with TLS servers is 443 (serviceport.Standard).
		req.Host = "www.example.com"
		if resp, body := fetch(t, proc, client, req); resp.StatusCode != 200 || body != "xff=127.0.0.1 port=443 proto=https" {
			t.Errorf("terminated, Host without a port: %d %q, want the Service port 443", resp.StatusCode, body)
		}
	})

	t.Run("a server's name under a stream's wildcard reaches the server", func(t *testing.T) {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "www.proxied.example.com", InsecureSkipVerify: true}}}
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/", sharedPort), nil)
		if resp, body := fetch(t, proc, client, req); resp.StatusCode != 200 || !strings.HasPrefix(body, "xff=127.0.0.1") {
			t.Errorf("%d %q, want the server's answer, not the *.proxied.example.com stream's", resp.StatusCode, body)
		}
	})

	t.Run("PROXY protocol: the backend learns the client's address through the router", func(t *testing.T) {
		conn := c.dial(t, sharedPort, "api.proxied.example.com")
		local := conn.LocalAddr().(*net.TCPAddr)
		got := lines(t, conn, bufio.NewReader(conn), "", 1)[0]
		want := fmt.Sprintf("PROXY TCP4 127.0.0.1 127.0.0.1 %d %d\r", local.Port, sharedPort)
		if got != want {
			t.Errorf("PROXY header %q, want %q", got, want)
		}
	})

	t.Run("TLS terminated by a stream", func(t *testing.T) {
		conn := c.dial(t, tlsPort, "broker.example.com")
		if got := peerSubject(conn); got != "example.com" {
			t.Errorf("certificate of %q, want nginx's (example.com)", got)
		}
		if got := lines(t, conn, bufio.NewReader(conn), "", 1); got[0] != "hello plain" {
			t.Errorf("%q", got[0])
		}
	})

	t.Run("a name no stream takes is closed", func(t *testing.T) {
		addr := fmt.Sprintf("127.0.0.1:%d", namedOnly)
		c.dial(t, namedOnly, "only.example.com") // nginx is up
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{ServerName: "other.example.com", InsecureSkipVerify: true})
		if err == nil {
			conn.Close()
			t.Fatalf("a TLS handshake for other.example.com succeeded on a port whose one stream is only.example.com's")
		}
	})

	t.Run("an open connection outlives a reload that changes the configuration", func(t *testing.T) {
		conn := c.dial(t, tcpPort, "")
		r := bufio.NewReader(conn)
		lines(t, conn, r, "", 1)
		// An unrelated change: a stream on another port.
		extra := int32(tools.Port(t))
		changed := admitted.DeepCopy()
		changed.Ports = append(changed.Ports, v1beta1.Port{Name: "extra", ContainerPort: extra, Protocol: corev1.ProtocolTCP})
		changed.Config.Streams = append(changed.Config.Streams, v1beta1.Stream{Port: "extra", Backends: backend(plain), ConnectTimeoutSeconds: 5, IdleTimeoutSeconds: 600})
		changed = validationtest.Spec(t, *changed)
		opts := renderOptions(changed, paths)
		opts.HealthPort, opts.Services = int(healthPort), localEndpoints(changed)
		cfg, err := Config(changed, opts)
		tools.Must(t, err)
		tools.Must(t, os.WriteFile(filepath.Join(paths.Temp, "nginx.conf"), cfg, 0o644))
		tools.Must(t, syscall.Kill(proc.PID(), syscall.SIGHUP))
		// The new configuration is served...
		fresh := c.dial(t, extra, "")
		if got := lines(t, fresh, bufio.NewReader(fresh), "", 1); got[0] != "hello plain" {
			t.Fatalf("after the reload: %q", got)
		}
		// ...and the connection opened before it still relays, both ways.
		for i := range 3 {
			want := fmt.Sprintf("still here %d", i)
			if got := lines(t, conn, r, want+"\n", 1); got[0] != want {
				t.Errorf("the connection opened before the reload: %q, want %q", got[0], want)
			}
			time.Sleep(500 * time.Millisecond)
		}
	})
}
