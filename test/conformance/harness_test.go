package conformance

// Pure tests of the harness's parts (no cluster): the clients dial only
// through their dialer and do what the suite's own would, the check names
// what does not pass, the report lands where and as the gateway-api
// repository asks, the node gets every image the manifests name.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	confgrpc "sigs.k8s.io/gateway-api/conformance/utils/grpc"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// recordingDialer dials with net.Dialer and records the addresses.
type recordingDialer struct {
	mu    sync.Mutex
	addrs []string
}

func (d *recordingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

func (d *recordingDialer) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// echo answers as the suite's echo-basic does: the request it saw, as JSON.
func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "host": r.Host, "method": r.Method, "proto": r.Proto, "headers": r.Header})
}

func TestRoundTripperSendsEveryProtocolThroughItsDialerKeepingHostAndServerName(t *testing.T) {
	plain := httptest.NewUnstartedServer(http.HandlerFunc(echo))
	plain.Config.Protocols = new(http.Protocols)
	plain.Config.Protocols.SetHTTP1(true)
	plain.Config.Protocols.SetUnencryptedHTTP2(true)
	plain.Start()
	defer plain.Close()

	ca, err := tools.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(tools.Server("gateway.example"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	secure := httptest.NewUnstartedServer(http.HandlerFunc(echo))
	secure.EnableHTTP2 = true
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	secure.StartTLS()
	defer secure.Close()
	// What the suite's requests carry: the CA that the server's
	// certificate, for the request's server name, chains to.
	caPEM := ca.CertPEM

	cases := []struct {
		protocol, scheme, addr, wantProto string
	}{
		{"", "http", plain.Listener.Addr().String(), "HTTP/1.1"},
		{roundtripper.H2CPriorKnowledgeProtocol, "http", plain.Listener.Addr().String(), "HTTP/2.0"},
		{roundtripper.HTTPSProtocol, "https", secure.Listener.Addr().String(), "HTTP/1.1"},
		{roundtripper.H2Protocol, "https", secure.Listener.Addr().String(), "HTTP/2.0"},
	}
	for _, tc := range cases {
		name := tc.protocol
		if name == "" {
			name = "HTTP"
		}
		t.Run(name, func(t *testing.T) {
			d := &recordingDialer{}
			rt := NewRoundTripper(d.dial, config.DefaultTimeoutConfig(), false)
			defer rt.Close()
			req := roundtripper.Request{
				T: t, URL: url.URL{Scheme: tc.scheme, Host: tc.addr, Path: "/some/path"},
				Protocol: tc.protocol, Host: "", Headers: map[string][]string{"X-Test": {"1"}},
			}
			if tc.scheme == "https" {
				req.ServerName, req.ServerCertificate = "gateway.example", caPEM
			}
			creq, cresp, err := rt.CaptureRoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if cresp.StatusCode != http.StatusOK || creq.Path != "/some/path" || creq.Protocol != tc.wantProto || creq.Host != tc.addr {
				t.Errorf("captured %+v / %+v: want path /some/path, proto %s, host %s", creq, cresp, tc.wantProto, tc.addr)
			}
			if got := creq.Headers["X-Test"]; !slices.Equal(got, []string{"1"}) {
				t.Errorf("X-Test %v", got)
			}
			if dialed := d.dialed(); len(dialed) == 0 || slices.ContainsFunc(dialed, func(a string) bool { return a != tc.addr }) {
				t.Errorf("dialed %v, want only %s", dialed, tc.addr)
			}
		})
	}
}

// echoServer is the gRPC echo service: Echo and EchoTwo answer with the
// method, :authority and metadata seen; EchoThree is unimplemented, as the
// suite's is.
type echoServer struct {
	pb.UnimplementedGrpcEchoServer
}

func (echoServer) Echo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return answer(ctx, "Echo"), nil
}

func (echoServer) EchoTwo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return answer(ctx, "EchoTwo"), nil
}

