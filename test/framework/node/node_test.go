package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node/image"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

const testImage = "nginx-operator.local/testserver:1"

// testDir is a short directory for a test's cluster (the kubelet's and
// containerd's unix sockets live under it), kept with its logs when the
// test fails.
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nok-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster and node logs kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// buildTestImage builds the test server's image (testImage) into dir and
// returns its archive.
func buildTestImage(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	archive := filepath.Join(dir, "testserver.tar")
	if err := image.BuildGo(ctx, root, "./test/framework/node/internal/testserver", testImage, archive, image.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("test image built in %s", time.Since(began).Round(time.Millisecond))
	return archive
}

// createNamespace creates namespace ns with its default ServiceAccount,
// never deleted: the cluster is thrown away.
func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

// serverPod is the test server as pod "server" (label app=server) on port
// 8080, Ready once the kubelet's HTTP probe, from the node, is answered.
func serverPod() *corev1.Pod {
	server := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server", Labels: map[string]string{"app": "server"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{
				Name: "server", Image: testImage, Args: []string{"serve", ":8080"},
				Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
				SecurityContext: RestrictedContainer(),
			}},
		},
	}
	OnRealNode(&server.Spec)
	return server
}

func TestRealNodeRunsPodsAndServicesThenLeavesTheHostAsItWas(t *testing.T) {
	Require(t)
	dir := testDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	archive := buildTestImage(ctx, t, dir)

	before := captureHostState(t)
	rn := New(Options{Images: []string{archive}})
	began := time.Now()
	c, err := framework.Start(ctx, framework.Options{Dir: dir, RealNode: rn})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	t.Logf("cluster with a real node up in %s: node prepared in %s, started (containerd, pause image build, image imports, CoreDNS, kubelet, kube-proxy, Ready) in %s; node %s, pods %s, apiserver %s",
		time.Since(began).Round(time.Millisecond), rn.PreparedIn.Round(time.Millisecond), rn.StartedIn.Round(time.Millisecond),
		rn.IP(), rn.PodCIDR(), c.Host)
	// The node's iptables rules, sysctls, links and mounts are its own even
	// while it runs.
	for _, d := range before.diff(captureHostState(t)) {
		t.Errorf("while the node runs, the host changed: %s", d)
	}
	for _, l := range leftovers(t, rn.Token(), rn.Dir()) {
		if strings.HasPrefix(l, "mount:") {
			t.Errorf("while the node runs, the host sees its %s", l)
		}
	}

	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := "real-node"
	createNamespace(ctx, t, cs, ns)

	created := time.Now()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, serverPod(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "server"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, cs, ns, "server", framework.PodReady)
	t.Logf("pod Ready %s after it was created; pod IP %s on %s, Service %s", time.Since(created).Round(time.Millisecond), pod.Status.PodIP, pod.Spec.NodeName, svc.Spec.ClusterIP)
	if pod.Spec.NodeName != rn.Name() {
		t.Fatalf("the pod runs on %q, not on the real node", pod.Spec.NodeName)
	}

	// The pods' gateway keeps the address the node gave its bridge, which
	// pods' veths coming and going would otherwise change.
	out, err := exec.Command("nsenter", fmt.Sprintf("--net=/proc/%d/ns/net", rn.init.pid()), "--",
		"ip", "-o", "link", "show", rn.net.bridge).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "link/ether "+rn.net.bridgeMAC()+" ") {
		t.Errorf("the pods' bridge: %s (%v), want address %s", out, err, rn.net.bridgeMAC())
	}

	want := "hello from server"
	// From the node, through kube-proxy's rules for the ClusterIP.
	expectBody(ctx, t, rn.HTTPClient(), "http://"+svc.Spec.ClusterIP+":80/", want)
	// A connection to a Service address kube-proxy has not programmed (no
	// Service has it yet) is refused at once, and leaves nothing behind: a
	// Service given that address later serves a connection from the same
	// source port. Sent out untranslated, the first would have timed out
	// and, kept by conntrack, made the second time out too (see
	// rejectUntranslatedServiceAddresses).
	const unprogrammed, clientPort = "10.96.255.254", 61234 // the port is outside the node's ephemeral range
	took, err := dialFrom(rn, clientPort, net.JoinHostPort(unprogrammed, "80"))
	if !errors.Is(err, syscall.ECONNREFUSED) || took > 2*time.Second {
		t.Errorf("dialing %s, which no Service has, from the node: %v after %s, want connection refused at once", unprogrammed, err, took.Round(time.Millisecond))
	}
	late, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Spec: corev1.ServiceSpec{ClusterIP: unprogrammed, Selector: map[string]string{"app": "server"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectBody(ctx, t, rn.HTTPClient(), "http://"+late.Spec.ClusterIP+":80/", "hello from server")
	if took, err := dialFrom(rn, clientPort, net.JoinHostPort(unprogrammed, "80")); err != nil {
		t.Errorf("dialing Service late at %s from the port of the refused connection: %v after %s", unprogrammed, err, took.Round(time.Millisecond))
	}
	// From the host, straight to the pod (as the apiserver reaches webhooks).
	expectBody(ctx, t, http.DefaultClient, "http://"+pod.Status.PodIP+":8080/", want)
	// Through the apiserver's proxy to the pod (apiserver -> pod network).
	proxied, err := cs.CoreV1().Pods(ns).ProxyGet("http", "server", "8080", "/", nil).DoRaw(ctx)
	if err != nil || !strings.Contains(string(proxied), want) {
		t.Errorf("apiserver proxy to the pod: %q, %v", proxied, err)
	}

	// A pod that reads the apiserver through the kubernetes Service with its
	// service account, and the server through its ClusterIP.
	succeeded, logs, err := RunProbe(ctx, cs, ns, "probe", testImage, nil,
		"http://"+svc.Spec.ClusterIP+"/", "http://"+pod.Status.PodIP+":8080/",
		// The Service by name, through the node's DNS.
		"http://server/", "http://server."+ns+".svc."+ClusterDomain+"/")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probe logs:\n%s", logs)
	if !succeeded {
		t.Error("the probe pod failed")
	}
	for _, w := range []string{
		"apiserver: v1.36.3",
		"GET http://" + svc.Spec.ClusterIP + "/: " + want,
		"GET http://server/: " + want,
		"GET http://server." + ns + ".svc." + ClusterDomain + "/: " + want,
	} {
		if !strings.Contains(string(logs), w) {
			t.Errorf("probe logs lack %q", w)
		}
	}
	serverLogs, err := cs.CoreV1().Pods(ns).GetLogs("server", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(serverLogs), "serving on") {
		t.Errorf("server logs through the apiserver: %q, %v", serverLogs, err)
	}

	nodeDir, runDir, token := rn.Dir(), "/run/nok"+rn.Token(), rn.Token()
	stopBegan := time.Now()
	c.Stop()
	stopped = true
	t.Logf("control plane and node stopped in %s (the node in %s)", time.Since(stopBegan).Round(time.Millisecond), rn.StoppedIn.Round(time.Millisecond))
	if err := rn.Stop(); err != nil {
		t.Errorf("stopping the node: %v", err)
	}

	for _, l := range leftovers(t, token, nodeDir, runDir) {
		t.Errorf("left behind: %s", l)
	}
	for _, d := range before.diff(captureHostState(t)) {
		t.Errorf("the host changed: %s", d)
	}
}

func waitPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := tools.Poll(ctx, 100*time.Millisecond, 2*time.Minute, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pod = p
		return done(p), nil
	})
	if err != nil {
		events, _ := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		var b strings.Builder
		for _, e := range events.Items {
			fmt.Fprintf(&b, "  %s %s: %s\n", e.InvolvedObject.Name, e.Reason, e.Message)
		}
		status := "none"
		if pod != nil {
			status = fmt.Sprintf("%+v", pod.Status)
		}
		t.Fatalf("pod %s: %v; status %s\nevents:\n%s", name, err, status, b.String())
	}
	return pod
}

func expectBody(ctx context.Context, t *testing.T, client *http.Client, url, want string) {
	t.Helper()
	var last string
	// kube-proxy programs a new Service within a second or so.
	err := tools.Poll(ctx, 200*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = resp.Status + ": " + string(body)
		return strings.Contains(string(body), want), nil
	})
	if err != nil {
		t.Errorf("GET %s: want %q, last got %s", url, want, last)
	}
}

// dialFrom connects from port of the node to addr, waits at most 5 s, and
// closes the connection; it returns how long the dial took.
func dialFrom(rn *Node, port int, addr string) (time.Duration, error) {
	began := time.Now()
	var dialErr error
	err := inNetns(rn.netns, func() {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{Port: port}}
		conn, err := d.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		dialErr = err
	})
	if err != nil {
		return 0, err
	}
	return time.Since(began), dialErr
}
