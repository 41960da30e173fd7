//go:build !unit

package k8sutil_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// The children below mirror what the controllers build: restricted security
// contexts full of false values, ports without a protocol (a defaulted merge
// key), quantities, an IntOrString zero, a Secret's bytes.

func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName:           "web-nginx",
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext:              &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101), RunAsNonRoot: ptr.To(true)},
		Containers: []corev1.Container{{
			Name:            "nginx",
			Image:           "nginx:1.27",
			Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			SecurityContext: restricted(),
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
		}},
		Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("256Mi"))}}}},
	}
}

func meta(ns, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: naming.Labels("nginx", "web", component)}
}

func childStatefulSet(ns string) *appsv1.StatefulSet {
	sel := naming.SelectorLabels("nginx", "web", "server")
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: naming.Labels("nginx", "web", "server")}, Spec: podSpec()}
	return &appsv1.StatefulSet{
		ObjectMeta: meta(ns, "web-nginx", "server"),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](2),
			ServiceName: "web-nginx-headless",
			Selector:    &metav1.LabelSelector{MatchLabels: sel},
			Template:    tmpl,
		},
	}
}

func childService(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta(ns, "web-nginx", "server"),
		Spec: corev1.ServiceSpec{
			Selector:                 naming.SelectorLabels("nginx", "web", "server"),
			Ports:                    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
			PublishNotReadyAddresses: true,
		},
	}
}

func childSecret(ns string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: meta(ns, "web-nginx-config", "config"),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"nginx.conf": []byte("events {}\n")},
	}
}

func childServiceAccount(ns string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: meta(ns, "web-nginx", "server"), AutomountServiceAccountToken: ptr.To(false)}
}

func childPDB(ns string) *policyv1.PodDisruptionBudget {
	zero := intstr.FromInt32(0)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: meta(ns, "web-nginx", "server"),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: naming.SelectorLabels("nginx", "web", "server")},
			MaxUnavailable: &zero,
		},
	}
}

func childJob(ns string) *batchv1.Job {
	spec := podSpec()
	spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: meta(ns, "web-backup", "backup"),
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: naming.Labels("nginx", "web", "backup")}, Spec: spec},
		},
	}
}

func childCronJob(ns string) *batchv1.CronJob {
	spec := podSpec()
	spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.CronJob{
		ObjectMeta: meta(ns, "web-backup", "backup"),
		Spec: batchv1.CronJobSpec{
			Schedule: "0 3 * * *",
			Suspend:  ptr.To(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: naming.Labels("nginx", "web", "backup")}, Spec: spec},
			}},
		},
	}
}

func childConfigMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: meta(ns, "web-nginx-content", "content"), Data: map[string]string{"index.html": "hi"}}
}

// childKinds build one child of every kind the controllers apply.
var childKinds = []func(ns string) client.Object{
	func(ns string) client.Object { return childStatefulSet(ns) },
	func(ns string) client.Object { return childService(ns) },
	func(ns string) client.Object { return childSecret(ns) },
	func(ns string) client.Object { return childServiceAccount(ns) },
	func(ns string) client.Object { return childPDB(ns) },
	func(ns string) client.Object { return childJob(ns) },
	func(ns string) client.Object { return childCronJob(ns) },
	func(ns string) client.Object { return childConfigMap(ns) },
}

// cachedApplier returns an Applier that reads through an informer cache built
// with the operator's own cache options, as the controllers do, and writes
// through a client whose mutating requests are counted.
func cachedApplier(t *testing.T, ns string) (*k8sutil.Applier, *inprocess.RequestCounter) {
	t.Helper()
	applier, counter := newApplier(t)
	c, err := cache.New(env.Cluster(t).Config, cacheOptions(applier, ns))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	applier.Reader = c
	return applier, counter
}

func cacheOptions(a *k8sutil.Applier, ns string) cache.Options {
	opts := operator.CacheOptions(inprocess.Options(ns))
	opts.Scheme = a.Scheme
	return opts
}

// waitCached waits until the cache holds obj as the operator last applied it.
func waitCached(t *testing.T, r client.Reader, obj client.Object) {
	t.Helper()
	want := obj.DeepCopyObject().(client.Object)
	var hash string
	if !framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) bool {
		if err := r.Get(ctx, client.ObjectKeyFromObject(obj), want); err != nil {
			return false
		}
		hash = want.GetAnnotations()[k8sutil.AppliedHashAnnotation]
		return hash != "" && want.GetResourceVersion() == obj.GetResourceVersion()
	}) {
		t.Fatalf("the cache never caught up with %s (hash %q)", client.ObjectKeyFromObject(obj), hash)
	}
}

