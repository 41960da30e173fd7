package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

func newInstance(ns, name string, replicas int32) *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To(replicas),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		},
	}
}

// availableWith is true when the instance reports Available with want ready
// replicas and a finished rollout.
func availableWith(c client.Client, ns, name string, want int32) func(context.Context) bool {
	return func(ctx context.Context) bool {
		var n v1beta1.NginxOperator
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &n) != nil {
			return false
		}
		avail := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionAvailable)
		prog := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionProgressing)
		return n.Status.ObservedGeneration == n.Generation && n.Status.ReadyReplicas == want &&
			avail != nil && avail.Status == metav1.ConditionTrue && prog != nil && prog.Status == metav1.ConditionFalse
	}
}

// podsWithHash counts the instance's pods running the configuration hash.
func podsWithHash(ctx context.Context, cs kubernetes.Interface, ns, name, hash string) int {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + name})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		if p.Annotations[layout.ConfigHashAnnotation] == hash && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func TestNginxOperatorLifecycleOnTheLocalCluster(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)

	// Two instances in one namespace: neither selects the other's pods.
	web, api := newInstance(ns, "web", 2), newInstance(ns, "api", 1)
	for _, n := range []*v1beta1.NginxOperator{web, api} {
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "web", 2)) {
		t.Fatal("web did not become Available with 2 ready replicas")
	}
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "api", 1)) {
		t.Fatal("api did not become Available with 1 ready replica")
	}

	// Scale 2 -> 4 -> 1.
	for _, replicas := range []int32{4, 1} {
		framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) {
			web.Spec.Replicas = ptr.To(replicas)
		})
		if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "web", replicas)) {
			t.Fatalf("web did not scale to %d ready replicas", replicas)
		}
	}

	// A configuration change rewrites the one config Secret and rolls no
	// pod: the operator annotates each pod with the new hash, which makes
	// the kubelet refresh the volume for the pod's reloader.
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "web", 1)) {
		t.Fatal("web did not settle at 1 replica")
	}
	framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) { web.Spec.Replicas = ptr.To[int32](2) })
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "web", 2)) {
		t.Fatal("web did not scale back to 2")
	}
	unchanged := podUIDs(ctx, t, cs, ns, "web")
	framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) { web.Spec.Config.ClientMaxBodySize = "8m" })
	var hash string
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		var n v1beta1.NginxOperator
		if c.Get(ctx, client.ObjectKeyFromObject(web), &n) != nil {
			return false
		}
		hash = n.Status.ConfigHash
		return n.Status.ObservedGeneration == n.Generation && podsWithHash(ctx, cs, ns, "web", hash) == 2
	}) {
		t.Fatalf("the pods were not told of the new configuration: %d pods with hash %q", podsWithHash(ctx, cs, ns, "web", hash), hash)
	}
	if got := podUIDs(ctx, t, cs, ns, "web"); !maps.Equal(got, unchanged) {
		t.Errorf("a configuration change replaced pods: %v, then %v", unchanged, got)
	}
	names := layout.NamesFor("web")
	if got := configSecrets(ctx, cs, ns, "web"); len(got) != 1 || got[0] != names.ConfigSecret {
		t.Errorf("config Secrets %v, want only %s", got, names.ConfigSecret)
	}
	secret, err := cs.CoreV1().Secrets(ns).Get(ctx, names.ConfigSecret, metav1.GetOptions{})
	if err != nil || !strings.Contains(string(secret.Data["nginx.conf"]), "client_max_body_size 8m;") {
		t.Errorf("config Secret after the change: %v, without client_max_body_size 8m", err)
	}
	// forceRedeploy rolls the pods too: every pod is replaced.
	before := podUIDs(ctx, t, cs, ns, "web")
	framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) {
		web.Spec.ForceRedeploy = "2026-11-22"
	})
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		after := podUIDs(ctx, t, cs, ns, "web")
		if len(after) != 2 || !availableWith(c, ns, "web", 2)(ctx) {
			return false
		}
		for uid := range after {
			if before[uid] {
				return false
			}
		}
		return true
	}) {
		t.Fatal("forceRedeploy did not replace every pod")
	}

	// A PodDisruptionBudget follows the spec: created when asked for,
	// deleted when the field is removed.
	names = layout.NamesFor("web")
	setPDB := func(pdb *v1beta1.PodDisruptionBudgetSpec) {
		t.Helper()
		framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) {
			web.Spec.PodDisruptionBudget = pdb
		})
	}
	pdbExists := func(ctx context.Context) bool {
		_, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, names.PodDisruptionBudget, metav1.GetOptions{})
		return err == nil
	}
	setPDB(&v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))})
	if !framework.WaitFor(ctx, 30*time.Second, pdbExists) {
		t.Fatal("spec.podDisruptionBudget did not create a PodDisruptionBudget")
	}
	setPDB(nil)
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return !pdbExists(ctx) }) {
		t.Fatal("removing spec.podDisruptionBudget did not delete the PodDisruptionBudget")
	}

	// So does a NetworkPolicy.
	setPolicy := func(policy *v1beta1.NetworkPolicySpec) {
		t.Helper()
		framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) {
			web.Spec.NetworkPolicy = policy
		})
	}
	policyExists := func(ctx context.Context) bool {
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, names.NetworkPolicy, metav1.GetOptions{})
		return err == nil
	}
	setPolicy(&v1beta1.NetworkPolicySpec{})
	if !framework.WaitFor(ctx, 30*time.Second, policyExists) {
		t.Fatal("spec.networkPolicy did not create a NetworkPolicy")
	}
	setPolicy(nil)
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return !policyExists(ctx) }) {
		t.Fatal("removing spec.networkPolicy did not delete the NetworkPolicy")
	}

	// A deleted child is restored.
	if err := cs.CoreV1().Services(ns).Delete(ctx, names.Service, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		_, err := cs.CoreV1().Services(ns).Get(ctx, names.Service, metav1.GetOptions{})
		return err == nil
	}) {
		t.Fatal("the deleted Service was not restored")
	}
	// An edited child is put back.
	sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, names.StatefulSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sts.Spec.Template.Spec.Containers[0].Image = "nginx:tampered"
	if _, err := cs.AppsV1().StatefulSets(ns).Update(ctx, sts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, names.StatefulSet, metav1.GetOptions{})
		return err == nil && sts.Spec.Template.Spec.Containers[0].Image == "nginx:1.27"
	}) {
		t.Fatal("the edited StatefulSet image was not restored")
	}

	// Deleting the instance garbage-collects its children and leaves api alone.
	if err := c.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		_, errSts := cs.AppsV1().StatefulSets(ns).Get(ctx, names.StatefulSet, metav1.GetOptions{})
		_, errSvc := cs.CoreV1().Services(ns).Get(ctx, names.Service, metav1.GetOptions{})
		_, errSec := cs.CoreV1().Secrets(ns).Get(ctx, names.ConfigSecret, metav1.GetOptions{})
		return errSts != nil && errSvc != nil && errSec != nil && podsWithHash(ctx, cs, ns, "web", hash) == 0
	}) {
		t.Fatal("the deleted instance's children were not garbage-collected")
	}
	if !availableWith(c, ns, "api", 1)(ctx) {
		t.Error("deleting web disturbed api")
	}
	var apiSts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("api").StatefulSet}, &apiSts); err != nil {
		t.Errorf("api's StatefulSet: %v", err)
	}
}