func answer(ctx context.Context, method string) *pb.EchoResponse {
	md, _ := metadata.FromIncomingContext(ctx)
	a := &pb.Assertions{FullyQualifiedMethod: "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/" + method}
	if v := md.Get(":authority"); len(v) > 0 {
		a.Authority = v[0]
	}
	for k, vs := range md {
		for _, v := range vs {
			a.Headers = append(a.Headers, &pb.Header{Key: k, Value: v})
		}
	}
	return &pb.EchoResponse{Assertions: a}
}

func TestGRPCClientSendsThroughItsDialerWithAuthorityAndMetadataAndReportsCodes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterGrpcEchoServer(srv, echoServer{})
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	addr := l.Addr().String()

	d := &recordingDialer{}
	c := NewGRPCClient(d.dial)
	defer c.Close()
	resp, err := c.SendRPC(t, addr, confgrpc.ExpectedResponse{
		EchoTwoRequest:  &pb.EchoRequest{},
		RequestMetadata: &confgrpc.RequestMetadata{Authority: "grpc.example.com", Metadata: map[string]string{"x-test": "1"}},
	}, 5*time.Second)
	if err != nil || resp.Code != codes.OK {
		t.Fatalf("EchoTwo: %v, code %v", err, resp.Code)
	}
	as := resp.Response.GetAssertions()
	if !strings.HasSuffix(as.GetFullyQualifiedMethod(), "/EchoTwo") || as.GetAuthority() != "grpc.example.com" ||
		!slices.ContainsFunc(as.GetHeaders(), func(h *pb.Header) bool { return h.GetKey() == "x-test" && h.GetValue() == "1" }) {
		t.Errorf("assertions %v", as)
	}
	// No :authority asked: the address's.
	resp, err = c.SendRPC(t, addr, confgrpc.ExpectedResponse{EchoRequest: &pb.EchoRequest{}}, 5*time.Second)
	if err != nil || resp.Code != codes.OK || resp.Response.GetAssertions().GetAuthority() != addr {
		t.Fatalf("Echo: %v, code %v, authority %q", err, resp.Code, resp.Response.GetAssertions().GetAuthority())
	}
	// A failed RPC is a code, not an error.
	resp, err = c.SendRPC(t, addr, confgrpc.ExpectedResponse{EchoThreeRequest: &pb.EchoRequest{}}, 5*time.Second)
	if err != nil || resp.Code != codes.Unimplemented {
		t.Fatalf("EchoThree: %v, code %v: want Unimplemented", err, resp.Code)
	}
	if dialed := d.dialed(); len(dialed) == 0 || slices.ContainsFunc(dialed, func(a string) bool { return a != addr }) {
		t.Errorf("dialed %v, want only %s", dialed, addr)
	}
}

func TestWebSocketDialerConnectsThroughItsDialer(t *testing.T) {
	srv := httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) {
		var msg string
		if websocket.Message.Receive(ws, &msg) == nil {
			_ = websocket.Message.Send(ws, "echo: "+msg)
		}
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	d := &recordingDialer{}
	ws, err := (&WebSocketDialer{DialContext: d.dial}).Dial("ws://"+addr+"/ws", "", "http://gateway.example/")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var got string
	if err := websocket.Message.Send(ws, "hi"); err != nil {
		t.Fatal(err)
	}
	if err := websocket.Message.Receive(ws, &got); err != nil || got != "echo: hi" {
		t.Fatalf("received %q, %v", got, err)
	}
	if dialed := d.dialed(); !slices.Equal(dialed, []string{addr}) {
		t.Errorf("dialed %v, want [%s]", dialed, addr)
	}
}

func names(ts []suite.ConformanceTest) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ShortName)
	}
	return out
}

