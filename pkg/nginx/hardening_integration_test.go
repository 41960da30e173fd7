//go:build !unit

package nginx_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// errorCount is nginx_operator_reconcile_errors_total of this controller for reason.
func errorCount(t *testing.T, reason string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "nginx_operator_reconcile_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == nginx.ControllerName && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// childNames lists the names of the objects of the namespace that carry the
// instance's label, by kind.
func childNames(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, instance string) []string {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + instance}
	var out []string
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		out = append(out, "Secret/"+s.Name)
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		out = append(out, "Service/"+s.Name)
	}
	sas, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sas.Items {
		out = append(out, "ServiceAccount/"+s.Name)
	}
	sts, err := cs.AppsV1().StatefulSets(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sts.Items {
		out = append(out, "StatefulSet/"+s.Name)
	}
	return out
}

func degradedWith(c client.Client, ns, name, reason, msg string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		cond := framework.InstanceCondition(ctx, c, ns, name, v1beta1.ConditionDegraded)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == reason && strings.Contains(cond.Message, msg)
	}
}

// An invalid spec is refused before any child is applied, terminally (not
// retried with backoff), and counted by its reason. A child name taken by the
// user's own object stops the apply before the StatefulSet, so no pod
// starts; that object is left alone and a Warning Event says why.
func TestInvalidSpecsAndTakenNamesStartNoPod(t *testing.T) {
	// Not parallel: the error counter it reads is the process's, and the
	// in-process operators of parallel tests reconcile invalid specs too.
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	invalidBefore := errorCount(t, nginx.ReasonInvalidConfig)

	// The schema accepts duplicate location paths (a pairwise CEL rule
	// would exceed the budget); the controller refuses them.
	dup := instance(ns, "dup")
	static := &v1beta1.StaticLocation{}
	dup.Spec.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/a", Static: static}, {Path: "/a", Static: static}}}}
	// A pod label value the apiserver would refuse in the StatefulSet,
	// the last child: before, everything else was applied first.
	badLabel := instance(ns, "badlabel")
	badLabel.Spec.Pod.Labels = map[string]string{"team": "a b"}

	// A spec within the CRD's bounds whose nginx.conf is larger than a
	// Secret carries: 32 servers of 64 redirects, each a prefix of its
	// own (two location blocks and a map), 1.6 MB.
	huge := instance(ns, "huge")
	huge.Spec.Config.Servers = nil
	for i := range v1beta1.MaxServers {
		var locations []v1beta1.Location
		for j := range v1beta1.MaxLocations {
			path := fmt.Sprintf("/%060d", j)
			locations = append(locations, v1beta1.Location{Path: path, PathType: v1beta1.PathPrefixElements, Redirect: &v1beta1.RedirectLocation{
				Hostname: "b.example.com", Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To(path)}}})
		}
		huge.Spec.Config.Servers = append(huge.Spec.Config.Servers, v1beta1.Server{Port: "http", ServerNames: []string{fmt.Sprintf("s%d.example.com", i)}, Locations: locations})
	}
	// The user's own Service already has the name the instance's client
	// Service would get.
	userSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "mine"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, userSvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	taken := instance(ns, "taken")
	for _, n := range []*v1beta1.NginxOperator{dup, badLabel, huge, taken} {
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, reason, msg string
		kinds             []string // of the children applied before the refusal
	}{
		{"dup", nginx.ReasonInvalidConfig, "appears twice", nil},
		{"badlabel", nginx.ReasonInvalidConfig, "spec.pod.labels", nil},
		{"huge", nginx.ReasonInvalidConfig, "more than the 1048466 a Secret carries", nil},
		{"taken", nginx.ReasonNameConflict, `Service "taken" already exists and is not controlled by this NginxOperator`,
			[]string{"Secret", "Service", "ServiceAccount"}},
	} {
		if !framework.WaitFor(ctx, 30*time.Second, degradedWith(c, ns, tc.name, tc.reason, tc.msg)) {
			t.Errorf("%s: Degraded %+v, want %s mentioning %q", tc.name, framework.InstanceCondition(ctx, c, ns, tc.name, v1beta1.ConditionDegraded), tc.reason, tc.msg)
		}
		got := childNames(ctx, t, cs, ns, tc.name)
		var kinds []string
		for _, child := range got {
			kinds = append(kinds, strings.Split(child, "/")[0])
		}
		if !slices.Equal(kinds, tc.kinds) {
			t.Errorf("%s: children %v, want one of each kind %v", tc.name, got, tc.kinds)
		}
	}
	if !framework.EventRecorded(ctx, cs, ns, "taken", corev1.EventTypeWarning, nginx.ReasonNameConflict, `Service "taken" already exists`, 30*time.Second) {
		t.Errorf("no Warning Event %s on the instance whose Service name is taken", nginx.ReasonNameConflict)
	}
	if got := errorCount(t, nginx.ReasonInvalidConfig) - invalidBefore; got < 3 {
		t.Errorf("reconcile_errors_total{reason=InvalidConfig} grew by %v, want at least 3", got)
	}
	mine, err := cs.CoreV1().Services(ns).Get(ctx, "taken", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mine.Spec.Selector["app"] != "mine" || len(mine.OwnerReferences) != 0 || len(mine.Labels) != 0 {
		t.Errorf("the user's Service was taken over: selector %v, owners %v, labels %v", mine.Spec.Selector, mine.OwnerReferences, mine.Labels)
	}

	// Terminal: with nothing changed, the invalid instance is not retried.
	settled := errorCount(t, nginx.ReasonInvalidConfig)
	// A window in which nothing may happen: a retried spec would fail again
	// within it (the controller's first backoff is milliseconds).
	time.Sleep(3 * time.Second)
	if got := errorCount(t, nginx.ReasonInvalidConfig); got != settled {
		t.Errorf("an invalid spec was retried: errors went from %v to %v with nothing changed", settled, got)
	}
}

