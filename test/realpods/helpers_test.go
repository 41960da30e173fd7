package realpods

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/test/tools"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// apply creates or updates the objects of a YAML document in namespace.
func apply(ctx context.Context, t *testing.T, c *framework.Cluster, ns, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := framework.DecodeYAML([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return applyObjects(ctx, t, c, ns, objs...)
}

// applyObjects creates or updates objs in namespace.
func applyObjects(ctx context.Context, t *testing.T, c *framework.Cluster, ns string, objs ...*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
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

// nginxOperator is the NginxOperator name with spec, as a manifest.
func nginxOperator(t *testing.T, name string, spec v1beta1.NginxOperatorSpec) *unstructured.Unstructured {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1beta1.NginxOperator{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	})
	tools.Must(t, err)
	// What a manifest leaves out: a status the apiserver writes, a null
	// creation time.
	delete(obj, "status")
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: obj}
}

// clusterIP is the ClusterIP of a Service.
func clusterIP(ctx context.Context, t testing.TB, cs kubernetes.Interface, ns, name string) string {
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

// tlsSecret creates the kubernetes.io/tls Secret name.
func tlsSecret(ctx context.Context, t testing.TB, cs kubernetes.Interface, ns, name string, certPEM, keyPEM []byte) {
	t.Helper()
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// reloaderStatuses are the /status answers of the reloaders of the running
// pods of ns that match selector, by pod name, read from the node at each
// pod's address as the operator reads them.
func reloaderStatuses(ctx context.Context, t *testing.T, cs kubernetes.Interface, dial func(context.Context, string, string) (net.Conn, error), ns, selector string) map[string]reloader.Status {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	tools.Must(t, err)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dial}}
	out := map[string]reloader.Status{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		resp, err := hc.Get("http://" + net.JoinHostPort(p.Status.PodIP, strconv.Itoa(layout.ReloaderPort)) + "/status")
		tools.Must(t, err)
		var st reloader.Status
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		tools.Must(t, err)
		out[p.Name] = st
	}
	return out
}