// TestApplySecondApplyThroughTheOperatorsCacheSendsNoMutatingRequestForEveryKind:
// for every kind the controllers apply, once the informer cache (configured
// with the operator's CacheOptions, which must keep managedFields) holds the
// applied object, applying it again sends nothing.
func TestApplySecondApplyThroughTheOperatorsCacheSendsNoMutatingRequestForEveryKind(t *testing.T) {
	ctx := context.Background()
	ns, _ := env.Namespace(t)
	applier, counter := cachedApplier(t, ns)
	direct, _ := newApplier(t)

	for _, build := range childKinds {
		obj := build(ns)
		kind := fmt.Sprintf("%T", obj)
		if outcome, err := applier.Apply(ctx, obj); err != nil || outcome != k8sutil.Created {
			t.Fatalf("%s: first apply = %v, %v; want Created", kind, outcome, err)
		}
		// The resourceVersion the cache must reach.
		live := build(ns)
		if err := direct.Client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			t.Fatal(err)
		}
		if len(live.GetManagedFields()) == 0 {
			t.Fatalf("%s: the apiserver returned no managedFields", kind)
		}
		waitCached(t, applier.Reader, live)
		cached := build(ns)
		if err := applier.Reader.Get(ctx, client.ObjectKeyFromObject(obj), cached); err != nil {
			t.Fatal(err)
		}
		if len(cached.GetManagedFields()) == 0 {
			t.Errorf("%s: the operator's cache strips managedFields; every resync would write", kind)
		}
		before := len(counter.Writes())
		for i := 0; i < 3; i++ {
			if outcome, err := applier.Apply(ctx, build(ns)); err != nil || outcome != k8sutil.Unchanged {
				t.Errorf("%s: apply #%d of an unchanged object = %v, %v; want Unchanged", kind, i+2, outcome, err)
			}
		}
		if n := len(counter.Writes()) - before; n != 0 {
			t.Errorf("%s: re-applying an unchanged object sent %d mutating requests, want 0: %v", kind, n, counter.Writes()[before:])
		}
	}
}

// driftCase is a change someone else makes to a field the operator owns.
type driftCase struct {
	name string
	// build returns the desired object, and a fresh empty one of its type.
	build func(ns string) client.Object
	// change edits the live object as a user or another controller would.
	change func(obj client.Object)
	// restored reports whether the live object holds the operator's value again.
	restored func(obj client.Object) (got string, ok bool)
}

