package chaos

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// want is what the test last asked of one instance.
type want struct {
	replicas  int32
	keepalive int32 // spec.config.keepaliveTimeoutSeconds; 0: not checked
	deleted   bool
}

// world is the test's record of the instances it created in one namespace,
// and the clients it checks them with.
type world struct {
	ns string
	c  client.Client
	cs kubernetes.Interface
	cl *framework.Cluster

	mu   sync.Mutex
	want map[string]want
}

func newWorld(t *testing.T, cl *framework.Cluster, ns string) *world {
	t.Helper()
	c, err := client.New(cl.Config, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return &world{ns: ns, c: c, cs: kubernetes.NewForConfigOrDie(cl.Config), cl: cl, want: map[string]want{}}
}

func (w *world) set(name string, v want) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want[name] = v
}

func (w *world) get(name string) want {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.want[name]
}

func (w *world) snapshot() map[string]want {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]want, len(w.want))
	for k, v := range w.want {
		out[k] = v
	}
	return out
}

func (w *world) live() int {
	n := 0
	for _, v := range w.snapshot() {
		if !v.deleted {
			n++
		}
	}
	return n
}

// instanceName is the name of instance i.
func instanceName(i int) string { return fmt.Sprintf("web-%03d", i) }

// newInstance is a v1beta1 instance with one port and the given replicas
// and keepalive timeout (a configuration field: changing it renders a new
// nginx.conf and rolls the pods).
func newInstance(ns, name string, replicas, keepalive int32) *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To(replicas),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Config:   v1beta1.NginxConfig{NginxSettings: v1beta1.NginxSettings{KeepaliveTimeoutSeconds: keepalive}},
		},
	}
}

// retry runs a write until it succeeds, for up to a minute: the chaos the
// tests cause may fail a request now and then, which a user would retry.
func retry(ctx context.Context, what string, fn func(context.Context) error) error {
	var err error
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Cap: 2 * time.Second, Steps: math.MaxInt32}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		err = fn(ctx)
		return err == nil, nil
	}) != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (w *world) create(ctx context.Context, name string, replicas, keepalive int32) error {
	w.set(name, want{replicas: replicas, keepalive: keepalive})
	return retry(ctx, "creating "+name, func(ctx context.Context) error {
		err := w.c.Create(ctx, newInstance(w.ns, name, replicas, keepalive))
		if apierrors.IsAlreadyExists(err) {
			return nil // an earlier attempt got through
		}
		return err
	})
}

// setKeepalive changes the instance's configuration with a merge patch,
// which needs no resourceVersion and so never conflicts with the
// operator's status writes.
func (w *world) setKeepalive(ctx context.Context, name string, keepalive int32) error {
	v := w.get(name)
	v.keepalive = keepalive
	w.set(name, v)
	patch := fmt.Appendf(nil, `{"spec":{"config":{"keepaliveTimeoutSeconds":%d}}}`, keepalive)
	return retry(ctx, "updating "+name, func(ctx context.Context) error {
		return w.c.Patch(ctx, &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}, client.RawPatch(types.MergePatchType, patch))
	})
}

func (w *world) delete(ctx context.Context, name string) error {
	v := w.get(name)
	v.deleted = true
	w.set(name, v)
	return retry(ctx, "deleting "+name, func(ctx context.Context) error {
		return client.IgnoreNotFound(w.c.Delete(ctx, &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}))
	})
}

