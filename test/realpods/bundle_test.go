package realpods

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The bundle runs for real: both replicas pass their probes, one holds the
// leader Lease, and the apiserver reaches the conversion webhook through its
// Service with the CA the operator injected, converting the book's
// v1alpha1 example (created in a restricted namespace) to v1beta1.
func TestBundleRunsTwoReadyReplicasOneLeaderAndServesConversion(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)

	pods, err := cs.CoreV1().Pods(realcluster.OperatorNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: operatorSelector,
	})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		names[p.Name] = true
		if p.Spec.NodeName != realcluster.NodeOf(c).Name() {
			t.Errorf("operator pod %s runs on %q, not on the real node", p.Name, p.Spec.NodeName)
		}
		if !framework.PodReady(&p) {
			t.Errorf("operator pod %s is not Ready: %+v", p.Name, p.Status.Conditions)
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount != 0 {
				t.Errorf("operator pod %s: container %s restarted %d times (last: %+v)", p.Name, s.Name, s.RestartCount, s.LastTerminationState)
			}
		}
	}
	if len(names) != realcluster.OperatorReplicas {
		t.Errorf("%d operator pods, want %d: %v", len(names), realcluster.OperatorReplicas, names)
	}
	// The kubelet's probes fail while the caches sync, and the operator
	// says why: a value logfmt cannot encode must not hide the reason.
	for name, logs := range containerLogs(ctx, t, cs, realcluster.OperatorNamespace, operatorSelector) {
		if strings.Contains(logs, "unsupported value type") {
			t.Errorf("the log of %s lost a value:\n%s", name, logs)
		}
	}

	// The leader: controller-runtime's identity is the pod's hostname (its
	// name) and a suffix.
	var holder string
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		var lease coordinationv1.Lease
		if err := cl.Get(ctx, client.ObjectKey{Namespace: realcluster.OperatorNamespace, Name: realcluster.LeaseName}, &lease); err != nil || lease.Spec.HolderIdentity == nil {
			return false
		}
		holder = *lease.Spec.HolderIdentity
		return holder != ""
	}) {
		t.Fatalf("no replica holds the Lease %s/%s", realcluster.OperatorNamespace, realcluster.LeaseName)
	}
	leader := ""
	for n := range names {
		if strings.HasPrefix(holder, n+"_") || holder == n {
			leader = n
		}
	}
	if leader == "" {
		t.Errorf("the Lease is held by %q, which is none of the operator's pods %v", holder, names)
	}
	t.Logf("leader: %s", holder)

	// The CA the operator injected into the CRD's conversion webhook.
	var crd apiextensionsv1.CustomResourceDefinition
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		if err := cl.Get(ctx, client.ObjectKey{Name: "nginxoperators.nginx.operator.dev"}, &crd); err != nil {
			return false
		}
		conv := crd.Spec.Conversion
		return conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil && len(conv.Webhook.ClientConfig.CABundle) > 0
	}) {
		t.Fatalf("the operator did not inject a caBundle into the conversion webhook: %+v", crd.Spec.Conversion)
	}
	svc := crd.Spec.Conversion.Webhook.ClientConfig.Service
	if svc == nil || svc.Namespace != realcluster.OperatorNamespace {
		t.Fatalf("the conversion webhook is not the operator's Service: %+v", crd.Spec.Conversion.Webhook.ClientConfig)
	}

	// The book's example, unchanged but for its namespace, created as
	// v1alpha1 and read back as v1beta1: both go through the webhook.
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	book, err := os.ReadFile(filepath.Join(root, "example", "v1alpha1-book.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	book = regexp.MustCompile(`(?m)^  namespace: team-b$`).ReplaceAll(book, []byte("  namespace: "+ns))
	if !bytes.Contains(book, []byte("namespace: "+ns)) {
		t.Fatalf("example/v1alpha1-book.yaml no longer names the namespace team-b:\n%s", book)
	}
	created := time.Now()
	if out, err := c.Kubectl(ctx, string(book), "create", "-f", "-"); err != nil {
		t.Fatalf("kubectl create -f example/v1alpha1-book.yaml: %v\n%s", err, out)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "nginx.operator.dev", Version: v, Resource: "nginxoperators"}
	}
	var beta *unstructured.Unstructured
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		beta, err = dyn.Resource(gvr("v1beta1")).Namespace(ns).Get(ctx, "book", metav1.GetOptions{})
		return err == nil
	}) {
		t.Fatalf("reading the book's NginxOperator as v1beta1: %v", err)
	}
	ports, _, _ := unstructured.NestedSlice(beta.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["containerPort"] != int64(8080) {
		t.Errorf("v1beta1 spec.ports = %v, want one port 8080 (from v1alpha1 spec.port)", ports)
	}
	if r, _, _ := unstructured.NestedInt64(beta.Object, "spec", "replicas"); r != 1 {
		t.Errorf("v1beta1 spec.replicas = %d, want 1", r)
	}
	alpha, err := dyn.Resource(gvr("v1alpha1")).Namespace(ns).Get(ctx, "book", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading it back as v1alpha1: %v", err)
	}
	if p, _, _ := unstructured.NestedInt64(alpha.Object, "spec", "port"); p != 8080 {
		t.Errorf("v1alpha1 spec.port = %d, want 8080", p)
	}

	// It runs, and nginx answers on its port 8080 through its Service port 80 (it
	// serves an empty content directory: no page, but nginx's answer).
	objs, err := framework.DecodeYAML(book)
	if err != nil {
		t.Fatal(err)
	}
	objs[0].SetAPIVersion("nginx.operator.dev/v1beta1")
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	t.Logf("the book's NginxOperator Available %s after it was created", time.Since(created).Round(time.Millisecond))
	ip := clusterIP(ctx, t, cs, ns, "book")
	get(ctx, t, realcluster.NodeOf(c).HTTPClient(), "http://"+ip+":80/", func(r *http.Response, body string) error {
		if !strings.HasPrefix(r.Header.Get("Server"), "nginx") || r.StatusCode >= 500 {
			return fmt.Errorf("%s from %q: %q", r.Status, r.Header.Get("Server"), body)
		}
		return nil
	})
}

