// Command testserver is the program the real node's tests run in pods:
//
//	testserver serve ADDR [CERT KEY]
//	                         answer every HTTP request as test/echo's
//	                         handler named after the host: "hello from
//	                         <hostname>" and a line of JSON describing the
//	                         request as received, after sleeping for
//	                         ?sleep=<duration> and with ?status=<code>,
//	                         logging each request (method, path and query,
//	                         client) as it arrives; echo WebSocket messages
//	                         on /ws; serve HTTPS with CERT
//	                         and KEY when given
//	testserver serve-ports FIRST LAST
//	                         answer as serve does, without logging, on
//	                         every port from FIRST to LAST: one pod is
//	                         many endpoints of a Service
//	testserver grpc ADDR     serve test/grpcecho's gRPC health service,
//	                         named after the host, in plain text
//	testserver stream ECHO DNS [TLS CERT KEY]
//	                         greet each TCP connection on ECHO with "hello
//	                         from <hostname>" and echo its lines back, as
//	                         servers that speak first (SMTP, MySQL) do;
//	                         answer DNS queries over UDP on DNS, a TXT
//	                         query for any name with the host name; with
//	                         TLS CERT KEY, greet and echo on TLS too, over
//	                         TLS with CERT and KEY
//	testserver probe URL...  print the apiserver's version, read through the
//	                         kubernetes Service with the pod's service account,
//	                         and the body of each URL; exit 1 on any failure
//	testserver write FILE    create FILE, print the outcome and the owner and
//	                         mode of its directory; exit 1 when it fails
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"google.golang.org/grpc"

	"github.com/nginx-operator/nginx-operator/test/echo"
	"github.com/nginx-operator/nginx-operator/test/grpcecho"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testserver serve ADDR | probe URL...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		addr := ":8080"
		if len(os.Args) > 2 {
			addr = os.Args[2]
		}
		var cert, key string
		if len(os.Args) > 4 {
			cert, key = os.Args[3], os.Args[4]
		}
		serve(addr, cert, key)
	case "serve-ports":
		if len(os.Args) != 4 || !servePorts(os.Args[2], os.Args[3]) {
			os.Exit(1)
		}
	case "grpc":
		addr := ":9090"
		if len(os.Args) > 2 {
			addr = os.Args[2]
		}
		serveGRPC(addr)
	case "stream":
		if len(os.Args) != 4 && len(os.Args) != 7 {
			fmt.Fprintln(os.Stderr, "usage: testserver stream ECHO DNS [TLS CERT KEY]")
			os.Exit(2)
		}
		serveStreams(os.Args[2], os.Args[3], os.Args[4:])
	case "probe":
		if !probe(os.Args[2:]) {
			os.Exit(1)
		}
	case "write":
		if len(os.Args) != 3 || !write(os.Args[2]) {
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

// serve answers as echo.Handler named after the host, logging each
// request to stdout, which the pod's log keeps.
func serve(addr, cert, key string) {
	host, _ := os.Hostname()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("serving on %s\n", l.Addr())
	answer := echo.Handler(host)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("%s %s from %s\n", r.Method, r.URL.RequestURI(), r.RemoteAddr)
		answer.ServeHTTP(w, r)
	})
	if cert != "" {
		err = http.ServeTLS(l, handler, cert, key)
	} else {
		err = http.Serve(l, handler)
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// servePorts answers as echo.Handler on every port from first to last; it
// returns false when it cannot listen on one.
func servePorts(first, last string) bool {
	from, err1 := strconv.Atoi(first)
	to, err2 := strconv.Atoi(last)
	if err1 != nil || err2 != nil || from < 1 || to > 65535 || from > to {
		fmt.Fprintf(os.Stderr, "serve-ports: want two ports, the first not above the last: %q %q\n", first, last)
		return false
	}
	host, _ := os.Hostname()
	handler := echo.Handler(host)
	failed := make(chan error, 1)
	for port := from; port <= to; port++ {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return false
		}
		go func() { failed <- http.Serve(l, handler) }()
	}
	fmt.Printf("serving on ports %d to %d\n", from, to)
	fmt.Fprintln(os.Stderr, <-failed)
	return false
}

// serveGRPC answers gRPC health calls as grpcecho named after the host.
func serveGRPC(addr string) {
	host, _ := os.Hostname()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("serving gRPC on %s\n", l.Addr())
	srv := grpc.NewServer()
	grpcecho.Register(srv, host)
	fmt.Fprintln(os.Stderr, srv.Serve(l))
	os.Exit(1)
}

