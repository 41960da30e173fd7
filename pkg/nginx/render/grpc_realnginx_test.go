package render

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/grpcecho"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// startGRPCBackend serves grpcecho's health service on loopback, with TLS when creds is
// set, and returns its port.
func startGRPCBackend(t *testing.T, creds credentials.TransportCredentials) int32 {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	tools.Must(t, err)
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	srv := grpc.NewServer(opts...)
	grpcecho.Register(srv, "backend")
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return int32(lis.Addr().(*net.TCPAddr).Port)
}

// TestRealNginxProxiesGRPCInPlainTextAndTLSWithStatuses runs the real nginx
// in front of gRPC backends: clients call it in plain text on a port with
// h2c (to a plain backend, GRPC) and over TLS (to a TLS backend whose
// certificate nginx verifies, GRPCS). Unary and server-streaming calls go
// through, a backend's own error status reaches the client, and a backend
// that is down gives the client nginx's gRPC status, not an HTML page.
func TestRealNginxProxiesGRPCInPlainTextAndTLSWithStatuses(t *testing.T) {
	nginxBin := tools.Nginx(t)
	ca, err := tools.NewCA("gRPC backend CA", time.Hour)
	tools.Must(t, err)
	certPEM, keyPEM, err := ca.Issue(tools.Server("example.com"), time.Hour)
	tools.Must(t, err)
	backendCert, err := tls.X509KeyPair(certPEM, keyPEM)
	tools.Must(t, err)
	plainBackend := startGRPCBackend(t, nil)
	tlsBackend := startGRPCBackend(t, credentials.NewServerTLSFromCert(&backendCert))
	down := int32(tools.Port(t)) // nothing listens there

	h2cPort, downPort, tlsPort := int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t))
	grpcLocation := func(port int32, protocol string, tls *v1beta1.BackendTLS) []v1beta1.Location {
		return []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "greeter", Port: port, BackendProtocol: protocol, TLS: tls,
			Retry: &v1beta1.ProxyRetry{Conditions: []string{"error", "timeout"}, Tries: 2}}}}
	}
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "grpc", ContainerPort: h2cPort, H2C: true}, {Name: "down", ContainerPort: downPort, H2C: true}, {Name: "https", ContainerPort: tlsPort}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "grpc", Locations: grpcLocation(plainBackend, "GRPC", nil)},
			{Port: "down", Locations: grpcLocation(down, "GRPC", nil)},
			{Port: "https", TLS: &v1beta1.TLS{SecretName: "grpc-tls"}, Locations: grpcLocation(tlsBackend, "GRPCS",
				&v1beta1.BackendTLS{Hostname: "example.com", CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "backend-ca"}})},
		}},
	}
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), int32(tools.Port(t)), nil, func(paths *Paths) {
		writeCA(t, *paths, "Secret", "backend-ca", ca.CertPEM)
	})

	plain := grpc.WithTransportCredentials(insecure.NewCredentials())
	// testPaths's certificate for nginx is self-signed.
	overTLS := grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})) //nolint:gosec // see above
	clients := map[string]healthpb.HealthClient{
		"plain text (h2c) to GRPC": grpcClient(t, h2cPort, plain),
		"TLS to GRPCS":             grpcClient(t, tlsPort, overTLS),
	}
	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			waitForGRPC(t, proc, c)
			checkUnaryAndStreaming(t, c)
			_, err := c.Check(context.Background(), &healthpb.HealthCheckRequest{Service: grpcecho.RefusedService})
			if s := status.Convert(err); s.Code() != codes.FailedPrecondition || s.Message() != "the backend refuses" {
				t.Errorf("the backend's error reached the client as %v, want FailedPrecondition: the backend refuses", s)
			}
		})
	}
	t.Run("backend down", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := grpcClient(t, downPort, plain).Check(ctx, &healthpb.HealthCheckRequest{})
		if s := status.Convert(err); s.Code() != codes.Unavailable || s.Message() != "unavailable" {
			t.Errorf("a call to a down backend ended with %v, want nginx's gRPC status Unavailable: unavailable", s)
		}
	})
}

func grpcClient(t *testing.T, port int32, creds grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", port), creds)
	tools.Must(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return healthpb.NewHealthClient(conn)
}

// waitForGRPC calls Check until nginx answers.
func waitForGRPC(t *testing.T, proc *tools.Process, c healthpb.HealthClient) {
	t.Helper()
	tools.Eventually(t, 5*time.Second, "a gRPC call through nginx", func() error {
		if err := proc.Exited(); err != nil {
			return &tools.Stop{Err: err}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	})
}

func checkUnaryAndStreaming(t *testing.T, c healthpb.HealthClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("unary call: %v, %v", resp, err)
	}
	stream, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
	tools.Must(t, err)
	var got []healthpb.HealthCheckResponse_ServingStatus
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("server-streaming call after %v: %v", got, err)
			return
		}
		got = append(got, msg.GetStatus())
	}
	if fmt.Sprint(got) != fmt.Sprint(grpcecho.WatchStatuses) {
		t.Errorf("server-streaming call received %v, want %v", got, grpcecho.WatchStatuses)
	}
}

// TestRealNginxServesHTTP1AndH2COnOnePort: a port with h2c serves HTTP/1.1
// clients and HTTP/2 clients with prior knowledge side by side, as Gateway
// API's conformance suite expects of a listener that has both HTTPRoutes and
// GRPCRoutes. nginx does so from 1.25.1 on (and so does the nginx:1.27 the
// operator deploys); 1.22 answers an HTTP/1.1 client there in HTTP/2 (a
// SETTINGS frame, then GOAWAY), which is why the tests build nginx 1.26
// (hack/install-nginx.sh) instead of running Debian bookworm's.
func TestRealNginxServesHTTP1AndH2COnOnePort(t *testing.T) {
	nginxBin := tools.Nginx(t)
	port := int32(tools.Port(t))
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "web", ContainerPort: port, H2C: true}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "web", Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}},
		}},
	}
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), int32(tools.Port(t)), map[string]string{"index.html": "both\n"}, nil)

	h2c := &http.Protocols{}
	h2c.SetUnencryptedHTTP2(true)
	for name, tc := range map[string]struct {
		protocols *http.Protocols
		want      string
	}{
		"HTTP/1.1":                    {nil, "HTTP/1.1"},
		"HTTP/2 with prior knowledge": {h2c, "HTTP/2.0"},
	} {
		t.Run(name, func(t *testing.T) {
			client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{Protocols: tc.protocols}}
			defer client.CloseIdleConnections()
			req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
			tools.Must(t, err)
			resp, body := fetch(t, proc, client, req)
			if resp.StatusCode != http.StatusOK || body != "both\n" || resp.Proto != tc.want {
				t.Errorf("%s %d %q; want %s 200 %q", resp.Proto, resp.StatusCode, body, tc.want, "both\n")
			}
		})
	}
}
