package conformance

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	confgrpc "sigs.k8s.io/gateway-api/conformance/utils/grpc"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
	"sigs.k8s.io/gateway-api/conformance/utils/tlog"
	confws "sigs.k8s.io/gateway-api/conformance/utils/websocket"
)

// DialFunc opens a connection as net.Dialer.DialContext does. The suite's
// clients connect with one that starts on the real node (node.DialContext):
// a Gateway's address is a Service's ClusterIP, which only kube-proxy's
// rules in the node's network namespace translate.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Clients are the suite's HTTP, gRPC and WebSocket clients, every
// connection opened by dial. Close ends what they keep open.
type Clients struct {
	RoundTripper *RoundTripper
	GRPC         *GRPCClient
	WebSocket    *WebSocketDialer
}

// NewClients returns the suite's clients dialing with dial; debug makes the
// HTTP client log every request and response, as the suite's -debug does.
func NewClients(dial DialFunc, timeouts config.TimeoutConfig, debug bool) *Clients {
	return &Clients{
		RoundTripper: NewRoundTripper(dial, timeouts, debug),
		GRPC:         NewGRPCClient(dial),
		WebSocket:    &WebSocketDialer{DialContext: dial},
	}
}

// Close ends the clients' relays and gRPC connections.
func (c *Clients) Close() {
	c.RoundTripper.Close()
	c.GRPC.Close()
}

// RoundTripper is the suite's own HTTP client (roundtripper.DefaultRoundTripper),
// which does everything a request asks (protocol, TLS, redirects, the echo
// server's JSON), with its connections dialed by a DialFunc. The suite's
// client takes a dialer for HTTP/1.1 and HTTPS only; its HTTP/2 transports
// (roundtripper.H2Protocol, H2CPriorKnowledgeProtocol) dial with a plain
// net.Dialer, so for those a loopback relay, one per destination, passes
// the bytes to a connection the DialFunc opened: the request keeps its Host
// (the destination, when the request names none) and TLS server name, so
// the Gateway sees what it would without the relay.
type RoundTripper struct {
	suite *roundtripper.DefaultRoundTripper
	dial  DialFunc

	mu     sync.Mutex
	relays map[string]*relay // destination host:port -> relay
	closed bool
}

var _ roundtripper.RoundTripper = (*RoundTripper)(nil)

// NewRoundTripper returns a RoundTripper dialing with dial.
func NewRoundTripper(dial DialFunc, timeouts config.TimeoutConfig, debug bool) *RoundTripper {
	return &RoundTripper{
		suite:  &roundtripper.DefaultRoundTripper{Debug: debug, TimeoutConfig: timeouts, CustomDialContext: dial},
		dial:   dial,
		relays: map[string]*relay{},
	}
}

// CaptureRoundTrip makes the request and returns what the echo server saw
// and what the client received, as the suite's own client does.
func (r *RoundTripper) CaptureRoundTrip(req roundtripper.Request) (*roundtripper.CapturedRequest, *roundtripper.CapturedResponse, error) {
	if req.Protocol != roundtripper.H2Protocol && req.Protocol != roundtripper.H2CPriorKnowledgeProtocol {
		return r.suite.CaptureRoundTrip(req)
	}
	dest := req.URL.Host
	if _, _, err := net.SplitHostPort(dest); err != nil {
		port := "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
		dest = net.JoinHostPort(req.URL.Hostname(), port)
	}
	local, err := r.relay(dest)
	if err != nil {
		return nil, nil, err
	}
	if req.Host == "" {
		req.Host = req.URL.Host
	}
	u := req.URL
	u.Host = local
	req.URL = u
	return r.suite.CaptureRoundTrip(req)
}

// relay is the address of the loopback relay to dest, started on first use.
func (r *RoundTripper) relay(dest string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", errors.New("the round tripper is closed")
	}
	if rl, ok := r.relays[dest]; ok {
		return rl.addr(), nil
	}
	rl, err := startRelay(dest, r.dial)
	if err != nil {
		return "", err
	}
	r.relays[dest] = rl
	return rl.addr(), nil
}