// configSecrets lists the names of the instance's config Secrets.
func configSecrets(ctx context.Context, cs kubernetes.Interface, ns, instance string) []string {
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + instance})
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Name, layout.NamesFor(instance).ConfigSecret) {
			out = append(out, s.Name)
		}
	}
	return out
}

// A StatefulSet's volumeClaimTemplates cannot change; the operator replaces
// the StatefulSet without deleting its pods, which the new one adopts, so the
// instance keeps serving and is never stuck.
func TestChangedVolumeClaimTemplateRecreatesTheStatefulSetWithoutDowntime(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	site := newInstance(ns, "site", 2)
	site.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi")}
	if err := c.Create(ctx, site); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "site", 2)) {
		t.Fatal("site did not become Available")
	}
	name := layout.NamesFor("site").StatefulSet
	before, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(ctx, t, cs, ns, "site")

	framework.Update(ctx, t, c, site, func(*v1beta1.NginxOperator) {
		site.Spec.Content.VolumeClaimTemplate.Size = resource.MustParse("2Gi")
	})
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && sts.UID != before.UID && len(sts.Spec.VolumeClaimTemplates) == 1 &&
			sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().Cmp(resource.MustParse("2Gi")) == 0 &&
			availableWith(c, ns, "site", 2)(ctx)
	}) {
		var n v1beta1.NginxOperator
		_ = c.Get(ctx, client.ObjectKeyFromObject(site), &n)
		t.Fatalf("the StatefulSet was not recreated with the new claim template; conditions %+v", n.Status.Conditions)
	}
	if after := podUIDs(ctx, t, cs, ns, "site"); !maps.Equal(pods, after) {
		t.Errorf("pods were replaced: before %v, after %v; the new StatefulSet should adopt them", pods, after)
	}
}