// A spec the CRD admits but the API server refuses in a child (here a
// memory request above its limit by less than the CRD's comparison, in
// doubles, can see, refused in the StatefulSet, the last child) changes no
// child at all, though the same edit changed what the
// config Secret and the Service hold: the refusal is found by a dry run
// before the first write, and reported as InvalidConfig naming the field.
func TestASpecAChildsAPIRefusesChangesNoChild(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	web := instance(ns, "web")
	web.Spec.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "web") }) {
		t.Fatal("the valid instance was never reconciled")
	}
	versions := func() map[string]string {
		out := map[string]string{}
		names := layout.NamesFor("web")
		for _, obj := range []client.Object{&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: names.StatefulSet}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigSecret}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: names.Service}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: names.HeadlessService}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: names.ServiceAccount}},
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: names.PodDisruptionBudget}},
		} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: obj.GetName()}, obj); err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%T %s", obj, obj.GetName())] = obj.GetResourceVersion()
		}
		return out
	}
	before := versions()

	// The operator may be writing the status: retry on conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n v1beta1.NginxOperator
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), &n); err != nil {
			return err
		}
		n.Spec.Config.KeepaliveTimeoutSeconds = 30                              // the config Secret
		n.Spec.Service.Annotations = map[string]string{"team": "a"}             // the Service
		n.Spec.PodDisruptionBudget.MaxUnavailable = ptr.To(intstr.FromInt32(2)) // the PDB
		n.Spec.Resources = requestAboveLimitBeyondDoubles()
		return c.Update(ctx, &n)
	}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, degradedWith(c, ns, "web", nginx.ReasonInvalidConfig, "spec.resources.requests")) {
		t.Fatalf("Degraded %+v, want InvalidConfig naming spec.resources.requests", framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionDegraded))
	}
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("children changed by a spec the API server refuses (-before +after):\n%s", diff)
	}
	if !framework.EventRecorded(ctx, cs, ns, "web", corev1.EventTypeWarning, nginx.ReasonInvalidConfig, "spec.resources", 30*time.Second) {
		t.Errorf("no Warning Event %s naming spec.resources", nginx.ReasonInvalidConfig)
	}
}

