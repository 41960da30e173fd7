package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/flags"
	confgrpc "sigs.k8s.io/gateway-api/conformance/utils/grpc"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// backends are the images the suite's manifests run, which the node
// provides (BackendImages).
var backends = func() Backends {
	b, err := BackendImages(conformance.Manifests)
	if err != nil {
		panic(fmt.Sprintf("reading the conformance suite's manifests: %v", err))
	}
	return b
}()

var env = framework.NewEnv(realcluster.FrameworkOptions(realcluster.Options{
	GoImages:     backends.GoImages,
	CoreDNSImage: backends.CoreDNS,
}))

func TestMain(m *testing.M) {
	// The clients' controller-runtime logger: nothing worth reading.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(env.Main(m))
}

// classWait is how long the operator has to accept the GatewayClass and
// say what it supports once it runs.
const classWait = time.Minute

// runBudget is how long the suite's tests may take before their waits are
// cut (Degraded): a passing run takes a few minutes; failing tests wait
// out their timeouts, and with every test failing the run would take
// longer than make test's -timeout allows a package.
const runBudget = 8 * time.Minute

// The suite's backends, run from its own manifests (in a namespace of the
// test's), answer the harness's clients from the node: echo-basic over
// HTTP/1.1, h2c (through the relay), WebSocket and gRPC, through their
// Services' ClusterIPs; the CoreDNS pod runs. What the conformance test
// then finds failing is the Gateway's doing, not the harness's.
func TestTheSuitesBackendsAnswerItsClientsFromTheNode(t *testing.T) {
	c := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, _, cl, cs := adminClients(t, c)
	ns := framework.Namespace(t, cs)

	data, err := fs.ReadFile(conformance.Manifests, "base/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := framework.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	const httpBackend, grpcBackend, dns = "infra-backend-v1", "grpc-infra-backend-v1", "coredns"
	want := map[string]bool{
		"Deployment/" + httpBackend: true, "Service/" + httpBackend: true,
		"Deployment/" + grpcBackend: true, "Service/" + grpcBackend: true,
		"Deployment/" + dns: true, "Service/" + dns: true, "ConfigMap/" + dns: true,
	}
	for _, o := range objs {
		if !want[o.GetKind()+"/"+o.GetName()] || o.GetNamespace() != suite.InfrastructureNamespace {
			continue
		}
		delete(want, o.GetKind()+"/"+o.GetName())
		o.SetNamespace(ns)
		if err := cl.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if len(want) > 0 {
		t.Fatalf("the suite's base manifests lack %v", want)
	}
	began := time.Now()
	tools.Eventually(t, 2*time.Minute, "the backends' Deployments available", func() error {
		for _, name := range []string{httpBackend, grpcBackend, dns} {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Status.AvailableReplicas == 0 || d.Status.AvailableReplicas != d.Status.Replicas {
				return fmt.Errorf("%s: %d of %d replicas available\n%s", name, d.Status.AvailableReplicas, d.Status.Replicas, realcluster.Describe(ctx, cs, ns))
			}
		}
		return nil
	})
	t.Logf("echo-basic (HTTP and gRPC) and CoreDNS available in %s", time.Since(began).Round(time.Millisecond))
	clusterIP := func(name string) string {
		svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return svc.Spec.ClusterIP
	}
	httpIP, grpcIP := clusterIP(httpBackend), clusterIP(grpcBackend)

	clients := NewClients(realcluster.NodeOf(c).DialContext, Timeouts(), false)
	defer clients.Close()
	for _, tc := range []struct{ protocol, port, wantProto string }{
		{"", "8080", "HTTP/1.1"},
		{roundtripper.H2CPriorKnowledgeProtocol, "8081", "HTTP/2.0"},
	} {
		// The first requests may meet kube-proxy's rules not yet written.
		tools.Eventually(t, time.Minute, "echo-basic answering "+tc.wantProto, func() error {
			req, resp, err := clients.RoundTripper.CaptureRoundTrip(roundtripper.Request{
				T: t, URL: url.URL{Scheme: "http", Host: net.JoinHostPort(httpIP, tc.port), Path: "/backends"},
				Protocol: tc.protocol, Host: "backends.example",
			})
			switch {
			case err != nil:
				return err
			case resp.StatusCode != 200 || req.Path != "/backends" || req.Host != "backends.example" || req.Protocol != tc.wantProto ||
				req.Namespace != ns || !strings.HasPrefix(req.Pod, httpBackend):
				return fmt.Errorf("status %d, echo-basic saw %+v", resp.StatusCode, req)
			}
			return nil
		})
	}
	tools.Eventually(t, time.Minute, "echo-basic echoing WebSocket messages", func() error {
		ws, err := clients.WebSocket.Dial("ws://"+net.JoinHostPort(httpIP, "8082")+"/ws", "", "http://backends.example/")
		if err != nil {
			return err
		}
		defer ws.Close()
		if _, err := ws.Write([]byte("hello")); err != nil {
			return err
		}
		buf := make([]byte, 16)
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := ws.Read(buf)
		if err != nil || string(buf[:n]) != "hello" {
			return fmt.Errorf("read %q, %v", buf[:n], err)
		}
		return nil
	})
	fromTheHost(ctx, t, httpIP, clusterIP(dns))
	tools.Eventually(t, time.Minute, "echo-basic answering gRPC", func() error {
		resp, err := clients.GRPC.SendRPC(t, net.JoinHostPort(grpcIP, "8080"), confgrpc.ExpectedResponse{EchoRequest: &pb.EchoRequest{}}, 5*time.Second)
		switch {
		case err != nil:
			return err
		case resp.Code != codes.OK || !strings.HasPrefix(resp.Response.GetAssertions().GetContext().GetPod(), grpcBackend):
			return fmt.Errorf("code %s, response %v", resp.Code, resp.Response)
		}
		return nil
	})
}

func TestGatewayProfilesPassTheConformanceSuite(t *testing.T) {
	began := time.Now()
	c := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
	defer cancel()

	phase := time.Now()
	installGatewayAPICRDs(ctx, t, c)
	t.Logf("Gateway API standard channel CRDs installed in %s", time.Since(phase).Round(time.Millisecond))
	realcluster.InstallBundle(ctx, t, c)

	cfg, scheme, cl, cs := adminClients(t, c)
	defer func() {
		if t.Failed() {
			t.Logf("what the cluster shows:\n%s\n%s", Diagnose(ctx, cl), realcluster.Describe(ctx, cs, realcluster.OperatorNamespace))
		}
	}()

	phase = time.Now()
	createGatewayClass(ctx, t, cl)
	var claimed suite.FeaturesSet
	var classProblem string
	_ = tools.Poll(ctx, 250*time.Millisecond, classWait, func(ctx context.Context) (bool, error) {
		claimed, classProblem = ClassClaims(ctx, cl)
		return classProblem == "", nil
	})
	if classProblem != "" {
		// The poll's last read may have met its deadline: read again.
		claimed, classProblem = ClassClaims(ctx, cl)
	}
	if classProblem == "" {
		t.Logf("GatewayClass %s accepted in %s, claiming %v", GatewayClassName, time.Since(phase).Round(time.Millisecond), FeatureNames(claimed))
	} else {
		t.Errorf("after %s: %s", classWait, classProblem)
	}

	var (
		mu       sync.Mutex
		outcomes = map[string]Outcome{}
		runStart time.Time
		degraded string // why the waits were cut, if they were
	)
	impl := Implementation
	impl.Version = implementationVersion(t)
	opts := suite.ConformanceOptions{
		ConfigurableOptions: suite.ConfigurableOptions{
			GatewayClassName: GatewayClassName,
			// The cluster is thrown away; each test's own objects go
			// when it ends, so that the next meets only the base ones.
			CleanupBaseResources: false,
			CleanupTestResources: true,
			TimeoutConfig:        Timeouts(),
			Mode:                 "default",
			Implementation:       impl,
			ConformanceProfiles:  ProfileNames(),
		},
		Client:        cl,
		ClientOptions: client.Options{Scheme: scheme},
		Clientset:     cs,
		RestConfig:    cfg,
		ManifestFS:    []fs.FS{&conformance.Manifests},
		Hook: func(t *testing.T, test suite.ConformanceTest, s *suite.ConformanceTestSuite) {
			o := Passed
			switch {
			case t.Failed():
				o = Failed
			case t.Skipped():
				o = Skipped
			}
			if !test.Parallel {
				// The next test's RPCs dial anew (no parallel test
				// sends any).
				s.GRPCClient.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			outcomes[test.ShortName] = o
			// The waits may change between sequential tests only: the
			// parallel ones run together after them, and read them.
			if degraded == "" && (!test.Parallel || s.DisableParallelTests) && time.Since(runStart) > runBudget {
				degraded = fmt.Sprintf("the tests had run for %s, over their budget of %s, after %s", time.Since(runStart).Round(time.Second), runBudget, test.ShortName)
				s.TimeoutConfig = Degraded(s.TimeoutConfig)
				t.Logf("%s: the remaining tests wait at most %s for a status or a consistent answer", degraded, DegradedWait)
			}
		},
	}
	// The suite's flags (after -args) override these.
	flags.ApplyAll(&opts.ConfigurableOptions)
	// The suite's own clients cannot dial from the node.
	clients := NewClients(realcluster.NodeOf(c).DialContext, opts.TimeoutConfig, opts.Debug)
	defer clients.Close()
	opts.RoundTripper, opts.GRPCClient, opts.WebSocketDialer = clients.RoundTripper, clients.GRPC, clients.WebSocket
	if len(opts.SupportedFeatures) == 0 && len(opts.ExemptFeatures) == 0 && !opts.EnableAllSupportedFeatures {
		switch {
		case claimed.Len() == 0:
			// The suite would refuse to start; test the profiles' core
			// features, all of which then fail or pass on their own.
			opts.SupportedFeatures = sets.List(CoreFeatures())
			// The class was waited for already.
			opts.TimeoutConfig.GWCMustBeAccepted = time.Second
		case opts.RunTest != "":
			// The suite infers nothing for a single test: name them.
			opts.SupportedFeatures = sets.List(claimed)
		}
		// Otherwise the suite takes them from the class's status.
	}
	s, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatalf("the conformance suite: %v", err)
	}
	run, notSupported := Runnable(tests.ConformanceTests, s.SupportedFeatures)
	var selected func(string) bool
	if opts.RunTest != "" || len(opts.SkipTests) > 0 {
		// The suite marks the others skipped itself.
		run = tests.ConformanceTests
		skip := sets.New(opts.SkipTests...)
		selected = func(name string) bool { return (opts.RunTest == "" || name == opts.RunTest) && !skip.Has(name) }
	}
	t.Logf("the suite runs %d of its %d tests, for the features %v; %d need others", len(run), len(tests.ConformanceTests), FeatureNames(s.SupportedFeatures), len(notSupported))

	phase = time.Now()
	t.Run("suite", func(t *testing.T) {
		// Setup's failure (a GatewayClass not accepted, base Gateways
		// or backends not ready) fails Setup; the tests still run, and
		// say what else fails, with their waits cut: the run has failed.
		if !t.Run("Setup", func(t *testing.T) { s.Setup(t, run) }) {
			degraded = "Setup failed"
			s.TimeoutConfig = Degraded(s.TimeoutConfig)
			t.Logf("Setup failed: the tests wait at most %s for a status or a consistent answer", DegradedWait)
		}
		runStart = time.Now()
		if err := s.Run(t, run); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("the suite ran in %s (Setup and tests)", time.Since(phase).Round(time.Millisecond))

	report, err := s.Report()
	if err != nil {
		t.Fatalf("the conformance report: %v", err)
	}
	data, err := MarshalReport(report)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("conformance report:\n%s", data)
	if opts.ReportOutputPath != "" {
		if err := os.WriteFile(opts.ReportOutputPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if dir := os.Getenv("CONFORMANCE_REPORT_DIR"); dir != "" {
		path, err := WriteReport(dir, report)
		if err != nil {
			t.Fatalf("writing the report: %v", err)
		}
		t.Logf("report written to %s", path)
	}

	if problems := Check(Profiles, tests.ConformanceTests, s.SupportedFeatures, outcomes, report, selected); len(problems) > 0 {
		// What failed every test, first.
		var causes []string
		if classProblem != "" {
			causes = append(causes, classProblem)
		}
		if degraded != "" {
			causes = append(causes, fmt.Sprintf("%s: the waits were cut to %s from then on", degraded, DegradedWait))
		}
		problems = append(causes, problems...)
		t.Errorf("the profiles do not pass (GatewayClass %s claims %v):\n  %s", GatewayClassName, FeatureNames(claimed), strings.Join(problems, "\n  "))
	}
	t.Logf("whole run: %s", time.Since(began).Round(time.Millisecond))
}

// fromTheHost: the test's own process, with plain dialers as the suite's
// TCP, UDP and TLS tests use, reaches echo-basic's Service over TCP and
// CoreDNS's over UDP (its whoami zone, foo.bar.com, answers; it forwards
// every other name to the internet, which the machine may not reach).
func fromTheHost(ctx context.Context, t *testing.T, echoIP, dnsIP string) {
	t.Helper()
	tools.Eventually(t, time.Minute, "echo-basic answering a plain dialer of the host", func() error {
		conn, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", net.JoinHostPort(echoIP, "8080"))
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "GET /host HTTP/1.1\r\nHost: backends.example\r\nConnection: close\r\n\r\n")
		status, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
			return fmt.Errorf("status line %q, %v", status, err)
		}
		return nil
	})
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", net.JoinHostPort(dnsIP, "53"))
	}}
	tools.Eventually(t, time.Minute, "CoreDNS answering a UDP query of the host", func() error {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		// whoami puts the client's address in the additional section:
		// the resolver finds no answer (IsNotFound), which is an answer.
		_, err := resolver.LookupHost(ctx, "foo.bar.com.")
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil
		}
		return err
	})
}

// routeServices routes the Service range from the host through the
// package's node once (node.RouteServicesFromHost): the suite's TCP, UDP
// and TLS clients dial a Gateway's address from the test's process.
var routeServices sync.Once

// cluster is the package's cluster, which the first test to ask starts
// (after realcluster.Require built the images), saying what it took.
func cluster(t *testing.T) *framework.Cluster {
	t.Helper()
	realcluster.Require(t)
	began := time.Now()
	c := env.Cluster(t)
	var routeErr error
	routeServices.Do(func() { routeErr = realcluster.NodeOf(c).RouteServicesFromHost() })
	if routeErr != nil {
		t.Fatal(routeErr)
	}
	if d := time.Since(began); d > time.Second {
		t.Logf("cluster with a real node up in %s (images: echo-basic as %v, CoreDNS as %s)",
			d.Round(time.Millisecond), goImageNames(backends), backends.CoreDNS)
		if len(backends.Others) > 0 {
			t.Logf("images of the suite's manifests the node does not have: %v", backends.Others)
		}
	}
	return c
}

// adminClients are the admin's REST config, controller-runtime client (of
// Scheme) and clientset for c, unthrottled: the suite's tests poll
// statuses every 100 ms, several at once.
func adminClients(t *testing.T, c *framework.Cluster) (*rest.Config, *runtime.Scheme, client.Client, kubernetes.Interface) {
	t.Helper()
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, scheme, cl, cs
}

// installGatewayAPICRDs installs the standard channel of Gateway API (its
// CRDs and the ValidatingAdmissionPolicy that guards their upgrades) from
// the sigs.k8s.io/gateway-api module go.mod requires, as its
// standard-install.yaml would, and waits until the CRDs are established.
func installGatewayAPICRDs(ctx context.Context, t *testing.T, c *framework.Cluster) {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	var crds []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := framework.DecodeYAML(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, "crd/"+o.GetName())
			}
		}
	}
	// Server-side: the CRDs are larger than client-side apply's
	// last-applied annotation may be.
	if out, err := c.Kubectl(ctx, "", "apply", "--server-side", "-f", dir); err != nil {
		t.Fatalf("kubectl apply --server-side -f %s: %v\n%s", dir, err, out)
	}
	if out, err := c.Kubectl(ctx, "", append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, crds...)...); err != nil {
		t.Fatalf("waiting for the Gateway API CRDs: %v\n%s", err, out)
	}
}