func podUIDs(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, instance string) map[string]bool {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + instance})
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out[string(p.UID)] = true
		}
	}
	return out
}

// A name one of an instance's children would get, taken by the user's own
// object of that kind, stops the instance at that child (NameConflict) and
// leaves the object as it was. The operator's cache does not hold the
// user's objects: it reads them from the API, as the bundle's
// ServiceAccount, which is what grants it get on these kinds.
func TestTakenChildNamesAreLeftAlone(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	mine := map[string]string{"app": "mine"}
	for _, tc := range []struct {
		instance, kind string
		userObject     client.Object
	}{
		{"sa", "ServiceAccount", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: layout.NamesFor("sa").ServiceAccount}}},
		{"pdb", "PodDisruptionBudget", &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: layout.NamesFor("pdb").PodDisruptionBudget},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: mine}}}},
		{"sts", "StatefulSet", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: layout.NamesFor("sts").StatefulSet},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: mine},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: mine},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}}}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			tc.userObject.SetNamespace(ns)
			if err := c.Create(ctx, tc.userObject); err != nil {
				t.Fatal(err)
			}
			inst := newInstance(ns, tc.instance, 1)
			inst.Spec.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))}
			if err := c.Create(ctx, inst); err != nil {
				t.Fatal(err)
			}
			want := tc.kind + ` "` + tc.userObject.GetName() + `" already exists and is not controlled by this NginxOperator`
			var got *metav1.Condition
			if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
				var n v1beta1.NginxOperator
				if c.Get(ctx, client.ObjectKeyFromObject(inst), &n) != nil {
					return false
				}
				got = meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded)
				return got != nil && got.Reason == nginx.ReasonNameConflict && strings.Contains(got.Message, want)
			}) {
				t.Fatalf("Degraded = %+v, want %s: %s", got, nginx.ReasonNameConflict, want)
			}
			after := tc.userObject.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.userObject), after); err != nil {
				t.Fatal(err)
			}
			// Its resourceVersion moves with the status the cluster's own
			// controllers write; the operator would leave its owner
			// reference, its labels and its field manager.
			var managers []string
			for _, m := range after.GetManagedFields() {
				managers = append(managers, m.Manager)
			}
			if len(after.GetOwnerReferences()) != 0 || !maps.Equal(after.GetLabels(), tc.userObject.GetLabels()) || slices.Contains(managers, naming.ManagedBy) {
				t.Errorf("the user's %s was written: owners %v, labels %v, field managers %v", tc.kind,
					after.GetOwnerReferences(), after.GetLabels(), managers)
			}
			if tc.kind != "StatefulSet" {
				if _, err := cs.AppsV1().StatefulSets(ns).Get(ctx, layout.NamesFor(tc.instance).StatefulSet, metav1.GetOptions{}); err == nil {
					t.Errorf("the StatefulSet was created although the instance's %s name is taken", tc.kind)
				}
			}
		})
	}
}

// The per-configuration Secrets (<name>-config-<hash>) that operators before
// the reloader made are deleted once every pod runs the current template,
// which mounts the one config Secret instead; a Secret with such a name that
// the instance does not control is left alone.
func TestLegacyConfigSecretsAreDeletedOnceNoPodMountsThem(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	web := newInstance(ns, "web", 1)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "web", 1)) {
		t.Fatal("web did not become Available")
	}
	names := layout.NamesFor("web")
	legacy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: names.ConfigSecretPrefix + "0123456789abcdef", Namespace: ns, Labels: layout.Labels("web"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator",
			Name: web.Name, UID: web.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}, Data: map[string][]byte{"nginx.conf": []byte("events {}\n")}}
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: names.ConfigSecretPrefix + "mine", Namespace: ns, Labels: layout.Labels("web"),
	}}
	for _, s := range []*corev1.Secret{legacy, foreign} {
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Any change of the instance makes the operator look.
	framework.Update(ctx, t, c, web, func(*v1beta1.NginxOperator) { web.Annotations = map[string]string{"touched": "now"} })
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		_, err := cs.CoreV1().Secrets(ns).Get(ctx, legacy.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Fatalf("the legacy config Secret %s was not deleted", legacy.Name)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, foreign.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Secret %s, which the instance does not control: %v", foreign.Name, err)
	}
}
