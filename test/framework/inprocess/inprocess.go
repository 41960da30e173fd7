// Package inprocess runs the operator's manager inside a test process against
// the framework's apiserver, and counts the requests it sends. It is separate
// from package framework because it imports the operator, which the
// framework's own users (the operator's packages) must not.
package inprocess

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// RequestCounter records the requests sent through a wrapped transport.
type RequestCounter struct {
	mu     sync.Mutex
	reads  int
	writes []string
}

// Wrap is a rest.Config WrapTransport.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		if req.Method == http.MethodGet {
			c.reads++
		} else {
			c.writes = append(c.writes, req.Method+" "+req.URL.Path)
		}
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// Reads is the number of GET requests (gets, lists and watches).
func (c *RequestCounter) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Writes lists the mutating requests, "METHOD path" each.
func (c *RequestCounter) Writes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// WaitWritesSettled waits until the wrapped client has sent no mutating
// request for quiet (the status writes that follow a burst of reconciles
// have landed), failing t after timeout.
func (c *RequestCounter) WaitWritesSettled(t testing.TB, quiet, timeout time.Duration) {
	t.Helper()
	tools.Settled(t, quiet, timeout, "the operator's writes", func() int { return len(c.Writes()) })
}

// Reconciles is the number of reconciles controller (a controller name,
// such as nginx.ControllerName) has finished in this test process: the
// in-process managers report them to controller-runtime's registry.
func Reconciles(t testing.TB, controller string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Options are operator options fit for a test: no listeners, no leader
// election, watching only the given namespaces.
func Options(namespaces ...string) operator.Options {
	return operator.Options{
		Namespaces:         namespaces,
		MetricsBindAddress: "0", HealthProbeBindAddress: "0", WebhookPort: 9443,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		GracefulShutdownTimeout:      5 * time.Second,
		Images:                       operator.Images{Nginx: "nginx:1.27", Exporter: "nginx/nginx-prometheus-exporter:1.4", Agent: "agent:1", Reloader: "agent:1"},
		SkipControllerNameValidation: true,
	}
}

// Start runs a manager built by operator.NewManager with opts until stop is
// called or the test ends. counter, when not nil, sees every request.
func Start(t testing.TB, cfg *rest.Config, opts operator.Options, counter *RequestCounter) (stop func()) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	if counter != nil {
		cfg.WrapTransport = counter.Wrap
	}
	mgr, err := operator.NewManager(cfg, opts, Logger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// StartWatching runs the operator in-process on env's cluster with Options
// (see Start), watching only namespaces, until stop or the end of the test;
// counter, when not nil, sees every request.
func StartWatching(t testing.TB, env *framework.Env, counter *RequestCounter, namespaces ...string) (stop func()) {
	t.Helper()
	return Start(t, env.Cluster(t).Config, Options(namespaces...), counter)
}

// Client is a client of cfg's user (the cluster's admin, in the tests)
// that talks straight to the apiserver (no cache) and knows the operator's
// kinds and CustomResourceDefinitions: the tests' one admin client.
func Client(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	s := operator.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	crdsOnce sync.Once
	crdsErr  error
)

// InstallCRDs installs the project's CRDs once per test process.
func InstallCRDs(t testing.TB, cfg *rest.Config) {
	t.Helper()
	crdsOnce.Do(func() { crdsErr = framework.InstallCRDs(context.Background(), cfg) })
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
}

// SetupOption adds to what Setup prepares.
type SetupOption func(*setup)

type setup struct {
	operator bool
	counter  *RequestCounter
}

// WithOperator makes Setup start the operator in-process (see Start),
// watching only the test's namespace; counter, when not nil, sees every
// request it sends.
func WithOperator(counter *RequestCounter) SetupOption {
	return func(s *setup) { s.operator, s.counter = true, counter }
}

// Setup is the start of an integration test: it starts env's cluster (or
// skips the test, see framework.Env.Cluster), installs the CRDs, creates the
// test's namespace and returns it with a context and the admin's clientset and
// client (which knows the operator's kinds).
func Setup(t testing.TB, env *framework.Env, opts ...SetupOption) (context.Context, string, kubernetes.Interface, client.Client) {
	t.Helper()
	var s setup
	for _, o := range opts {
		o(&s)
	}
	cfg := env.Cluster(t).Config
	InstallCRDs(t, cfg)
	ns, cs := env.Namespace(t)
	if s.operator {
		Start(t, cfg, Options(ns), s.counter)
	}
	return context.Background(), ns, cs, Client(t, cfg)
}

// AdminClient is Client, under its former name.
//
// Deprecated: use Client, which knows CustomResourceDefinitions too.
func AdminClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	return Client(t, cfg)
}