// Deleting the leader's pod, as a rollout or a node drain does, hands the
// Lease over at once: the operator, PID 1 of its container, stops on the
// kubelet's SIGTERM and releases the Lease rather than letting it expire,
// its pod goes well before the grace period's end, and the Deployment is
// available again with a new pod.
func TestDeletingTheLeadersPodHandsTheLeaseOverWithoutWaitingForItToExpire(t *testing.T) {
	ctx, _, _, cs, cl := setup(t)

	holder := func(ctx context.Context) (string, int32) {
		var lease coordinationv1.Lease
		if err := cl.Get(ctx, client.ObjectKey{Namespace: realcluster.OperatorNamespace, Name: realcluster.LeaseName}, &lease); err != nil || lease.Spec.HolderIdentity == nil {
			return "", 0
		}
		name, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
		return name, ptrValue(lease.Spec.LeaseTransitions)
	}
	var leader string
	var transitions int32
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		leader, transitions = holder(ctx)
		return leader != ""
	}) {
		t.Fatal("no replica holds the Lease")
	}
	pod, err := cs.CoreV1().Pods(realcluster.OperatorNamespace).Get(ctx, leader, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Lease's holder %q is not a pod: %v", leader, err)
	}
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second

	deleted := time.Now()
	if err := cs.CoreV1().Pods(realcluster.OperatorNamespace).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var next string
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		next, _ = holder(ctx)
		return next != "" && next != leader
	}) {
		t.Fatalf("no other replica took the Lease after %s deleted", leader)
	}
	handover := time.Since(deleted)
	_, after := holder(ctx)
	t.Logf("Lease passed from %s to %s %s after the delete (transitions %d -> %d)", leader, next, handover.Round(time.Millisecond), transitions, after)
	// The Lease lasts 15s (--leader-elect-lease-duration): a handover
	// sooner than that means the leader released it.
	if handover > 12*time.Second {
		t.Errorf("the Lease passed on after %s: the deleted leader did not release it", handover)
	}

	if !framework.WaitFor(ctx, grace+30*time.Second, func(ctx context.Context) bool {
		_, err := cs.CoreV1().Pods(realcluster.OperatorNamespace).Get(ctx, leader, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Fatalf("the deleted pod %s is still there", leader)
	}
	gone := time.Since(deleted)
	t.Logf("the deleted pod was gone %s after the delete (grace period %s)", gone.Round(time.Millisecond), grace)
	if gone > grace-5*time.Second {
		t.Errorf("the deleted pod took %s to go, about its grace period %s: the operator does not stop on SIGTERM", gone, grace)
	}
	// The Deployment's status may not have seen the delete yet: wait for
	// the pods themselves, then for the status.
	var ready []string
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		ready = readyOperatorPods(ctx, t, cs)
		return len(ready) == realcluster.OperatorReplicas && !slices.Contains(ready, leader)
	}) {
		t.Fatalf("ready operator pods %v, want %d new ones", ready, realcluster.OperatorReplicas)
	}
	if err := realcluster.WaitOperatorAvailable(ctx, cs, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("%v ready %s after the delete", ready, time.Since(deleted).Round(time.Millisecond))
}

// readyOperatorPods are the operator's pods that are Ready and not being
// deleted.
func readyOperatorPods(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(realcluster.OperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && framework.PodReady(&p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// operatorSelector selects the pods of bundle.yaml's Deployment.
var operatorSelector = labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": "nginx-operator", "app.kubernetes.io/component": "controller"}).String()

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
