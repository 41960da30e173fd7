// Package rollout changes running NginxOperator instances on a local cluster
// whose node runs the pods for real (see test/framework/realcluster), under
// a steady client load through the instance's ClusterIP Service: new
// configurations and certificates are loaded in place by the pods'
// reloaders, pod template changes roll the pods, and neither fails a
// request; a configuration nginx refuses leaves the previous one serving
// with the instance Degraded.
package rollout

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

var env = framework.NewEnv(realcluster.FrameworkOptions(realcluster.Options{GoImages: []node.GoImage{realcluster.TestServer}}))

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

// setup is realcluster.Setup for a test of at most 4 minutes, with the node.
func setup(t testing.TB) (context.Context, string, kubernetes.Interface, client.Client, *node.Node) {
	t.Helper()
	return setupFor(t, 4*time.Minute)
}

// setupFor is realcluster.Setup for a test of at most timeout, with the node.
func setupFor(t testing.TB, timeout time.Duration) (context.Context, string, kubernetes.Interface, client.Client, *node.Node) {
	t.Helper()
	ctx, c, ns, cs, cl := realcluster.Setup(t, env, timeout)
	return ctx, ns, cs, cl, realcluster.NodeOf(c)
}

// site creates the ConfigMap the instances serve: index.html says "hello".
func site(ctx context.Context, t testing.TB, cl client.Client, ns string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: ns}, Data: map[string]string{"index.html": "hello\n"}}
	if err := cl.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// webInstance serves the site ConfigMap on port 8080 with two replicas on
// the real node; its location's X-Version header tells configurations apart.
func webInstance(ns string) *v1beta1.NginxOperator {
	n := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](2),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Content:  v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: "site"}}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
				{Path: "/", Static: &v1beta1.StaticLocation{}, Headers: []v1beta1.Header{{Name: "X-Version", Value: "1"}}},
			}}}},
		},
	}
	n.Spec.Pod.NodeSelector = map[string]string{node.LabelKey: node.LabelValue}
	n.Spec.Pod.Tolerations = []corev1.Toleration{{Key: node.LabelKey, Operator: corev1.TolerationOpEqual, Value: node.LabelValue, Effect: corev1.TaintEffectNoSchedule}}
	return n
}

// update changes the instance's spec, retrying on conflicts with the
// operator's status writes.
func update(ctx context.Context, t testing.TB, cl client.Client, key client.ObjectKey, edit func(*v1beta1.NginxOperator)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n v1beta1.NginxOperator
		if err := cl.Get(ctx, key, &n); err != nil {
			return err
		}
		edit(&n)
		return cl.Update(ctx, &n)
	}); err != nil {
		t.Fatal(err)
	}
}

// rolledOut is true once the instance's status describes its current spec,
// every replica runs it and is ready, and nothing is degraded.
func rolledOut(ctx context.Context, cl client.Client, key client.ObjectKey, n *v1beta1.NginxOperator) bool {
	if err := cl.Get(ctx, key, n); err != nil || n.Status.ObservedGeneration != n.Generation {
		return false
	}
	for typ, want := range map[string]metav1.ConditionStatus{
		v1beta1.ConditionAvailable: metav1.ConditionTrue, v1beta1.ConditionProgressing: metav1.ConditionFalse,
		v1beta1.ConditionDegraded: metav1.ConditionFalse, v1beta1.ConditionReconciled: metav1.ConditionTrue,
	} {
		if !meta.IsStatusConditionPresentAndEqual(n.Status.Conditions, typ, want) {
			return false
		}
	}
	replicas := ptr.Deref(n.Spec.Replicas, 1)
	return n.Status.ReadyReplicas == replicas && n.Status.UpdatedReplicas == replicas
}

// waitRolledOut waits for rolledOut and returns the instance.
func waitRolledOut(ctx context.Context, t testing.TB, cl client.Client, key client.ObjectKey, timeout time.Duration) *v1beta1.NginxOperator {
	t.Helper()
	var n v1beta1.NginxOperator
	began := time.Now()
	if !framework.WaitFor(ctx, timeout, func(ctx context.Context) bool { return rolledOut(ctx, cl, key, &n) }) {
		t.Fatalf("%s not rolled out after %s: generation %d, status %+v", key, timeout, n.Generation, n.Status)
	}
	t.Logf("%s rolled out in %s (config %s)", key, time.Since(began).Round(100*time.Millisecond), n.Status.ConfigHash)
	return &n
}