// problems lists every way the namespace differs from a converged one:
//
//   - every instance the test did not delete exists, its status observes
//     its generation (observedGeneration and every condition's), Reconciled
//     True, Degraded False, Progressing False, Available True with every
//     replica ready (False with ScaledToZero at 0 replicas), and the status
//     fields the operator fills (selector, configHash, replicas) are there;
//   - its StatefulSet asks for those replicas and runs that configHash, and
//     exactly one config Secret holds that configuration (old ones are
//     removed once no pod runs them), with the keepalive the test set;
//   - every StatefulSet, Service, Secret, ServiceAccount and
//     PodDisruptionBudget carrying the operator's managed-by label has
//     exactly one controller owner, an instance that exists (same UID), and
//     a name derived from that instance's: no duplicate, no orphan; every
//     pod with that label is controlled by a StatefulSet that exists;
//   - deleted instances are gone, and so are their children.
func (w *world) problems(ctx context.Context) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	wants := w.snapshot()

	var list v1beta1.NginxOperatorList
	if err := w.c.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
		return []string{"listing instances: " + err.Error()}
	}
	instances := map[string]*v1beta1.NginxOperator{}
	for i := range list.Items {
		instances[list.Items[i].Name] = &list.Items[i]
	}
	for name, v := range wants {
		n, ok := instances[name]
		switch {
		case v.deleted && ok:
			add("%s: deleted but still there (deletionTimestamp %v, finalizers %v)", name, n.DeletionTimestamp, n.Finalizers)
		case !v.deleted && !ok:
			add("%s: missing", name)
		case ok:
			out = append(out, statusProblems(n, v)...)
		}
	}
	for name := range instances {
		if _, ok := wants[name]; !ok {
			add("%s: an instance the test never created", name)
		}
	}

	sel := metav1.ListOptions{LabelSelector: naming.LabelManagedBy + "=" + naming.ManagedBy}
	type child struct {
		kind string
		meta metav1.ObjectMeta
	}
	var children []child
	statefulSets := map[string]*appsv1.StatefulSet{}
	configSecrets := map[string][]*corev1.Secret{} // by owner name
	sts, err := w.cs.AppsV1().StatefulSets(w.ns).List(ctx, sel)
	if err != nil {
		return append(out, "listing StatefulSets: "+err.Error())
	}
	for i := range sts.Items {
		children = append(children, child{"StatefulSet", sts.Items[i].ObjectMeta})
		statefulSets[sts.Items[i].Name] = &sts.Items[i]
	}
	svcs, err := w.cs.CoreV1().Services(w.ns).List(ctx, sel)
	if err != nil {
		return append(out, "listing Services: "+err.Error())
	}
	for _, o := range svcs.Items {
		children = append(children, child{"Service", o.ObjectMeta})
	}
	secrets, err := w.cs.CoreV1().Secrets(w.ns).List(ctx, sel)
	if err != nil {
		return append(out, "listing Secrets: "+err.Error())
	}
	for i, o := range secrets.Items {
		if o.Name == conversion.DefaultSecretName {
			// The conversion webhook's certificate: the operator's own, no instance's child.
			continue
		}
		children = append(children, child{"Secret", o.ObjectMeta})
		if owner := metav1.GetControllerOf(&o); owner != nil {
			configSecrets[owner.Name] = append(configSecrets[owner.Name], &secrets.Items[i])
		}
	}
	sas, err := w.cs.CoreV1().ServiceAccounts(w.ns).List(ctx, sel)
	if err != nil {
		return append(out, "listing ServiceAccounts: "+err.Error())
	}
	for _, o := range sas.Items {
		children = append(children, child{"ServiceAccount", o.ObjectMeta})
	}
	pdbs, err := w.cs.PolicyV1().PodDisruptionBudgets(w.ns).List(ctx, sel)
	if err != nil {
		return append(out, "listing PodDisruptionBudgets: "+err.Error())
	}
	for _, o := range pdbs.Items {
		children = append(children, child{"PodDisruptionBudget", o.ObjectMeta})
	}

	for _, ch := range children {
		var controllers []metav1.OwnerReference
		for _, ref := range ch.meta.OwnerReferences {
			if ptr.Deref(ref.Controller, false) {
				controllers = append(controllers, ref)
			}
		}
		what := ch.kind + " " + ch.meta.Name
		if len(controllers) != 1 {
			add("%s: %d controller owners, want 1: %v", what, len(controllers), ch.meta.OwnerReferences)
			continue
		}
		ref := controllers[0]
		owner, ok := instances[ref.Name]
		if ref.Kind != "NginxOperator" || !ok || owner.UID != ref.UID {
			add("%s: orphaned: its owner %s %s (uid %s) does not exist", what, ref.Kind, ref.Name, ref.UID)
			continue
		}
		if !nameFits(ch.kind, ch.meta.Name, layout.NamesFor(owner.Name)) {
			add("%s: not a name %s derives for a %s", what, owner.Name, ch.kind)
		}
	}

	for name, n := range instances {
		v, ok := wants[name]
		if !ok || v.deleted {
			continue
		}
		names := layout.NamesFor(name)
		s := statefulSets[names.StatefulSet]
		if s == nil {
			add("%s: no StatefulSet", name)
			continue
		}
		if got := ptr.Deref(s.Spec.Replicas, -1); got != v.replicas {
			add("%s: StatefulSet replicas %d, want %d", name, got, v.replicas)
		}
		cfg := configSecrets[name]
		if len(cfg) != 1 || cfg[0].Name != names.ConfigSecret {
			var got []string
			for _, s := range cfg {
				got = append(got, s.Name)
			}
			add("%s: config Secrets %v, want only %s", name, got, names.ConfigSecret)
		} else if got := cfg[0].Annotations[layout.ConfigHashAnnotation]; got != n.Status.ConfigHash || reloader.ConfigHash(cfg[0].Data[layout.ConfigFile]) != got {
			add("%s: config Secret holds configuration %q, written for %q; status says %q", name, reloader.ConfigHash(cfg[0].Data[layout.ConfigFile]), got, n.Status.ConfigHash)
		} else if v.keepalive != 0 && !hasKeepalive(cfg[0].Data[layout.ConfigFile], v.keepalive) {
			add("%s: nginx.conf lacks keepalive_timeout %d", name, v.keepalive)
		}
	}

	pods, err := w.cs.CoreV1().Pods(w.ns).List(ctx, sel)
	if err != nil {
		return append(out, "listing pods: "+err.Error())
	}
	for _, p := range pods.Items {
		owner := metav1.GetControllerOf(&p)
		if owner == nil || owner.Kind != "StatefulSet" || statefulSets[owner.Name] == nil || statefulSets[owner.Name].UID != owner.UID {
			add("pod %s: orphaned (controller %v)", p.Name, owner)
		}
	}
	slices.Sort(out)
	return out
}