func TestApplyRestoresOwnedFieldsChangedOrRemovedBySomeoneElse(t *testing.T) {
	sts := func(obj client.Object) *appsv1.StatefulSet { return obj.(*appsv1.StatefulSet) }
	sa := func(obj client.Object) *corev1.ServiceAccount { return obj.(*corev1.ServiceAccount) }
	str := func(p any) string {
		switch v := p.(type) {
		case *bool:
			if v == nil {
				return "<unset>"
			}
			return fmt.Sprint(*v)
		case *int64:
			if v == nil {
				return "<unset>"
			}
			return fmt.Sprint(*v)
		case *int32:
			if v == nil {
				return "<unset>"
			}
			return fmt.Sprint(*v)
		case *intstr.IntOrString:
			if v == nil {
				return "<unset>"
			}
			return v.String()
		}
		return fmt.Sprint(p)
	}
	for _, tc := range []driftCase{
		{
			name:   "ServiceAccount automountServiceAccountToken false to true",
			build:  func(ns string) client.Object { return childServiceAccount(ns) },
			change: func(obj client.Object) { sa(obj).AutomountServiceAccountToken = ptr.To(true) },
			restored: func(obj client.Object) (string, bool) {
				v := sa(obj).AutomountServiceAccountToken
				return str(v), v != nil && !*v
			},
		},
		{
			name:   "ServiceAccount automountServiceAccountToken false removed",
			build:  func(ns string) client.Object { return childServiceAccount(ns) },
			change: func(obj client.Object) { sa(obj).AutomountServiceAccountToken = nil },
			restored: func(obj client.Object) (string, bool) {
				v := sa(obj).AutomountServiceAccountToken
				return str(v), v != nil && !*v
			},
		},
		{
			name:  "StatefulSet container allowPrivilegeEscalation false to true",
			build: func(ns string) client.Object { return childStatefulSet(ns) },
			change: func(obj client.Object) {
				sts(obj).Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
			},
			restored: func(obj client.Object) (string, bool) {
				v := sts(obj).Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation
				return str(v), v != nil && !*v
			},
		},
		{
			name:   "StatefulSet pod automountServiceAccountToken false removed",
			build:  func(ns string) client.Object { return childStatefulSet(ns) },
			change: func(obj client.Object) { sts(obj).Spec.Template.Spec.AutomountServiceAccountToken = nil },
			restored: func(obj client.Object) (string, bool) {
				v := sts(obj).Spec.Template.Spec.AutomountServiceAccountToken
				return str(v), v != nil && !*v
			},
		},
		{
			name:   "StatefulSet pod runAsUser (an int) removed",
			build:  func(ns string) client.Object { return childStatefulSet(ns) },
			change: func(obj client.Object) { sts(obj).Spec.Template.Spec.SecurityContext.RunAsUser = nil },
			restored: func(obj client.Object) (string, bool) {
				v := sts(obj).Spec.Template.Spec.SecurityContext.RunAsUser
				return str(v), v != nil && *v == 101
			},
		},
		{
			name:  "PodDisruptionBudget maxUnavailable 0 to 1",
			build: func(ns string) client.Object { return childPDB(ns) },
			change: func(obj client.Object) {
				obj.(*policyv1.PodDisruptionBudget).Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
			},
			restored: func(obj client.Object) (string, bool) {
				v := obj.(*policyv1.PodDisruptionBudget).Spec.MaxUnavailable
				return str(v), v != nil && *v == intstr.FromInt32(0)
			},
		},
		{
			name:   "Service publishNotReadyAddresses true to false",
			build:  func(ns string) client.Object { return childService(ns) },
			change: func(obj client.Object) { obj.(*corev1.Service).Spec.PublishNotReadyAddresses = false },
			restored: func(obj client.Object) (string, bool) {
				v := obj.(*corev1.Service).Spec.PublishNotReadyAddresses
				return fmt.Sprint(v), v
			},
		},
		{
			name:   "CronJob suspend false to true",
			build:  func(ns string) client.Object { return childCronJob(ns) },
			change: func(obj client.Object) { obj.(*batchv1.CronJob).Spec.Suspend = ptr.To(true) },
			restored: func(obj client.Object) (string, bool) {
				v := obj.(*batchv1.CronJob).Spec.Suspend
				return str(v), v != nil && !*v
			},
		},
		{
			name:   "Job backoffLimit 0 to 6",
			build:  func(ns string) client.Object { return childJob(ns) },
			change: func(obj client.Object) { obj.(*batchv1.Job).Spec.BackoffLimit = ptr.To[int32](6) },
			restored: func(obj client.Object) (string, bool) {
				v := obj.(*batchv1.Job).Spec.BackoffLimit
				return str(v), v != nil && *v == 0
			},
		},
		{
			name:   "Secret data edited",
			build:  func(ns string) client.Object { return childSecret(ns) },
			change: func(obj client.Object) { obj.(*corev1.Secret).Data["nginx.conf"] = []byte("") },
			restored: func(obj client.Object) (string, bool) {
				v := string(obj.(*corev1.Secret).Data["nginx.conf"])
				return fmt.Sprintf("%q", v), v == "events {}\n"
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testDriftIsRestored(t, tc, func(ctx context.Context, c client.Client, obj client.Object) error {
				// kubectl edit: an Update under another field manager.
				return c.Update(ctx, obj, client.FieldOwner("kubectl-edit"))
			})
		})
	}
}

// TestApplyTakesBackFieldsAnotherManagerForceApplied: another manager's
// server-side apply with force takes a field the operator owns.
func TestApplyTakesBackFieldsAnotherManagerForceApplied(t *testing.T) {
	tc := driftCase{
		build: func(ns string) client.Object { return childServiceAccount(ns) },
		restored: func(obj client.Object) (string, bool) {
			v := obj.(*corev1.ServiceAccount).AutomountServiceAccountToken
			return fmt.Sprint(v != nil && *v), v != nil && !*v
		},
	}
	testDriftIsRestored(t, tc, func(ctx context.Context, c client.Client, obj client.Object) error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ServiceAccount")
		u.SetNamespace(obj.GetNamespace())
		u.SetName(obj.GetName())
		u.Object["automountServiceAccountToken"] = true
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("someone-else"), client.ForceOwnership)
	})
}

