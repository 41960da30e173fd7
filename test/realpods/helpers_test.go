package realpods

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/layout"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// apply creates or updates the objects of a YAML document in namespace.
func apply(ctx context.Context, t *testing.T, c *framework.Cluster, ns, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := framework.DecodeYAML([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if err := framework.ApplyObjects(ctx, c.Config, ns, objs...); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(ns)
		}
	}
	return objs
}

// waitReady waits until every object of ours among objs reports its ready
// condition (Available for an NginxOperator, Ready for an NginxMonitor).
func waitReady(ctx context.Context, t *testing.T, cl client.Client, timeout time.Duration, objs ...*unstructured.Unstructured) {
	t.Helper()
	var last []string
	if !framework.WaitFor(ctx, timeout, func(ctx context.Context) bool {
		last = framework.NotReady(ctx, cl, objs)
		return len(last) == 0
	}) {
		t.Fatalf("not ready after %s:\n%s", timeout, strings.Join(last, "\n"))
	}
}

// clusterIP is the ClusterIP of a Service.
func clusterIP(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// noRedirects makes client return redirects instead of following them.
func noRedirects(c *http.Client) *http.Client {
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// get polls url with client until check accepts the response (kube-proxy
// programs a new Service within a second or so; nginx starts after its
// Service exists), and returns it with its body.
func get(ctx context.Context, t *testing.T, hc *http.Client, url string, check func(*http.Response, string) error) (*http.Response, string) {
	t.Helper()
	var (
		resp *http.Response
		body string
		last error
	)
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		r, err := hc.Do(req)
		if err != nil {
			last = err
			return false
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		resp, body = r, string(b)
		if last = check(r, body); last != nil {
			return false
		}
		return true
	}) {
		t.Errorf("GET %s: %v", url, last)
	}
	return resp, body
}

// want checks a response's status and that its body contains each of subs.
func want(status int, subs ...string) func(*http.Response, string) error {
	return func(r *http.Response, body string) error {
		if r.StatusCode != status {
			return fmt.Errorf("status %s, want %d; body %q", r.Status, status, body)
		}
		for _, s := range subs {
			if !strings.Contains(body, s) {
				return fmt.Errorf("body %q lacks %q", body, s)
			}
		}
		return nil
	}
}

// restricted is a container security context that passes the restricted
// Pod Security Standard.
func restricted() *corev1.SecurityContext {
	sc := layout.RestrictedContainer()
	sc.RunAsUser = ptr.To[int64](65532) // the test images name no user
	return sc
}

// containerLogs returns the logs of every container of the pods of ns that
// match selector, by "pod/container".
func containerLogs(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, selector string) map[string]string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			logs, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
			if err != nil {
				t.Errorf("logs of %s/%s: %v", p.Name, c.Name, err)
				continue
			}
			out[p.Name+"/"+c.Name] = string(logs)
		}
	}
	return out
}

// testServer runs the node's test server as pod and Service name (port 80,
// or 443 with HTTPS from the TLS Secret tlsSecret).
func testServer(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, tlsSecret *string) {
	t.Helper()
	args, port := []string{"serve", ":8080"}, int32(80)
	container := corev1.Container{
		Name: "server", Image: realcluster.TestServer.Name,
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}, PeriodSeconds: 1},
		SecurityContext: restricted(),
	}
	var volumes []corev1.Volume
	if tlsSecret != nil {
		args, port = []string{"serve", ":8080", "/tls/tls.crt", "/tls/tls.key"}, 443
		volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: *tlsSecret}}}}
		container.VolumeMounts = []corev1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}}
	}
	container.Args = args
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{container}, Volumes: volumes},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromString("http")}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// tlsSecret creates the kubernetes.io/tls Secret name.
func tlsSecret(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, certPEM, keyPEM []byte) {
	t.Helper()
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