// Close stops the relays.
func (r *RoundTripper) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, rl := range r.relays {
		rl.close()
	}
	r.relays = map[string]*relay{}
}

// relay accepts connections on a loopback port and joins each to a new
// connection to dest that dial opens; a failed dial closes the accepted
// connection, as a refused one would end.
type relay struct {
	l     net.Listener
	dest  string
	dial  DialFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startRelay(dest string, dial DialFunc) (*relay, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rl := &relay{l: l, dest: dest, dial: dial, conns: map[net.Conn]struct{}{}}
	rl.wg.Add(1)
	go rl.serve()
	return rl, nil
}

func (rl *relay) addr() string { return rl.l.Addr().String() }

func (rl *relay) serve() {
	defer rl.wg.Done()
	for {
		c, err := rl.l.Accept()
		if err != nil {
			return
		}
		rl.wg.Add(1)
		go func() {
			defer rl.wg.Done()
			rl.join(c)
		}()
	}
}

func (rl *relay) join(c net.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	up, err := rl.dial(ctx, "tcp", rl.dest)
	cancel()
	if err != nil {
		c.Close()
		return
	}
	if !rl.track(c, up) {
		return
	}
	defer rl.untrack(c, up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Pass the end of one direction on; the other may go on.
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}

// track records an open pair so that close can end it; false when the
// relay is closing, having closed both.
func (rl *relay) track(conns ...net.Conn) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.conns == nil {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		rl.conns[c] = struct{}{}
	}
	return true
}

func (rl *relay) untrack(conns ...net.Conn) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(rl.conns, c)
	}
}

func (rl *relay) close() {
	rl.l.Close()
	rl.mu.Lock()
	for c := range rl.conns {
		c.Close()
	}
	rl.conns = nil
	rl.mu.Unlock()
	rl.wg.Wait()
}

// GRPCClient sends the suite's RPCs to the echo server's GrpcEcho service
// over connections a DialFunc opens (the suite's own client dials with
// gRPC's default dialer only). It keeps a connection per test case,
// address and :authority until Close (the harness closes them after each
// test), as the suite's own client keeps one for a case's tries, and dials
// one anew after an RPC failed with Internal or Unavailable. One
// connection for all of a test's cases would not be the suite's: after a
// reload nginx's old workers keep serving the HTTP/2 connections they have
// (for up to worker_shutdown_timeout) with the old configuration, so a
// connection a test's first case opened before its route loaded would
// answer every later case from the configuration before it. Like the suite's client, it reports a failed RPC by the
// response's Code, not as an error. Safe for concurrent use.
type GRPCClient struct {
	dial DialFunc

	mu    sync.Mutex
	conns map[grpcTarget]*grpc.ClientConn
}

type grpcTarget struct{ test, address, authority string }

var _ confgrpc.Client = (*GRPCClient)(nil)

// NewGRPCClient returns a GRPCClient dialing with dial.
func NewGRPCClient(dial DialFunc) *GRPCClient {
	return &GRPCClient{dial: dial, conns: map[grpcTarget]*grpc.ClientConn{}}
}