// serviceAddr is the address of the instance's ClusterIP Service for its
// port http (8080 in the pods): port 80.
func serviceAddr(ctx context.Context, t *testing.T, cl client.Client, ns string) string {
	t.Helper()
	var svc corev1.Service
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("web").Service}, &svc); err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, "80")
}

// load is a steady client on the node: workers send GET / through the
// Service one after another, each on a new connection (so every request is
// routed by kube-proxy's current rules), and count what they get.
type load struct {
	ok       atomic.Int64
	versions sync.Map // X-Version -> *atomic.Int64
	mu       sync.Mutex
	failures []string // the first ten
	last     []string // the last ten after those
	nfail    int
	slowest  atomic.Int64 // nanoseconds, of a request that succeeded
	stop     chan struct{}
	done     sync.WaitGroup
}

func startLoad(ctx context.Context, t *testing.T, n *node.Node, addr string, workers int) *load {
	t.Helper()
	l := &load{stop: make(chan struct{})}
	client := n.HTTPClient()
	// Failures are what is counted, not latency: on 2 cores shared with the
	// rest of make test an answer can take seconds; a refused or reset
	// connection, or an error status, is what a bad rollout causes.
	client.Timeout = 30 * time.Second
	// A new Service answers once kube-proxy has programmed it, which the
	// instance's status cannot tell: the load starts from a Service that
	// answered 20 times in a row. Each try is a new connection of at most
	// 3 s: one that started before the rules existed stays blackholed
	// (kubernetes/kubernetes#48719), and only a new one is translated.
	probe := n.HTTPClient()
	probe.Timeout = 3 * time.Second
	inARow := 0
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool {
		resp, err := probe.Get("http://" + addr + "/")
		if err != nil {
			inARow = 0
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			inARow = 0
			return false
		}
		inARow++
		return inARow >= 20
	}) {
		t.Fatalf("the Service %s does not answer from the node", addr)
	}
	for range workers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			// About 100 requests a second per worker.
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-l.stop:
					return
				case <-tick.C:
				}
				l.request(client, "http://"+addr+"/")
			}
		}()
	}
	return l
}

func (l *load) request(c *http.Client, url string) {
	at := time.Now()
	resp, err := c.Get(url)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case rerr != nil:
			err = rerr
		case resp.StatusCode != http.StatusOK:
			err = fmt.Errorf("status %d", resp.StatusCode)
		case string(body) != "hello\n":
			err = fmt.Errorf("body %q", body)
		}
		if err == nil {
			v, _ := l.versions.LoadOrStore(resp.Header.Get("X-Version"), new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}
	}
	if err == nil {
		l.ok.Add(1)
		for took := int64(time.Since(at)); ; {
			if old := l.slowest.Load(); took <= old || l.slowest.CompareAndSwap(old, took) {
				break
			}
		}
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nfail++
	msg := at.Format("15:04:05.000") + ": " + err.Error()
	if len(l.failures) < 10 {
		l.failures = append(l.failures, msg)
	} else {
		l.last = append(l.last, msg)
		if len(l.last) > 10 {
			l.last = l.last[1:]
		}
	}
}

// finish stops the workers and fails t with the failed requests, if any.
func (l *load) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.done.Wait()
	var versions []string
	l.versions.Range(func(k, v any) bool {
		versions = append(versions, fmt.Sprintf("%q: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	t.Logf("load: %d requests succeeded (by X-Version %s; the slowest in %s), %d failed",
		l.ok.Load(), strings.Join(versions, ", "), time.Duration(l.slowest.Load()).Round(time.Millisecond), l.nfail)
	if l.nfail > 0 {
		t.Errorf("%d requests failed, the first and the last:\n%s", l.nfail, strings.Join(append(l.failures, append([]string{"..."}, l.last...)...), "\n"))
	}
}

// served is how many requests of configuration version succeeded so far.
func (l *load) served(version string) int64 {
	v, ok := l.versions.Load(version)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// waitServed waits until n more requests succeeded than when it was called.
func (l *load) waitServed(ctx context.Context, t *testing.T, n int64) {
	t.Helper()
	want := l.ok.Load() + n
	if !framework.WaitFor(ctx, 20*time.Second, func(context.Context) bool { return l.ok.Load() >= want }) {
		t.Fatalf("the client got %d successful answers, want %d", l.ok.Load(), want)
	}
}