// statusProblems checks one live instance's status against what was asked.
func statusProblems(n *v1beta1.NginxOperator, v want) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: ", n.Name)+fmt.Sprintf(format, args...))
	}
	st := n.Status
	if got := ptr.Deref(n.Spec.Replicas, -1); got != v.replicas {
		add("spec.replicas %d, want %d", got, v.replicas)
	}
	if v.keepalive != 0 && n.Spec.Config.KeepaliveTimeoutSeconds != v.keepalive {
		add("spec keepalive %d, want %d", n.Spec.Config.KeepaliveTimeoutSeconds, v.keepalive)
	}
	if st.ObservedGeneration != n.Generation {
		add("observedGeneration %d, generation %d", st.ObservedGeneration, n.Generation)
	}
	if st.Selector == "" || st.ConfigHash == "" {
		add("status lost: selector %q, configHash %q", st.Selector, st.ConfigHash)
	}
	cond := func(typ string, status metav1.ConditionStatus, reason string) {
		c := meta.FindStatusCondition(st.Conditions, typ)
		switch {
		case c == nil:
			add("no %s condition", typ)
		case c.Status != status || (reason != "" && c.Reason != reason):
			add("%s %s (%s: %s), want %s %s", typ, c.Status, c.Reason, c.Message, status, reason)
		case c.ObservedGeneration != n.Generation:
			add("%s condition observed generation %d of %d", typ, c.ObservedGeneration, n.Generation)
		}
	}
	cond(v1beta1.ConditionReconciled, metav1.ConditionTrue, nginx.ReasonReconcileSucceeded)
	cond(v1beta1.ConditionDegraded, metav1.ConditionFalse, "")
	cond(v1beta1.ConditionProgressing, metav1.ConditionFalse, "")
	if v.replicas == 0 {
		cond(v1beta1.ConditionAvailable, metav1.ConditionFalse, nginx.ReasonScaledToZero)
	} else {
		cond(v1beta1.ConditionAvailable, metav1.ConditionTrue, "")
	}
	if st.Replicas != v.replicas || st.ReadyReplicas != v.replicas || st.UpdatedReplicas != v.replicas {
		add("status replicas %d ready %d updated %d, want %d", st.Replicas, st.ReadyReplicas, st.UpdatedReplicas, v.replicas)
	}
	return out
}