func TestExpectedTestsAreTheProfilesCoreTestsAndTheClaimedFeaturesExtendedOnes(t *testing.T) {
	http := suite.GatewayHTTPConformanceProfile
	core, extended := Expected(http, tests.ConformanceTests, CoreFeatures())
	if !slices.Contains(names(core), "HTTPRouteSimpleSameNamespace") || slices.Contains(names(core), "GRPCExactMethodMatching") ||
		slices.Contains(names(core), "HTTPRouteQueryParamMatching") {
		t.Errorf("GATEWAY-HTTP core tests: %v", names(core))
	}
	if len(extended) != 0 {
		t.Errorf("no feature claimed beyond core, yet extended tests %v", names(extended))
	}
	claimed := CoreFeatures().Insert(features.SupportHTTPRouteQueryParamMatching)
	_, extended = Expected(http, tests.ConformanceTests, claimed)
	if !slices.Equal(names(extended), []string{"HTTPRouteQueryParamMatching"}) {
		t.Errorf("extended tests of HTTPRouteQueryParamMatching: %v", names(extended))
	}
	grpcCore, _ := Expected(suite.GatewayGRPCConformanceProfile, tests.ConformanceTests, claimed)
	if !slices.Contains(names(grpcCore), "GRPCRouteWeight") || slices.Contains(names(grpcCore), "HTTPRouteSimpleSameNamespace") {
		t.Errorf("GATEWAY-GRPC core tests: %v", names(grpcCore))
	}
	run, notSupported := Runnable(tests.ConformanceTests, claimed)
	if len(run)+len(notSupported) != len(tests.ConformanceTests) || !slices.Contains(names(run), "HTTPRouteQueryParamMatching") ||
		slices.Contains(names(run), "HTTPRouteMethodMatching") {
		t.Errorf("runnable %v", names(run))
	}
}

func TestCheckNamesCoreAndClaimedExtendedTestsThatDidNotPass(t *testing.T) {
	claimed := CoreFeatures().Insert(features.SupportHTTPRouteQueryParamMatching, features.SupportGRPCRoute)
	outcomes := map[string]Outcome{}
	for _, p := range httpAndGRPC {
		core, extended := Expected(p, tests.ConformanceTests, claimed)
		for _, tc := range append(core, extended...) {
			outcomes[tc.ShortName] = Passed
		}
	}
	success := &confv1.ConformanceReport{}
	for _, p := range httpAndGRPC {
		success.ProfileReports = append(success.ProfileReports, confv1.ProfileReport{Name: string(p.Name), Core: confv1.Status{Result: confv1.Success}})
	}
	if problems := Check(httpAndGRPC, tests.ConformanceTests, claimed, outcomes, success, nil); len(problems) != 0 {
		t.Fatalf("all passed: %v", problems)
	}
	outcomes["HTTPRouteSimpleSameNamespace"] = Failed
	outcomes["HTTPRouteQueryParamMatching"] = Skipped
	delete(outcomes, "GRPCRouteWeight")
	problems := strings.Join(Check(httpAndGRPC, tests.ConformanceTests, claimed, outcomes, success, nil), "\n")
	for _, want := range []string{
		"GATEWAY-HTTP core tests not passed: 1 failed: HTTPRouteSimpleSameNamespace",
		"GATEWAY-HTTP extended tests of claimed features not passed: 1 skipped: HTTPRouteQueryParamMatching (HTTPRouteQueryParamMatching)",
		"GATEWAY-GRPC core tests not passed: 1 did not run: GRPCRouteWeight",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	// The report's own verdict counts too.
	success.ProfileReports[0].Core.Result = confv1.Failure
	if problems := Check(httpAndGRPC, tests.ConformanceTests, claimed, map[string]Outcome{}, success, func(string) bool { return false }); len(problems) != 0 {
		t.Errorf("nothing selected, yet %v", problems)
	}
	delete(outcomes, "GRPCRouteWeight")
	if problems := strings.Join(Check(httpAndGRPC, tests.ConformanceTests, claimed, outcomes, success, nil), "\n"); !strings.Contains(problems, `the report's GATEWAY-HTTP core result is "failure"`) {
		t.Errorf("problems lack the report's failure:\n%s", problems)
	}
}

func TestTheReportListsItsProfilesByNameWhateverOrderTheSuiteGaveThem(t *testing.T) {
	r := &confv1.ConformanceReport{Implementation: Implementation, ProfileReports: []confv1.ProfileReport{
		{Name: "GATEWAY-UDP"}, {Name: "GATEWAY-HTTP"}, {Name: "GATEWAY-TLS"}, {Name: "GATEWAY-GRPC"},
	}}
	data, err := MarshalReport(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "name: GATEWAY-"); ok {
			got = append(got, name)
		}
	}
	if want := []string{"GRPC", "HTTP", "TLS", "UDP"}; !slices.Equal(got, want) {
		t.Errorf("profiles in the order %v, want %v:\n%s", got, want, data)
	}
	if r.ProfileReports[0].Name != "GATEWAY-UDP" {
		t.Errorf("MarshalReport reordered the report it was given")
	}
}

