package rollout

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// A stream's backend Deployment (three test servers that greet each
// connection with their pod's name and echo its lines, each with a 5 s
// preStop pause) rolls while clients on the node keep opening new TCP
// connections through the instance's Service, each reading the greeting
// and having one line echoed: not one connection fails, and both the old
// pods and the new ones greeted. nginx relays each connection to a ready
// pod of the backend and drops a leaving pod from nginx.conf within the
// pause; a pod that refuses a connection sends it on to the next
// (proxy_next_upstream, on by default).
func TestAStreamLosesNoConnectionWhileItsBackendRolls(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, cl, n := setup(t)
	pause := &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	realcluster.RunStreamServers(ctx, t, cs, ns, "db", 3, "", pause)
	relay := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "relay", Namespace: ns}, Spec: v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](2),
		Ports:    []v1beta1.Port{{Name: "echo", ContainerPort: 7000}},
		Config: v1beta1.NginxConfig{Streams: []v1beta1.Stream{{Port: "echo",
			Backends: []v1beta1.Backend{{Service: "db", Port: realcluster.StreamEchoPort}}}}},
	}}
	if err := cl.Create(ctx, relay); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(relay)
	waitStreamLoaded(ctx, t, cl, key, 3)
	before := streamPods(ctx, t, cs, ns)

	load := startConnections(ctx, t, n.DialContext, framework.ServiceAddr(ctx, t, cs, key, "echo"), 4)
	began := time.Now()
	rollStreamBackend(ctx, t, cs, ns, "db")
	rolled := time.Since(began)
	// The load goes on until the old pods are gone and nginx.conf has the
	// new ones alone: the last old pod leaves after the rollout is done.
	waitStreamLoaded(ctx, t, cl, key, 3)
	got := load.stop()
	after := streamPods(ctx, t, cs, ns)

	t.Logf("backend rolled in %s; %d connections, %d failed, slowest %s; by pod: %v", rolled.Round(100*time.Millisecond),
		got.total, len(got.failures), got.slowest.Round(time.Millisecond), got.pods)
	for _, f := range got.failures[:min(10, len(got.failures))] {
		t.Errorf("a failed connection: %s", f)
	}
	if len(got.failures) > 0 {
		logStreamTrouble(ctx, t, cs, ns)
	}
	for _, pods := range [][]string{before, after} {
		for _, pod := range pods {
			if got.pods[pod] == 0 {
				t.Errorf("pod %s (before the roll %v, after %v) greeted no connection: the load did not span the roll", pod, before, after)
			}
		}
	}
}

// waitStreamLoaded waits until the instance's one upstream has n
// endpoints, all of them ready pods of the backend that are not leaving,
// and every pod's nginx serves the configuration that has them.
func waitStreamLoaded(ctx context.Context, t *testing.T, cl client.Client, key client.ObjectKey, n int32) {
	t.Helper()
	var inst v1beta1.NginxOperator
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		if cl.Get(ctx, key, &inst) != nil || len(inst.Status.Upstreams) != 1 || inst.Status.Upstreams[0].Endpoints != n {
			return false
		}
		return inst.Status.ObservedGeneration == inst.Generation && ptr.Deref(inst.Status.LoadedReplicas, -1) == ptr.Deref(inst.Spec.Replicas, 1)
	}) {
		t.Fatalf("%s: status %+v, want one upstream of %d endpoints loaded by every pod", key, inst.Status, n)
	}
}

// streamPods are the names of the backend's pods.
func streamPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name)
	}
	return out
}