// testDriftIsRestored runs the drift case twice: with the live object read
// as the API server returns it, and as the operator's cache keeps it, with
// its apply record reduced to a digest (operator.TrimForCache).
func testDriftIsRestored(t *testing.T, tc driftCase, mutate func(context.Context, client.Client, client.Object) error) {
	t.Helper()
	for _, read := range []struct {
		name    string
		trimmed bool
	}{{"read directly", false}, {"read as cached", true}} {
		t.Run(read.name, func(t *testing.T) { testDriftIsRestoredReading(t, tc, mutate, read.trimmed) })
	}
}

// trimmingReader reads like the operator's informer cache: every object it
// returns went through operator.TrimForCache.
type trimmingReader struct{ client.Reader }

func (r trimmingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	_, err := operator.TrimForCache(obj)
	return err
}

func testDriftIsRestoredReading(t *testing.T, tc driftCase, mutate func(context.Context, client.Client, client.Object) error, trimmed bool) {
	t.Helper()
	ctx := context.Background()
	ns, _ := env.Namespace(t)
	applier, counter := newApplier(t)
	if trimmed {
		applier.Reader = trimmingReader{applier.Client}
	}
	key := client.ObjectKeyFromObject(tc.build(ns))

	if outcome, err := applier.Apply(ctx, tc.build(ns)); err != nil || outcome != k8sutil.Created {
		t.Fatalf("first apply = %v, %v; want Created", outcome, err)
	}
	before := len(counter.Writes())
	if outcome, err := applier.Apply(ctx, tc.build(ns)); err != nil || outcome != k8sutil.Unchanged {
		t.Fatalf("second apply = %v, %v; want Unchanged", outcome, err)
	}
	if n := len(counter.Writes()) - before; n != 0 {
		t.Fatalf("second apply sent %d mutating requests, want 0", n)
	}

	live := tc.build(ns)
	if err := applier.Client.Get(ctx, key, live); err != nil {
		t.Fatal(err)
	}
	if tc.change != nil {
		tc.change(live)
	}
	if err := mutate(ctx, applier.Client, live); err != nil {
		t.Fatalf("changing the live object: %v", err)
	}
	if err := applier.Client.Get(ctx, key, live); err != nil {
		t.Fatal(err)
	}
	if got, ok := tc.restored(live); ok {
		t.Fatalf("the change did not reach the live object (still %s)", got)
	}

	before = len(counter.Writes())
	if outcome, err := applier.Apply(ctx, tc.build(ns)); err != nil || outcome != k8sutil.Updated {
		t.Fatalf("apply after the change = %v, %v; want Updated", outcome, err)
	}
	if n := len(counter.Writes()) - before; n != 1 {
		t.Errorf("apply after the change sent %d mutating requests, want 1", n)
	}
	if err := applier.Client.Get(ctx, key, live); err != nil {
		t.Fatal(err)
	}
	if got, ok := tc.restored(live); !ok {
		t.Errorf("after re-apply the field is %s, not the operator's value", got)
	}
	before = len(counter.Writes())
	if outcome, err := applier.Apply(ctx, tc.build(ns)); err != nil || outcome != k8sutil.Unchanged {
		t.Errorf("apply after the restore = %v, %v; want Unchanged", outcome, err)
	}
	if n := len(counter.Writes()) - before; n != 0 {
		t.Errorf("apply after the restore sent %d mutating requests, want 0", n)
	}
}