func nameFits(kind, name string, names layout.Names) bool {
	switch kind {
	case "StatefulSet":
		return name == names.StatefulSet
	case "Service":
		return name == names.Service || name == names.HeadlessService
	case "ServiceAccount":
		return name == names.ServiceAccount
	case "PodDisruptionBudget":
		return name == names.PodDisruptionBudget
	case "Secret":
		return name == names.ConfigSecret
	}
	return false
}

// hasKeepalive reports whether nginx.conf sets keepalive_timeout to seconds.
func hasKeepalive(conf []byte, seconds int32) bool {
	for line := range strings.Lines(string(conf)) {
		f := strings.Fields(strings.NewReplacer(";", " ", `"`, " ", "'", " ").Replace(line))
		if len(f) >= 2 && f[0] == "keepalive_timeout" && (f[1] == fmt.Sprint(seconds) || f[1] == fmt.Sprintf("%ds", seconds)) {
			return true
		}
	}
	return false
}

// waitConverged polls problems until there are none and returns how long
// that took; after timeout it fails the test with what is still wrong.
func (w *world) waitConverged(ctx context.Context, t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last []string
	// Each pass lists every child of hundreds of instances: poll gently.
	if !framework.WaitForEvery(ctx, time.Second, timeout, func(ctx context.Context) bool {
		last = w.problems(ctx)
		return len(last) == 0
	}) {
		if len(last) > 40 {
			last = append(last[:40], fmt.Sprintf("... and %d more", len(last)-40))
		}
		t.Fatalf("%d instances did not converge within %s:\n%s\n%s", w.live(), timeout, strings.Join(last, "\n"), w.clusterReport(ctx))
	}
	return time.Since(start)
}

// clusterReport says what the cluster's own components did with the
// instances' pods, so that a failure tells the operator's fault from a
// control plane or fake node that stopped working: crashed components,
// nodes not Ready or tainted, pods by how far they got.
func (w *world) clusterReport(ctx context.Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "components not running: %v\n", w.cl.Exited())
	if nodes, err := w.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			ready := "Unknown"
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					ready = string(c.Status) + " since " + c.LastTransitionTime.Format(time.TimeOnly)
				}
			}
			fmt.Fprintf(&b, "node %s: Ready=%s, taints %v\n", n.Name, ready, n.Spec.Taints)
		}
	}
	if pods, err := w.cs.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{}); err == nil {
		count := map[string]int{}
		for _, p := range pods.Items {
			state := "unscheduled"
			switch {
			case !p.DeletionTimestamp.IsZero():
				state = "terminating"
			case framework.PodReady(&p):
				state = "ready"
			case p.Spec.NodeName != "":
				state = "scheduled, not ready (" + string(p.Status.Phase) + ")"
			}
			count[state]++
		}
		fmt.Fprintf(&b, "pods of %s: %v\n", w.ns, count)
	}
	return b.String()
}

// observed counts the instances whose status observes their generation.
func (w *world) observed(ctx context.Context) (n, total int) {
	var list v1beta1.NginxOperatorList
	if err := w.c.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
		return 0, 0
	}
	for _, o := range list.Items {
		if o.Status.ObservedGeneration == o.Generation {
			n++
		}
	}
	return n, len(list.Items)
}