// rollStreamBackend rolls the Deployment name (a new pod template) and
// waits until its old pods are gone and the new ones all ready.
func rollStreamBackend(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"rolled":%q}}}}}`, time.Now().Format(time.RFC3339Nano))
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != *d.Spec.Replicas ||
			d.Status.AvailableReplicas != *d.Spec.Replicas {
			return false
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		return err == nil && len(pods.Items) == int(*d.Spec.Replicas)
	}) {
		t.Fatalf("Deployment %s did not roll out", name)
	}
}

// logStreamTrouble logs what the instance's pods and the backend's logged:
// nginx's stream log has a line per connection, with the upstream
// addresses it tried, and its error log says why one failed.
func logStreamTrouble(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	for _, selector := range []string{"app.kubernetes.io/instance=relay", "app=db"} {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Errorf("listing pods %s: %v", selector, err)
			continue
		}
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				logs, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				if err != nil {
					t.Logf("logs of %s/%s: %v", p.Name, c.Name, err)
					continue
				}
				t.Logf("logs of %s/%s, but for the lines of connections that went well:\n%s", p.Name, c.Name, troubleLines(string(logs)))
			}
		}
	}
}

// troubleLines are the lines of logs but for those of connections that
// went well: the stream log's status 200 and the test server's
// "1 lines, EOF".
func troubleLines(logs string) string {
	var b strings.Builder
	for line := range strings.Lines(logs) {
		if strings.Contains(line, " TCP 200 ") || strings.HasSuffix(line, ": 1 lines, EOF\n") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// connections are clients that each keep opening new connections, one
// after the other, until stop.
type connections struct {
	stopped chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	result  connectionsResult
}

type connectionsResult struct {
	total    int
	failures []string
	pods     map[string]int
	slowest  time.Duration
}

type dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// startConnections waits until addr has greeted 20 new connections in a
// row (kube-proxy programs a new Service a moment after it exists; these
// are not counted), then starts clients that each open a connection, read
// the greeting, have a line echoed and hang up, again and again.
func startConnections(ctx context.Context, t *testing.T, dial dialer, addr string, clients int) *connections {
	t.Helper()
	inARow := 0
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		if _, err := greetAndEcho(ctx, dial, addr, "ready?"); err != nil {
			inARow = 0
			return false
		}
		inARow++
		return inARow >= 20
	}) {
		t.Fatalf("%s does not greet new connections", addr)
	}
	c := &connections{stopped: make(chan struct{}), result: connectionsResult{pods: map[string]int{}}}
	for i := range clients {
		c.wg.Go(func() { c.client(ctx, dial, addr, i) })
	}
	return c
}

func (c *connections) client(ctx context.Context, dial dialer, addr string, id int) {
	for n := 0; ; n++ {
		select {
		case <-c.stopped:
			return
		case <-ctx.Done():
			return
		default:
		}
		began := time.Now()
		pod, err := greetAndEcho(ctx, dial, addr, fmt.Sprintf("client %d line %d", id, n))
		took := time.Since(began)
		c.mu.Lock()
		c.result.total++
		c.result.slowest = max(c.result.slowest, took)
		if err != nil {
			c.result.failures = append(c.result.failures, fmt.Sprintf("%s, after %s: %v", began.Format("15:04:05.000"), took.Round(time.Millisecond), err))
		} else {
			c.result.pods[pod]++
		}
		c.mu.Unlock()
		// Paces each client (a sleep that paces the load only): every
		// closed connection holds a port of the node for a minute
		// (TIME_WAIT); at 50 a second a client stays far from running out.
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *connections) stop() connectionsResult {
	close(c.stopped)
	c.wg.Wait()
	return c.result
}

// greetAndEcho opens a connection to addr, reads the stream test server's
// greeting ("hello from <pod>"), has it echo line and hangs up, within
// 30 s: more than nginx takes to try every pod of the upstream, at its 5 s
// connect timeout, for a pod that vanished; it returns the pod.
func greetAndEcho(ctx context.Context, dial dialer, addr, line string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	greeting, err := r.ReadString('\n')
	pod, ok := strings.CutPrefix(strings.TrimSuffix(greeting, "\n"), "hello from ")
	if err != nil || !ok {
		return "", fmt.Errorf("greeting %q: %v", greeting, err)
	}
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		return pod, fmt.Errorf("to %s: sending %q: %w", pod, line, err)
	}
	if got, err := r.ReadString('\n'); err != nil || got != line+"\n" {
		return pod, fmt.Errorf("to %s: sent %q, got back %q (%v)", pod, line, got, err)
	}
	return pod, nil
}