// requestAboveLimitBeyondDoubles is a memory request one byte above its
// limit at 2^53: the CRD compares amounts as doubles, which cannot tell them
// apart, and admits it; the API server compares quantities exactly and
// refuses the pod template (Documentation/nginxoperator.md's short list).
func requestAboveLimitBeyondDoubles() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("9007199254740993")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("9007199254740992")},
	}
}

// A new instance whose spec sets a field only a child's API server checks
// in full is dry-run before its first write: a StatefulSet the API server
// refuses is InvalidConfig naming the spec field, no child at all is
// written (no ServiceAccount, config Secret, Services or StatefulSet), and
// the corrected spec converges.
func TestANewInstanceTheAPIServerRefusesNamesTheField(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	web := instance(ns, "web")
	web.Spec.Resources = requestAboveLimitBeyondDoubles()
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	const field = "spec.resources.requests"
	if !framework.WaitFor(ctx, 30*time.Second, degradedWith(c, ns, "web", nginx.ReasonInvalidConfig, field)) {
		t.Fatalf("Degraded %+v, want InvalidConfig naming %s", framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionDegraded), field)
	}
	names := layout.NamesFor("web")
	sts := names.StatefulSet
	for kind, err := range map[string]error{
		"StatefulSet":      get(cs.AppsV1().StatefulSets(ns).Get(ctx, sts, metav1.GetOptions{})),
		"ServiceAccount":   get(cs.CoreV1().ServiceAccounts(ns).Get(ctx, names.ServiceAccount, metav1.GetOptions{})),
		"config Secret":    get(cs.CoreV1().Secrets(ns).Get(ctx, names.ConfigSecret, metav1.GetOptions{})),
		"Service":          get(cs.CoreV1().Services(ns).Get(ctx, names.Service, metav1.GetOptions{})),
		"headless Service": get(cs.CoreV1().Services(ns).Get(ctx, names.HeadlessService, metav1.GetOptions{})),
	} {
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s of a refused spec: %v, want NotFound", kind, err)
		}
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n v1beta1.NginxOperator
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), &n); err != nil {
			return err
		}
		n.Spec.Resources.Requests = n.Spec.Resources.Limits
		return c.Update(ctx, &n)
	}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		_, err := cs.AppsV1().StatefulSets(ns).Get(ctx, sts, metav1.GetOptions{})
		return err == nil
	}) {
		t.Errorf("the corrected spec made no StatefulSet; Degraded %+v", framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionDegraded))
	}
}

// Admission refuses user keys under the operator's annotation prefix and
// instance names whose children would collide or be cut.
func TestAdmissionRefusesReservedKeysAndCollidingNames(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env)
	hash := instance(ns, "hash")
	hash.Spec.Pod.Annotations = map[string]string{layout.ConfigHashAnnotation: "pinned"}
	svcAnn := instance(ns, "svc")
	svcAnn.Spec.Service.Annotations = map[string]string{"nginx.operator.dev/applied-hash": "x"}
	for _, tc := range []struct {
		obj  *v1beta1.NginxOperator
		want string
	}{
		{hash, "reserved for the operator"},
		{svcAnn, "reserved for the operator"},
		{instance(ns, "web-pods"), "not end with '-pods'"},
		{instance(ns, strings.Repeat("a", 48)), "at most 47 characters"},
		{instance(ns, "1st"), "start with a letter"},
	} {
		err := c.Create(ctx, tc.obj)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.obj.Name, err, tc.want)
		}
	}
}