// serveStreams greets and echoes on TCP at echoAddr, answers DNS over UDP
// at dnsAddr and, with tlsArgs (ADDR CERT KEY), greets and echoes over
// TLS at ADDR, until one of them fails, or until SIGTERM, when it drains
// (drainStreams).
func serveStreams(echoAddr, dnsAddr string, tlsArgs []string) {
	host, _ := os.Hostname()
	failed := make(chan error, 3)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	var open atomic.Int64
	l, err := net.Listen("tcp", echoAddr)
	exitOn(err)
	listeners := []net.Listener{l}
	go func() { failed <- greetAndEcho(l, host, &open) }()
	pc, err := net.ListenPacket("udp", dnsAddr)
	exitOn(err)
	go func() { failed <- answerDNS(pc, host) }()
	if len(tlsArgs) == 3 {
		cert, err := tls.LoadX509KeyPair(tlsArgs[1], tlsArgs[2])
		exitOn(err)
		tl, err := tls.Listen("tcp", tlsArgs[0], &tls.Config{Certificates: []tls.Certificate{cert}})
		exitOn(err)
		listeners = append(listeners, tl)
		go func() { failed <- greetAndEcho(tl, host, &open) }()
		fmt.Printf("greeting over TLS on %s\n", tl.Addr())
	}
	fmt.Printf("greeting on %s, answering DNS on %s\n", l.Addr(), pc.LocalAddr())
	select {
	case err := <-failed:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	case <-stop:
		drainStreams(listeners, &open)
	}
}

// drainStreams stops as a server behind a Service should: it accepts no
// new connection (the next is refused, and a proxy tries another pod) and
// lets the open ones end as their clients end them, for up to 10 s.
// Exiting at SIGTERM reset them: clients of a pod nginx had sent a
// connection to just before the pod left its configuration lost it.
func drainStreams(listeners []net.Listener, open *atomic.Int64) {
	for _, l := range listeners {
		l.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("drained: %d connections still open\n", open.Load())
	os.Exit(0)
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// greetAndEcho accepts connections on l: each gets "hello from <host>" at
// once, before the client says anything, and then every line it sends
// back. It logs how each ended, which the pod's log keeps, and counts
// those open.
func greetAndEcho(l net.Listener, host string, open *atomic.Int64) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		open.Add(1)
		go func() {
			defer open.Add(-1)
			defer c.Close()
			lines, err := echoLines(c, host)
			fmt.Printf("connection from %s: %d lines, %v\n", c.RemoteAddr(), lines, err)
		}()
	}
}

func echoLines(c net.Conn, host string) (int, error) {
	if _, err := fmt.Fprintf(c, "hello from %s\n", host); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	for n := 0; ; n++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return n, err
		}
		if _, err := io.WriteString(c, line); err != nil {
			return n, err
		}
	}
}

// answerDNS answers each DNS query that arrives on pc (dnsAnswer).
func answerDNS(pc net.PacketConn, host string) error {
	buf := make([]byte, 4096)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return err
		}
		answer, err := dnsAnswer(buf[:n], host)
		if err == nil {
			_, err = pc.WriteTo(answer, from)
		}
		if err != nil {
			fmt.Printf("DNS query from %s: %v\n", from, err)
		}
	}
}

// dnsAnswer is the authoritative answer to query: for a TXT query, of any
// name, one record holding host; for another type, no record.
func dnsAnswer(query []byte, host string) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeTXT {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassINET}
		if err := b.TXTResource(rh, dnsmessage.TXTResource{TXT: []string{host}}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

func probe(urls []string) bool {
	ok := true
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	token, err1 := os.ReadFile(sa + "token")
	ca, err2 := os.ReadFile(sa + "ca.crt")
	if host == "" || err1 != nil || err2 != nil {
		fmt.Printf("apiserver: FAIL: no in-cluster configuration (host %q, %v, %v)\n", host, err1, err2)
		ok = false
	} else {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		req, _ := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort(host, port)+"/version", nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		body, err := get(client, req)
		var v struct{ GitVersion string }
		if err == nil {
			err = json.Unmarshal(body, &v)
		}
		if err != nil {
			fmt.Printf("apiserver: FAIL: %v\n", err)
			ok = false
		} else {
			fmt.Printf("apiserver: %s\n", v.GitVersion)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, u := range urls {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		var body []byte
		if err == nil {
			body, err = get(client, req)
		}
		if err != nil {
			fmt.Printf("GET %s: FAIL: %v\n", u, err)
			ok = false
			continue
		}
		fmt.Printf("GET %s: %s\n", u, strings.TrimSpace(string(body)))
	}
	return ok
}

func write(file string) bool {
	if st, err := os.Stat(filepath.Dir(file)); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			fmt.Printf("directory %s: owner %d:%d mode %v; I am %d:%d groups %v\n",
				filepath.Dir(file), sys.Uid, sys.Gid, st.Mode(), os.Getuid(), os.Getgid(), groups())
		}
	}
	if err := os.WriteFile(file, []byte("written\n"), 0o644); err != nil {
		fmt.Printf("write %s: FAIL: %v\n", file, err)
		return false
	}
	fmt.Printf("write %s: ok\n", file)
	return true
}

func groups() []int {
	g, _ := os.Getgroups()
	return g
}

func get(c *http.Client, req *http.Request) ([]byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	return body, nil
}
