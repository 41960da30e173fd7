package framework

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Env is the local cluster of one test package, started by the first test
// that asks for it, so a run of pure tests never pays for (or skips for want
// of) a cluster. Tests share it and isolate themselves with one namespace each
// (see Namespace).
//
// A package declares one and hands its TestMain to it:
//
//	var env = framework.NewEnv(framework.Options{Nodes: 3})
//
//	func TestMain(m *testing.M) { os.Exit(env.Main(m)) }
//
// and a test that needs the cluster begins with env.Cluster(t) (or a helper
// built on it, such as Namespace or inprocess.Setup).
type Env struct {
	opts Options

	once    sync.Once
	cluster *Cluster // nil until started, and when starting failed
	dir     string   // the cluster's directory, once created
	missing error    // a binary the cluster needs is not installed
	failed  error    // the cluster did not start

	stderr io.Writer // where Main reports; os.Stderr when nil

	short func() bool // whether only the unit tier runs; testing.Short when nil
}

func (e *Env) unitTier() bool {
	if e.short != nil {
		return e.short()
	}
	return testing.Short()
}

// NewEnv returns an Env that will start a cluster with opts (Options.Dir is
// chosen by the Env) the first time a test asks for it.
func NewEnv(opts Options) *Env {
	return &Env{opts: opts}
}

// Cluster returns the package's cluster, starting it on the first call; calls
// from parallel tests wait for that one start. When a binary it needs is
// missing, the test is skipped with the command that installs it, or fails
// with it when ToolsRequired. A cluster that did not start fails every test
// that asks for it.
func (e *Env) Cluster(t testing.TB) *Cluster {
	t.Helper()
	if e.unitTier() {
		t.Skipf("%s", tools.NotAUnitTest("a local cluster"))
	}
	e.once.Do(e.start)
	switch {
	case e.missing != nil && tools.Required():
		t.Fatal(e.missing)
	case e.missing != nil:
		t.Skipf("%v (set CI or NGINX_OPERATOR_REQUIRE_TOOLS to fail instead)", e.missing)
	case e.failed != nil:
		t.Fatal(e.failed)
	}
	return e.cluster
}

// Namespace creates a namespace for the test on the package's cluster (see
// the function Namespace) and returns it with an admin clientset.
func (e *Env) Namespace(t testing.TB) (string, kubernetes.Interface) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.Cluster(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	return Namespace(t, cs), cs
}

func (e *Env) start() {
	for _, bin := range requiredBinaries(e.opts) {
		if _, err := BinPath(bin); err != nil {
			e.missing = err
			return
		}
	}
	if e.opts.RealNode != nil {
		if err := e.opts.RealNode.Missing(); err != nil {
			e.missing = err
			return
		}
	}
	dir, err := os.MkdirTemp("", "nginx-operator-cluster-")
	if err != nil {
		e.failed = err
		return
	}
	e.dir = dir
	opts := e.opts
	opts.Dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		e.failed = fmt.Errorf("starting the local cluster: %w\nlogs kept in %s", err, dir)
		return
	}
	e.cluster = c
}

// Main runs the package's tests and then, if one of them started the
// cluster, runs Options.AfterTests on it when every test passed, and stops
// it. The cluster's directory, with every component's log, is kept and
// printed when something failed, and removed otherwise.
//
// Use it from TestMain: os.Exit(env.Main(m)).
func (e *Env) Main(m *testing.M) int {
	flag.Parse()
	if fuzzWorker() {
		// A fuzz worker process runs nothing but fuzz inputs, which are
		// pure and never ask for the cluster: there is nothing to check,
		// stop or keep.
		return m.Run()
	}
	return e.finish(m.Run())
}

// finish is Main's end, once the tests ended with code.
func (e *Env) finish(code int) int {
	stderr := e.stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	// The tests are over: a cluster no test started stays unstarted.
	e.once.Do(func() { e.failed = errors.New("the tests are over") })
	if e.cluster != nil {
		if code == 0 && e.opts.AfterTests != nil {
			if err := e.opts.AfterTests(e.cluster); err != nil {
				fmt.Fprintf(stderr, "FAIL: after the tests: %v\n", err)
				code = 1
			}
		}
		e.cluster.Stop()
	}
	if e.dir != "" {
		if code != 0 || e.failed != nil {
			fmt.Fprintf(stderr, "cluster logs kept in %s\n", e.dir)
		} else {
			os.RemoveAll(e.dir)
		}
	}
	return code
}

// fuzzWorker is true in the worker processes of a `go test -fuzz` run.
func fuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

func requiredBinaries(opts Options) []string {
	bins := []string{Etcd, KubeAPIServer}
	if opts.Nodes > 0 {
		bins = append(bins, KubeControllerManager, KubeScheduler, Kwok)
	}
	return bins
}

// Namespace creates a namespace for one test, named after it, and deletes it
// when the test ends.
func Namespace(t testing.TB, cs kubernetes.Interface) string {
	t.Helper()
	base := naming.NameWithLimit(40, "t", strings.ToLower(t.Name()))
	name := base + "-" + rand.String(5)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}