// A rotated TLS certificate is recorded on the config Secret and on every
// pod (which makes the kubelet refresh the pod's volumes for the reloader
// at once), and leaves the pod template alone: no pod restarts.
func TestRotatedTLSSecretNudgesThePodsAndRollsNone(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("cert-1"), "tls.key": []byte("key-1")}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := instance(ns, "web")
	web.Spec.Config.Servers = []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "web-tls"}}}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	names := layout.NamesFor("web")
	tlsHash := func(ctx context.Context) string {
		var cfg corev1.Secret
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConfigSecret}, &cfg) != nil {
			return ""
		}
		return cfg.Annotations[layout.FilesHashAnnotation]
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return tlsHash(ctx) != "" }) {
		t.Fatal("the config Secret records no files hash")
	}
	first := tlsHash(ctx)
	var sts appsv1.StatefulSet
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.StatefulSet}, &sts) == nil
	}) {
		t.Fatal("no StatefulSet")
	}
	// No kubelet here: a pod of the StatefulSet, as its controller makes it.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: ns, Labels: sts.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}}},
		Spec: sts.Spec.Template.Spec,
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The pod's creation wakes the operator too: let that reconcile pass,
	// so that only the Secret's watch can bring it back below.
	time.Sleep(2 * time.Second)

	secret.Data["tls.crt"] = []byte("cert-2")
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Nothing of the instance changes: the Secret's watch alone brings the
	// operator back (nothing is polled).
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		h := tlsHash(ctx)
		return h != "" && h != first && c.Get(ctx, client.ObjectKeyFromObject(pod), pod) == nil && pod.Annotations[layout.FilesHashAnnotation] == h
	}) {
		t.Fatalf("a rotated certificate: config Secret files hash %q (was %q), pod annotations %v", tlsHash(ctx), first, pod.Annotations)
	}
	var after appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKeyFromObject(&sts), &after); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(sts.Spec.Template, after.Spec.Template) {
		t.Error("a rotated certificate changed the pod template: the pods would restart")
	}
}

// spec.networkPolicy makes a NetworkPolicy that admits clients to nginx's
// ports, the operator to the reloader and metricsFrom to the metrics; a
// peer the API server refuses changes nothing and names the field; removing
// the field deletes the policy.
func TestNetworkPolicyFollowsTheSpec(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	web := instance(ns, "web")
	web.Spec.Metrics.Enabled = true
	web.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{
		From:        []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}}},
		MetricsFrom: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "monitoring"}}}},
	}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	name := layout.NamesFor("web").NetworkPolicy
	var policy *networkingv1.NetworkPolicy
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var err error
		policy, err = cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}) {
		t.Fatal("spec.networkPolicy made no NetworkPolicy")
	}
	ports := func(rule networkingv1.NetworkPolicyIngressRule) (out []int32) {
		for _, p := range rule.Ports {
			out = append(out, p.Port.IntVal)
		}
		return out
	}
	rules := policy.Spec.Ingress
	if len(rules) != 3 || !slices.Equal(ports(rules[0]), []int32{8080}) || rules[0].From[0].IPBlock == nil ||
		!slices.Equal(ports(rules[1]), []int32{layout.ReloaderPort}) || rules[1].From[0].PodSelector == nil ||
		!slices.Equal(ports(rules[2]), []int32{layout.ReloaderPort, layout.ExporterPort}) || rules[2].From[0].NamespaceSelector == nil {
		t.Fatalf("NetworkPolicy rules %+v, want nginx's port from 10.0.0.0/8, the reloader's from the operator, the metrics from team=monitoring", rules)
	}

	// A CIDR the NetworkPolicy's API refuses is refused at admission,
	// naming the field, and the policy stays as it was.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n v1beta1.NginxOperator
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), &n); err != nil {
			return err
		}
		n.Spec.NetworkPolicy.From[0].IPBlock.CIDR = "10.0.0.0/33"
		return c.Update(ctx, &n)
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.networkPolicy.from[0].ipBlock.cidr") {
		t.Fatalf("update with cidr 10.0.0.0/33: %v, want Invalid naming spec.networkPolicy.from[0].ipBlock.cidr", err)
	}
	if now, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{}); err != nil || now.ResourceVersion != policy.ResourceVersion {
		t.Errorf("the refused spec changed the NetworkPolicy (%v)", err)
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n v1beta1.NginxOperator
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), &n); err != nil {
			return err
		}
		n.Spec.NetworkPolicy = nil
		return c.Update(ctx, &n)
	}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Error("removing spec.networkPolicy did not delete the NetworkPolicy")
	}
}

// get is the error of a Get, whatever it got.
func get[T any](_ T, err error) error { return err }