// TestApplyServiceMonitorWithoutSchemaKeepsSteadyStateAndRestoresDrift covers
// a kind the client has no schema for: prometheus-operator's ServiceMonitor,
// here served by the test framework's schemaless stand-in CRD.
func TestApplyServiceMonitorWithoutSchemaKeepsSteadyStateAndRestoresDrift(t *testing.T) {
	ctx := context.Background()
	cluster := env.Cluster(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	objs, err := framework.DecodeYAML([]byte(framework.ServiceMonitorCRD))
	if err != nil {
		t.Fatal(err)
	}
	if err := framework.ApplyObjects(ctx, cluster.Config, "", objs...); err != nil {
		t.Fatal(err)
	}
	applier, counter := newApplier(t)
	if err := monitor.AddServiceMonitorToScheme(applier.Scheme); err != nil {
		t.Fatal(err)
	}
	// An uncounted client for the test's own reads and edits.
	c, err := client.New(cluster.Config, client.Options{Scheme: applier.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(monitor.ServiceMonitorGVK.GroupVersion().WithKind("ServiceMonitorList"))
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return c.List(ctx, list) == nil }) {
		t.Fatal("the ServiceMonitor API is not served")
	}
	ns := framework.Namespace(t, cs)
	desired := func() *monitoringv1.ServiceMonitor {
		sm := &monitoringv1.ServiceMonitor{
			ObjectMeta: meta(ns, "team-a", "monitor"),
			Spec: monitoringv1.ServiceMonitorSpec{
				Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "nginx", "team": "a"}},
				Endpoints: []monitoringv1.Endpoint{{Port: "metrics", Path: "/metrics", HonorLabels: true}},
			},
		}
		sm.SetGroupVersionKind(monitor.ServiceMonitorGVK)
		return sm
	}
	key := client.ObjectKeyFromObject(desired())
	if outcome, err := applier.Apply(ctx, desired()); err != nil || outcome != k8sutil.Created {
		t.Fatalf("first apply = %v, %v; want Created", outcome, err)
	}
	expectUnchanged := func(when string) {
		t.Helper()
		before := len(counter.Writes())
		if outcome, err := applier.Apply(ctx, desired()); err != nil || outcome != k8sutil.Unchanged {
			t.Errorf("%s: apply = %v, %v; want Unchanged", when, outcome, err)
		}
		if n := len(counter.Writes()) - before; n != 0 {
			t.Errorf("%s: apply sent %d mutating requests, want 0", when, n)
		}
	}
	expectUnchanged("second apply")

	for _, change := range []struct {
		name     string
		edit     func(u *unstructured.Unstructured)
		restored func(u *unstructured.Unstructured) bool
	}{
		{
			"endpoint honorLabels true to false",
			func(u *unstructured.Unstructured) {
				eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
				eps[0].(map[string]any)["honorLabels"] = false
				_ = unstructured.SetNestedSlice(u.Object, eps, "spec", "endpoints")
			},
			func(u *unstructured.Unstructured) bool {
				eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
				return len(eps) == 1 && eps[0].(map[string]any)["honorLabels"] == true
			},
		},
		{
			"an endpoint added by someone else to the operator's (atomic) list",
			func(u *unstructured.Unstructured) {
				eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
				eps = append(eps, map[string]any{"port": "other"})
				_ = unstructured.SetNestedSlice(u.Object, eps, "spec", "endpoints")
			},
			func(u *unstructured.Unstructured) bool {
				eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
				return len(eps) == 1 && eps[0].(map[string]any)["port"] == "metrics"
			},
		},
		{
			"every selector label removed, leaving an empty map",
			func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", "selector", "matchLabels")
			},
			func(u *unstructured.Unstructured) bool {
				m, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
				return m["team"] == "a" && m["app.kubernetes.io/name"] == "nginx"
			},
		},
		{
			"one label removed",
			func(u *unstructured.Unstructured) {
				unstructured.RemoveNestedField(u.Object, "metadata", "labels", naming.LabelComponent)
			},
			func(u *unstructured.Unstructured) bool {
				return u.GetLabels()[naming.LabelComponent] == "monitor"
			},
		},
	} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(monitor.ServiceMonitorGVK)
		if err := c.Get(ctx, key, u); err != nil {
			t.Fatal(err)
		}
		change.edit(u)
		if err := c.Update(ctx, u, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatalf("%s: %v", change.name, err)
		}
		before := len(counter.Writes())
		if outcome, err := applier.Apply(ctx, desired()); err != nil || outcome != k8sutil.Updated {
			t.Errorf("%s: apply = %v, %v; want Updated", change.name, outcome, err)
		}
		if n := len(counter.Writes()) - before; n != 1 {
			t.Errorf("%s: apply sent %d mutating requests, want 1", change.name, n)
		}
		if err := c.Get(ctx, key, u); err != nil {
			t.Fatal(err)
		}
		if !change.restored(u) {
			t.Errorf("%s: not restored: %v", change.name, u.Object)
		}
		expectUnchanged("after restoring " + change.name)
	}
}
