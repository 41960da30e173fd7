package framework

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// RunMain starts one cluster for a test package, runs its tests and stops the
// cluster. Tests share the cluster and isolate themselves with one namespace
// each (see Namespace). The cluster's directory, with every component's log, is
// kept and printed when a test failed, and removed otherwise.
//
// Use it from TestMain: os.Exit(framework.RunMain(m, framework.Options{Nodes: 3}, &cluster)).
func RunMain(m *testing.M, opts Options, cluster **Cluster) int {
	flag.Parse()
	if fuzzing() {
		// Fuzz targets are pure; every fuzz worker process would otherwise
		// start a cluster of its own. Run them with -run '^$'.
		return m.Run()
	}
	for _, bin := range requiredBinaries(opts) {
		if _, err := BinPath(bin); err != nil {
			if ToolsRequired() {
				fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
				return 1
			}
			fmt.Fprintf(os.Stderr, "SKIP: %v (set CI or NGINX_OPERATOR_REQUIRE_TOOLS to fail instead)\n", err)
			return 0
		}
	}
	dir, err := os.MkdirTemp("", "nginx-operator-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts.Dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the local cluster: %v\nlogs kept in %s\n", err, dir)
		return 1
	}
	*cluster = c
	code := m.Run()
	if code == 0 && opts.AfterTests != nil {
		if err := opts.AfterTests(c); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: after the tests: %v\n", err)
			code = 1
		}
	}
	c.Stop()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "cluster logs kept in %s\n", dir)
	} else {
		os.RemoveAll(dir)
	}
	return code
}

// fuzzing is true in a `go test -fuzz` run and in its worker processes.
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
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
	base := k8sutil.NameWithLimit(40, "t", strings.ToLower(t.Name()))
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
