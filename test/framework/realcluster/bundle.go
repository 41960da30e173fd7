package realcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// What bundle.yaml installs.
const (
	// OperatorNamespace is the namespace of the operator's Deployment.
	OperatorNamespace = "nginx-operator"
	// OperatorDeployment is the name of the operator's Deployment, its
	// ServiceAccount and container ("operator").
	OperatorDeployment = "nginx-operator"
	// OperatorReplicas is the Deployment's replica count.
	OperatorReplicas = 2
	// LeaseName is the leader election Lease, in OperatorNamespace.
	LeaseName = "nginx-operator.nginx.operator.dev"
)

// Require skips the test when a real node cannot run here (or fails it in
// CI), as node.Require, then builds the images (BuildImages), failing the
// test if that fails. Call it before framework.Env.Cluster: a cold build
// cache makes the build take minutes, which then do not count against the
// cluster's start.
func Require(t testing.TB) {
	t.Helper()
	node.Require(t)
	began := time.Now()
	imgs, err := BuildImages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > time.Second {
		t.Logf("images built in %s into %s", d.Round(time.Millisecond), imgs.Dir)
	}
}

var (
	installMu sync.Mutex
	installed = map[*framework.Cluster]error{}
)

// InstallBundle creates bundle.yaml on c with `kubectl create -f -`, once
// per cluster (later calls return at once, failing the test if the first
// failed), and waits until the operator's Deployment has its 2 replicas
// available. The bundle is changed in one way only: the operator's
// container gets ImageArgs, naming the built images (BuildImages), which
// the node holds; its own image is bundle.yaml's, which hack/images names
// by default.
func InstallBundle(ctx context.Context, t testing.TB, c *framework.Cluster) {
	t.Helper()
	installMu.Lock()
	defer installMu.Unlock()
	err, done := installed[c]
	if !done {
		began := time.Now()
		err = installBundle(ctx, c)
		installed[c] = err
		if err == nil {
			t.Logf("bundle.yaml installed, operator available in %s", time.Since(began).Round(time.Millisecond))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func installBundle(ctx context.Context, c *framework.Cluster) error {
	imgs, err := BuildImages(ctx)
	if err != nil {
		return err
	}
	manifest, err := BundleManifest(imgs)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if out, err := c.Kubectl(cctx, string(manifest), "create", "-f", "-"); err != nil {
		return fmt.Errorf("kubectl create -f bundle.yaml: %v\n%s", err, out)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if err := WaitOperatorAvailable(ctx, cs, 2*time.Minute); err != nil {
		return fmt.Errorf("%w\n%s", err, Describe(ctx, cs, OperatorNamespace))
	}
	return nil
}

// ImageArgs are the operator's flags that make it deploy imgs: nginx, the
// exporter, and the backup agent and nginx-reloader (both from the
// operator's image). The agent's default is the operator's
// repository tagged with the binary's version, which a build of the
// working tree (git describe) does not match; bundle.yaml's own image tag
// is what imgs' operator image carries, so it is named explicitly, as
// Documentation/images.md tells users of another registry to.
func ImageArgs(imgs *Images) []string {
	return []string{"--nginx-image=" + imgs.Ref(Nginx), "--exporter-image=" + imgs.Ref(Exporter), "--agent-image=" + imgs.Ref(Operator), "--reloader-image=" + imgs.Ref(Operator)}
}

// BundleManifest is bundle.yaml with the operator's container given
// ImageArgs.
func BundleManifest(imgs *Images) ([]byte, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	return BundleFileManifest(filepath.Join(root, "bundle.yaml"), ImageArgs(imgs)...)
}

// BundleFileManifest is the bundle at path (a release's) with args added to
// the operator's container.
func BundleFileManifest(path string, args ...string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := framework.DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	found := false
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == OperatorDeployment {
			if err := addOperatorArgs(o, args...); err != nil {
				return nil, err
			}
			found = true
		}
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	if !found {
		return nil, fmt.Errorf("%s has no Deployment %s", path, OperatorDeployment)
	}
	return []byte(out.String()), nil
}

func addOperatorArgs(d *unstructured.Unstructured, args ...string) error {
	containers, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return err
	}
	for i, raw := range containers {
		ctr, ok := raw.(map[string]any)
		if !ok || ctr["name"] != "operator" {
			continue
		}
		old, _, err := unstructured.NestedStringSlice(ctr, "args")
		if err != nil {
			return err
		}
		all := make([]any, 0, len(old)+len(args))
		for _, a := range append(old, args...) {
			all = append(all, a)
		}
		ctr["args"] = all
		containers[i] = ctr
		return unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
	}
	return fmt.Errorf("Deployment %s has no container operator", d.GetName())
}

// WaitOperatorAvailable waits until the operator's Deployment is Available
// with OperatorReplicas replicas, all updated and ready.
func WaitOperatorAvailable(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	var last string
	err := tools.Poll(ctx, 250*time.Millisecond, timeout, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(OperatorNamespace).Get(ctx, OperatorDeployment, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		available := false
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				available = true
			}
		}
		s := d.Status
		last = fmt.Sprintf("available=%v replicas=%d updated=%d ready=%d available=%d observedGeneration=%d/%d",
			available, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration, d.Generation)
		return available && s.ObservedGeneration == d.Generation && s.Replicas == OperatorReplicas &&
			s.UpdatedReplicas == OperatorReplicas && s.ReadyReplicas == OperatorReplicas && s.AvailableReplicas == OperatorReplicas, nil
	})
	if err != nil {
		return fmt.Errorf("the operator's Deployment is not available: %w (last: %s)", err, last)
	}
	return nil
}

// RestrictedNamespace creates a namespace for the test, named after it and
// labelled pod-security.kubernetes.io/enforce=restricted, and deletes it
// when the test ends.
func RestrictedNamespace(t testing.TB, cs kubernetes.Interface) string {
	t.Helper()
	name := naming.NameWithLimit(40, "t", strings.ToLower(t.Name())) + "-" + rand.String(5)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
	}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// Describe says what runs in namespace: its pods with their containers'
// states, the events, and the last lines of every container's log. Tests
// log it when something does not become ready.
func Describe(ctx context.Context, cs kubernetes.Interface, namespace string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	var b strings.Builder
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("listing pods of %s: %v", namespace, err)
	}
	fmt.Fprintf(&b, "pods of %s:\n", namespace)
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "  %s: %s on %q ip %s\n", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				fmt.Fprintf(&b, "    %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "    container %s ready=%v restarts=%d state=%s last=%s\n", s.Name, s.Ready, s.RestartCount, stateString(s.State), stateString(s.LastTerminationState))
		}
	}
	if events, err := cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		sort.Slice(events.Items, func(i, j int) bool {
			return events.Items[i].LastTimestamp.Before(&events.Items[j].LastTimestamp)
		})
		fmt.Fprintf(&b, "events of %s:\n", namespace)
		for _, e := range events.Items {
			fmt.Fprintf(&b, "  %s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	tail := int64(30)
	for _, p := range pods.Items {
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			logs, err := cs.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: &tail}).DoRaw(ctx)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "log of %s/%s:\n%s\n", p.Name, c.Name, indent(string(logs)))
		}
	}
	return b.String()
}

func stateString(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return fmt.Sprintf("waiting(%s: %s)", s.Waiting.Reason, s.Waiting.Message)
	case s.Terminated != nil:
		return fmt.Sprintf("terminated(%s, exit %d: %s)", s.Terminated.Reason, s.Terminated.ExitCode, strings.TrimSpace(s.Terminated.Message))
	}
	return "-"
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