// createGatewayClass creates the GatewayClass of the operator's controller.
func createGatewayClass(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	gwc := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
		Spec: gatewayv1.GatewayClassSpec{
			ControllerName: ControllerName,
			Description:    ptr("nginx-operator: an nginx deployment per Gateway"),
		},
	}
	err := c.Create(ctx, gwc)
	if apierrors.IsAlreadyExists(err) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(gwc), gwc); err != nil {
			t.Fatal(err)
		}
		if gwc.Spec.ControllerName != ControllerName {
			t.Fatalf("GatewayClass %s exists with controllerName %s, not %s", GatewayClassName, gwc.Spec.ControllerName, ControllerName)
		}
		return
	}
	if err != nil {
		t.Fatalf("creating GatewayClass %s: %v", GatewayClassName, err)
	}
}

func ptr[T any](v T) *T { return &v }

// implementationVersion is the report's implementation version:
// CONFORMANCE_VERSION, or what the Makefile's VERSION would be.
func implementationVersion(t *testing.T) string {
	if v := os.Getenv("CONFORMANCE_VERSION"); v != "" {
		return v
	}
	root, err := tools.RepoRoot()
	if err == nil {
		var out []byte
		if out, err = exec.Command("git", "-C", root, "describe", "--tags", "--always", "--dirty").Output(); err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	t.Logf("git describe: %v; the report's version is v0.0.0-dev", err)
	return "v0.0.0-dev"
}

func goImageNames(b Backends) []string {
	var names []string
	for _, g := range b.GoImages {
		names = append(names, g.Name)
	}
	return names
}