func TestWriteReportReplacesTheChannelAndModesReportAndListsItInTheReadme(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v1.6.3", "nginx-operator")
	report := func(version string) *confv1.ConformanceReport {
		impl := Implementation
		impl.Version = version
		return &confv1.ConformanceReport{Implementation: impl, GatewayAPIVersion: "v1.6.3", GatewayAPIChannel: "standard", Mode: "default"}
	}
	if _, err := WriteReport(dir, report("1a2b3c4")); err != nil {
		t.Fatal(err)
	}
	path, err := WriteReport(dir, report("v0.1.0-3-g5d6e7f8"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "standard-v0.1.0-3-g5d6e7f8-default-report.yaml" {
		t.Errorf("report %s", path)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if !slices.Equal(files, []string{"README.md", "standard-v0.1.0-3-g5d6e7f8-default-report.yaml"}) {
		t.Errorf("files %v", files)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := "| standard | [v0.1.0-3-g5d6e7f8](https://github.com/nginx-operator/nginx-operator/commit/5d6e7f8) | default | [v0.1.0-3-g5d6e7f8 report](./standard-v0.1.0-3-g5d6e7f8-default-report.yaml) |"
	for _, want := range []string{row, "## Table of contents", "## Reproduce", "make conformance", "sigs.k8s.io/gateway-api/conformance` v1.6.3"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	for v, want := range map[string]string{
		"v0.2.0":                  "/releases/tag/v0.2.0",
		"1a2b3c4":                 "/commit/1a2b3c4",
		"1a2b3c4-dirty":           "/commit/1a2b3c4",
		"v0.2.0-1-gabcdef0-dirty": "/commit/abcdef0",
	} {
		if got := VersionURL(v); got != Implementation.URL+want {
			t.Errorf("VersionURL(%s) = %s", v, got)
		}
	}
}

func TestTheNodeGetsEveryImageOfTheSuitesGatewayManifests(t *testing.T) {
	b, err := BackendImages(conformance.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range b.GoImages {
		if g.Package != EchoBasicPackage {
			t.Errorf("image %s from %s", g.Name, g.Package)
		}
		got = append(got, g.Name)
	}
	for _, want := range []string{"registry.k8s.io/gateway-api/echo-basic:v1.5.1", "registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.3"} {
		if !slices.Contains(got, want) {
			t.Errorf("echo-basic images %v lack %s", got, want)
		}
	}
	if b.CoreDNS != "registry.k8s.io/coredns/coredns:v1.12.2" || len(b.Others) != 0 {
		t.Errorf("CoreDNS %q, others %v", b.CoreDNS, b.Others)
	}
	if sets.New(got...).Len() != len(got) {
		t.Errorf("an image twice: %v", got)
	}
}

// httpAndGRPC are the profiles Check is tested with, whichever Profiles
// the run has.
var httpAndGRPC = []suite.ConformanceProfile{suite.GatewayHTTPConformanceProfile, suite.GatewayGRPCConformanceProfile}