// SendRPC sends the request expected names (Echo, EchoTwo or EchoThree) to
// address, with its metadata and :authority, and returns the response, the
// headers and trailers and the status code.
func (c *GRPCClient) SendRPC(t *testing.T, address string, expected confgrpc.ExpectedResponse, timeout time.Duration) (*confgrpc.Response, error) {
	t.Helper()
	target := grpcTarget{test: t.Name(), address: address}
	if md := expected.RequestMetadata; md != nil {
		target.authority = md.Authority
	}
	conn, err := c.conn(target)
	if err != nil {
		return &confgrpc.Response{}, err
	}
	resp := &confgrpc.Response{Headers: &metadata.MD{}, Trailers: &metadata.MD{}}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if md := expected.RequestMetadata; md != nil && len(md.Metadata) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, metadata.New(md.Metadata))
	}
	stub := pb.NewGrpcEchoClient(conn)
	opts := []grpc.CallOption{grpc.Header(resp.Headers), grpc.Trailer(resp.Trailers)}
	var method string
	switch {
	case expected.EchoRequest != nil:
		method = "Echo"
		resp.Response, err = stub.Echo(ctx, expected.EchoRequest, opts...)
	case expected.EchoTwoRequest != nil:
		method = "EchoTwo"
		resp.Response, err = stub.EchoTwo(ctx, expected.EchoTwoRequest, opts...)
	case expected.EchoThreeRequest != nil:
		method = "EchoThree"
		resp.Response, err = stub.EchoThree(ctx, expected.EchoThreeRequest, opts...)
	default:
		return resp, errors.New("the expected response names no request")
	}
	if err != nil {
		resp.Code = status.Code(err)
		tlog.Logf(t, "RPC %s to %s (authority %q): %v", method, address, target.authority, err)
		if resp.Code == codes.Internal || resp.Code == codes.Unavailable {
			c.drop(target, conn)
		}
		return resp, nil
	}
	resp.Code = codes.OK
	return resp, nil
}

func (c *GRPCClient) conn(target grpcTarget) (*grpc.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn, ok := c.conns[target]; ok {
		return conn, nil
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// A test's first RPCs may meet a Gateway not listening yet:
		// retry within a second, not after gRPC's backoff of up to two
		// minutes, which outlasts a test's wait for a consistent answer.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return c.dial(ctx, "tcp", addr)
		}),
	}
	if target.authority != "" {
		opts = append(opts, grpc.WithAuthority(target.authority))
	}
	// passthrough: the address is an IP and port, dialed as it is.
	conn, err := grpc.NewClient("passthrough:///"+target.address, opts...)
	if err != nil {
		return nil, fmt.Errorf("gRPC client for %s: %w", target.address, err)
	}
	c.conns[target] = conn
	return conn, nil
}

func (c *GRPCClient) drop(target grpcTarget, conn *grpc.ClientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns[target] == conn {
		delete(c.conns, target)
		conn.Close()
	}
}

// Close closes every connection; an RPC sent later dials anew.
func (c *GRPCClient) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for t, conn := range c.conns {
		conn.Close()
		delete(c.conns, t)
	}
}

// WebSocketDialer opens the suite's WebSocket connections (ws://, and wss://
// verified against the system's roots) over a connection DialContext opens, where
// the suite's own dialer (websocket.Dial) dials with net.Dial.
type WebSocketDialer struct {
	DialContext DialFunc
}

var _ confws.Dialer = (*WebSocketDialer)(nil)

// Dial opens a WebSocket to url, offering protocol when not empty, with
// the Origin origin.
func (d *WebSocketDialer) Dial(url, protocol, origin string) (*websocket.Conn, error) {
	cfg, err := websocket.NewConfig(url, origin)
	if err != nil {
		return nil, err
	}
	if protocol != "" {
		cfg.Protocol = []string{protocol}
	}
	loc := cfg.Location
	port := loc.Port()
	if port == "" {
		port = "80"
		if loc.Scheme == "wss" {
			port = "443"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var conn net.Conn
	conn, err = d.DialContext(ctx, "tcp", net.JoinHostPort(loc.Hostname(), port))
	if err != nil {
		return nil, fmt.Errorf("websocket %s: %w", url, err)
	}
	if loc.Scheme == "wss" {
		tc := tls.Client(conn, &tls.Config{ServerName: loc.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("websocket %s: %w", url, err)
		}
		conn = tc
	}
	ws, err := websocket.NewClient(cfg, conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("websocket %s: %w", url, err)
	}
	return ws, nil
}
