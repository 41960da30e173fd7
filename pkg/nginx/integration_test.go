//go:build !unit

package nginx_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

// reconcileCount is controller-runtime's controller_runtime_reconcile_total
// of this controller (Named nginx.ControllerName), summed over results, from
// the registry every in-process manager shares.
func reconcileCount(t *testing.T) float64 { return inprocess.Reconciles(t, nginx.ControllerName) }

func instance(ns, name string) *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](2),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		},
	}
}

// reconciled is true once the instance's status describes its current generation.
func reconciled(ctx context.Context, c client.Client, ns, name string) bool {
	var n v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &n); err != nil {
		return false
	}
	cond := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionReconciled)
	return n.Status.ObservedGeneration == n.Generation && cond != nil && cond.Status == metav1.ConditionTrue
}

func TestInvalidSpecsAreRefusedAtAdmissionNamingTheField(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env)
	assertRefused(ctx, t, c, ns, []refusal{
		{"negative replicas", map[string]any{"replicas": -1}, "spec.replicas"},
		{"privileged port", map[string]any{"ports": []any{map[string]any{"name": "http", "containerPort": 80}}}, "spec.ports[0].containerPort"},
		{"port out of range", map[string]any{"ports": []any{map[string]any{"name": "http", "containerPort": 70000}}}, "spec.ports[0].containerPort"},
		{"reserved port", map[string]any{"ports": []any{map[string]any{"name": "http", "containerPort": 18080}}}, "reserved by the operator"},
		{"duplicate port names", map[string]any{"ports": []any{map[string]any{"name": "http", "containerPort": 8080}, map[string]any{"name": "http", "containerPort": 8081}}}, "Duplicate value"},
		{"duplicate container ports", map[string]any{"ports": []any{map[string]any{"name": "a", "containerPort": 8080}, map[string]any{"name": "b", "containerPort": 8080}}}, "containerPort values must be unique"},
		{"UDP port for nginx's default HTTP server", map[string]any{"ports": []any{map[string]any{"name": "dns", "containerPort": 5353, "protocol": "UDP"}}}, "it must be a TCP port"},
		{"SCTP port", map[string]any{"ports": []any{map[string]any{"name": "sctp", "containerPort": 5353, "protocol": "SCTP"}}}, "spec.ports[0].protocol"},
		{"server on an undeclared port", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "https"}}}}, "every config.servers[].port must be the name of one of spec.ports"},
		{"directive injection in a server name", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "http", "serverNames": []any{"a.com; include /etc/passwd"}}}}}, "spec.config.servers[0].serverNames[0]"},
		{"location path with a brace", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "http", "locations": []any{map[string]any{"path": "/a{", "static": map[string]any{}}}}}}}, "spec.config.servers[0].locations[0].path"},
		{"location with two handlers", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "http", "locations": []any{map[string]any{"path": "/", "static": map[string]any{}, "redirect": map[string]any{"url": "https://a.com/"}}}}}}}, "exactly one of static, proxy, redirect or respond"},
		{"redirect to a non-http URL", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "http", "locations": []any{map[string]any{"path": "/", "redirect": map[string]any{"url": "javascript:alert(1)"}}}}}}}, "spec.config.servers[0].locations[0].redirect.url"},
		{"header value with a variable", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "http", "locations": []any{map[string]any{"path": "/", "static": map[string]any{}, "headers": []any{map[string]any{"name": "X-A", "value": "$secret"}}}}}}}}, "spec.config.servers[0].locations[0].headers[0].value"},
		{"bad body size", map[string]any{"config": map[string]any{"clientMaxBodySize": "1 GB"}}, "spec.config.clientMaxBodySize"},
		{"TLS secret name with a slash", map[string]any{"config": map[string]any{"servers": []any{map[string]any{"port": "http", "tls": map[string]any{"secretName": "../x"}}}}}, "spec.config.servers[0].tls.secretName"},
		{"PDB with both fields", map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": 1, "maxUnavailable": 1}}, "set exactly one of minAvailable or maxUnavailable"},
		{"service type", map[string]any{"service": map[string]any{"type": "ExternalName"}}, "spec.service.type"},
		{"configMaps and a volume claim together", map[string]any{"content": map[string]any{"configMaps": []any{map[string]any{"name": "site"}}, "volumeClaimTemplate": map[string]any{"size": "1Gi"}}}, "cannot be combined"},
	})
}

// refusal is a spec the API server must refuse, with what its error says.
type refusal struct {
	name string
	spec map[string]any
	want string
}

// assertRefused creates an NginxOperator of each spec in ns and checks that
// the API server refuses it with its message.
func assertRefused(ctx context.Context, t *testing.T, c client.Client, ns string, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "nginx.operator.dev/v1beta1", "kind": "NginxOperator",
			"metadata": map[string]any{"name": "bad", "namespace": ns},
			"spec":     tc.spec,
		}}
		err := c.Create(ctx, obj)
		if err == nil {
			t.Errorf("%s: accepted, want refused naming %q", tc.name, tc.want)
			_ = c.Delete(ctx, obj)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not contain %q", tc.name, err, tc.want)
		}
	}
}

func TestControllerCreatesChildrenAndReportsMissingReferences(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	web := instance(ns, "web")
	web.Spec.Config.Servers = []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "web-tls"}}}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	// The TLS Secret does not exist: Degraded names it.
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var n v1beta1.NginxOperator
		if c.Get(ctx, client.ObjectKeyFromObject(web), &n) != nil {
			return false
		}
		cond := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == nginx.ReasonSecretNotFound && strings.Contains(cond.Message, `"web-tls"`)
	}) {
		t.Fatal("a missing TLS Secret did not make the instance Degraded with reason SecretNotFound")
	}
	// A proxied Service that does not exist: nginx would refuse to start, so
	// the instance waits, Degraded with the Service's name.
	gw := instance(ns, "gw")
	gw.Spec.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "backend", Port: 80}}}}}
	if err := c.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cond := framework.InstanceCondition(ctx, c, ns, "gw", v1beta1.ConditionDegraded)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == nginx.ReasonServiceNotFound && strings.Contains(cond.Message, `"backend"`)
	}) {
		t.Errorf("a missing proxied Service did not give Degraded/ServiceNotFound: %+v", framework.InstanceCondition(ctx, c, ns, "gw", v1beta1.ConditionDegraded))
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Get(ctx, layout.NamesFor("gw").StatefulSet, metav1.GetOptions{}); err == nil {
		t.Error("a StatefulSet was created although nginx could not resolve its upstream")
	}

	// Another instance in the same namespace is unaffected.
	if err := c.Create(ctx, instance(ns, "api")); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "api") }) {
		t.Fatal("the healthy instance next to a degraded one was not reconciled")
	}

	// Creating the Secret heals the first instance by itself.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "web") }) {
		t.Fatal("the instance did not recover once its TLS Secret appeared")
	}

	// Children exist, owned by the instance, with per-instance selectors.
	names := layout.NamesFor("web")
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}
	if sts.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "web" || len(sts.OwnerReferences) != 1 {
		t.Errorf("StatefulSet selector %v owners %v; want the instance's own selector and one owner", sts.Spec.Selector.MatchLabels, sts.OwnerReferences)
	}
	for _, name := range []string{names.Service, names.HeadlessService} {
		if _, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("Service %s: %v", name, err)
		}
	}
	var got v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &got); err != nil {
		t.Fatal(err)
	}
	cfg, err := cs.CoreV1().Secrets(ns).Get(ctx, names.ConfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("config Secret: %v", err)
	}
	if h := cfg.Annotations[layout.ConfigHashAnnotation]; h != got.Status.ConfigHash || reloader.ConfigHash(cfg.Data["nginx.conf"]) != h {
		t.Errorf("config Secret written for configuration %q holds %q; status says %q", h, reloader.ConfigHash(cfg.Data["nginx.conf"]), got.Status.ConfigHash)
	}
	// The push key the pods' reloaders check pushes with: random, and
	// kept when the configuration changes.
	key := cfg.Data[layout.PushKeyFile]
	if _, err := hex.DecodeString(string(key)); err != nil || len(key) != layout.PushKeyLength {
		t.Fatalf("push key %q, want %d hex digits", key, layout.PushKeyLength)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &got); err != nil {
			return err
		}
		got.Spec.Config.ClientMaxBodySize = "7m"
		return c.Update(ctx, &got)
	}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cfg, err = cs.CoreV1().Secrets(ns).Get(ctx, names.ConfigSecret, metav1.GetOptions{})
		return err == nil && strings.Contains(string(cfg.Data[layout.ConfigFile]), "client_max_body_size 7m")
	}) {
		t.Fatal("the new configuration did not reach the config Secret")
	}
	if again := cfg.Data[layout.PushKeyFile]; string(again) != string(key) {
		t.Errorf("the push key changed with the configuration: %q, then %q", key, again)
	}
}

func TestSteadyStateResyncOfFiftyInstancesMakesNoWrites(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env)
	const n = 50
	for i := range n {
		if err := c.Create(ctx, instance(ns, fmt.Sprintf("web-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	allReconciled := func(ctx context.Context) bool {
		for i := range n {
			if !reconciled(ctx, c, ns, fmt.Sprintf("web-%02d", i)) {
				return false
			}
		}
		return true
	}

	// First operator: creates everything.
	first := &inprocess.RequestCounter{}
	stopFirst := inprocess.StartWatching(t, env, first, ns)
	if !framework.WaitFor(ctx, 120*time.Second, allReconciled) {
		t.Fatal("the 50 instances were not all reconciled")
	}
	first.WaitWritesSettled(t, 2*time.Second, time.Minute)
	stopFirst()
	t.Logf("converging %d instances took %d writes", n, len(first.Writes()))

	// A new operator process resyncs every instance from scratch: it reads
	// everything and must write nothing.
	second := &inprocess.RequestCounter{}
	stopSecond := inprocess.StartWatching(t, env, second, ns)
	defer stopSecond()
	before := reconcileCount(t)
	if !framework.WaitFor(ctx, 60*time.Second, func(context.Context) bool { return reconcileCount(t)-before >= n }) {
		t.Fatalf("the second operator reconciled %v instances, want %d", reconcileCount(t)-before, n)
	}
	// A window in which nothing may happen: a write after the resync's
	// reconciles would still be one too many.
	time.Sleep(2 * time.Second)
	if writes := second.Writes(); len(writes) != 0 {
		t.Errorf("steady-state resync of %d unchanged instances made %d writes, want 0:\n%s", n, len(writes), strings.Join(writes, "\n"))
	}
}

// condition returns the instance's condition of type typ, or nil.

func TestInvalidConfigPausedAndUnownedReplicas(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	// A configuration the schema accepts but nginx would refuse: Degraded, InvalidConfig.
	dup := instance(ns, "dup")
	static := &v1beta1.StaticLocation{}
	dup.Spec.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/a", Static: static}, {Path: "/a", Static: static}}}}
	// Replicas unset: an autoscaler may own them.
	free := instance(ns, "free")
	free.Spec.Replicas = nil
	for _, n := range []*v1beta1.NginxOperator{dup, free} {
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cond := framework.InstanceCondition(ctx, c, ns, "dup", v1beta1.ConditionDegraded)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == nginx.ReasonInvalidConfig && strings.Contains(cond.Message, "appears twice")
	}) {
		t.Errorf("duplicate locations did not give Degraded/InvalidConfig: %+v", framework.InstanceCondition(ctx, c, ns, "dup", v1beta1.ConditionDegraded))
	}

	// Someone else (an HPA) scales the StatefulSet of the instance without replicas.
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "free") }) {
		t.Fatal("free was not reconciled")
	}
	stsName := layout.NamesFor("free").StatefulSet
	scale, err := cs.AppsV1().StatefulSets(ns).GetScale(ctx, stsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	if _, err := cs.AppsV1().StatefulSets(ns).UpdateScale(ctx, stsName, scale, metav1.UpdateOptions{FieldManager: "hpa"}); err != nil {
		t.Fatal(err)
	}
	// A pod template change makes the operator apply the StatefulSet again.
	// The operator may be writing the status (the scale changed the desired
	// replicas it reports): retry the read-modify-write on conflict.
	var n v1beta1.NginxOperator
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "free"}, &n); err != nil {
			return err
		}
		n.Spec.Pod.Labels = map[string]string{"tier": "edge"}
		return c.Update(ctx, &n)
	}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var sts appsv1.StatefulSet
		return reconciled(ctx, c, ns, "free") && c.Get(ctx, client.ObjectKey{Namespace: ns, Name: stsName}, &sts) == nil &&
			sts.Spec.Template.Labels["tier"] == "edge"
	}) {
		t.Fatal("the pod template change was not applied")
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: stsName}, &sts); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(sts.Spec.Replicas, 0); got != 3 {
		t.Errorf("replicas after the operator re-applied = %d, want the autoscaler's 3 left alone", got)
	}

	// Paused: the operator stops changing children and says so, and does
	// not claim the paused change rolled out.
	var config corev1.Secret
	configKey := client.ObjectKey{Namespace: ns, Name: layout.NamesFor("free").ConfigSecret}
	if err := c.Get(ctx, configKey, &config); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "free"}, &n); err != nil {
			return err
		}
		n.Spec.Paused = true
		n.Spec.Config.ClientMaxBodySize = "3m"
		return c.Update(ctx, &n)
	}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cond := framework.InstanceCondition(ctx, c, ns, "free", v1beta1.ConditionReconciled)
		return cond != nil && cond.Reason == nginx.ReasonPaused && cond.ObservedGeneration == n.Generation
	}) {
		t.Fatal("paused was not reported in the Reconciled condition")
	}
	if cond := framework.InstanceCondition(ctx, c, ns, "free", v1beta1.ConditionProgressing); cond == nil ||
		cond.Status != metav1.ConditionUnknown || cond.Reason != nginx.ReasonPaused || cond.ObservedGeneration != n.Generation {
		t.Errorf("Progressing while paused = %+v, want Unknown, Paused, of generation %d", cond, n.Generation)
	}
	rv := config.ResourceVersion
	if err := c.Get(ctx, configKey, &config); err != nil {
		t.Fatal(err)
	}
	if config.ResourceVersion != rv {
		t.Error("a paused instance's configuration was changed")
	}
}

// The Service carries the traffic fields of spec.service, and a basic auth
// Secret is waited for, key included, then mounted into the pods.
func TestServiceTrafficFieldsAndBasicAuthSecretsReachTheCluster(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	edge := instance(ns, "edge")
	edge.Spec.Service = v1beta1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
		LoadBalancerSourceRanges: []string{"203.0.113.0/24"}, LoadBalancerClass: "example.com/lb",
		SessionAffinity: corev1.ServiceAffinityClientIP,
	}
	edge.Spec.Config.Servers = []v1beta1.Server{{Port: "http", BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users"}}}
	users := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "users", Namespace: ns}, Data: map[string][]byte{"htpasswd": []byte("a:{SHA}x\n")}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, users, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, edge); err != nil {
		t.Fatal(err)
	}
	// The Secret lacks the key the spec names (by default "auth"): nginx
	// would answer every request with 500, so the instance says so instead.
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cond := framework.InstanceCondition(ctx, c, ns, "edge", v1beta1.ConditionDegraded)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == nginx.ReasonSecretNotFound && strings.Contains(cond.Message, `has no key "auth"`)
	}) {
		t.Fatalf("a basic auth Secret without its key did not give Degraded/SecretNotFound: %+v", framework.InstanceCondition(ctx, c, ns, "edge", v1beta1.ConditionDegraded))
	}
	users.Data["auth"] = users.Data["htpasswd"]
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, users, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "edge") }) {
		t.Fatal("the instance did not recover once its Secret had the key")
	}

	svc, err := cs.CoreV1().Services(ns).Get(ctx, layout.NamesFor("edge").Service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := svc.Spec
	if s.Type != corev1.ServiceTypeLoadBalancer || s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
		fmt.Sprint(s.LoadBalancerSourceRanges) != "[203.0.113.0/24]" || ptr.Deref(s.LoadBalancerClass, "") != "example.com/lb" ||
		s.SessionAffinity != corev1.ServiceAffinityClientIP || s.HealthCheckNodePort == 0 {
		t.Errorf("Service spec %+v; want the spec.service fields (and the health check port Kubernetes adds for Local)", s)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("edge").StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}
	// The htpasswd file is the files Secret's, which the pods mount.
	var files corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("edge").FilesSecret(0)}, &files); err != nil || string(files.Data["auth_users_auth"]) != "a:{SHA}x\n" {
		t.Errorf("the basic auth Secret's file is not in the files Secret (%v): %v", err, files.Data)
	}
	mounted := false
	for _, m := range sts.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || m.MountPath == layout.FilesMountPath && m.ReadOnly
	}
	if !mounted {
		t.Errorf("the files are not mounted read-only at %s: %+v", layout.FilesMountPath, sts.Spec.Template.Spec.Containers[0].VolumeMounts)
	}
}

// The objects an instance names reach it through their watches, with
// nothing of the instance changing and nothing polled: a proxied Service's
// endpoints become its upstream's servers (and a location without any
// answers 503); a Service or a content ConfigMap deleted degrades the
// instance, and created again heals it.
func TestReferencedObjectsReachTheInstanceByTheirWatch(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	backend := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "backend", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromString("web")}}}}
	created, err := cs.CoreV1().Services(ns).Create(ctx, backend, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The Service's own address backs the pods up (render's clusterBackups).
	backup := " server " + created.Spec.ClusterIP + ":80 backup max_fails=0;"
	// The test cluster runs no EndpointSlice controller: the slice is the
	// test's, as a Service without a selector has.
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "backend-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "backend"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("web"), Port: ptr.To[int32](8080)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	site := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: ns}, Data: map[string]string{"index.html": "hi"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, site, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gw := instance(ns, "gw")
	gw.Spec.Content = v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: "site"}}}
	gw.Spec.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "backend", Port: 80}}}}}
	if err := c.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}
	config := func(ctx context.Context) string {
		var cfg corev1.Secret
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("gw").ConfigSecret}, &cfg) != nil {
			return ""
		}
		return strings.Join(strings.Fields(string(cfg.Data[layout.ConfigFile])), " ")
	}
	// nginx.conf and the status say the same.
	upstreamIs := func(want string) bool {
		return framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
			var n v1beta1.NginxOperator
			return strings.Contains(config(ctx), "upstream backend_s0_l0 { "+want+backup+" keepalive") &&
				c.Get(ctx, client.ObjectKeyFromObject(gw), &n) == nil && len(n.Status.Upstreams) == 1 &&
				n.Status.Upstreams[0] == v1beta1.UpstreamStatus{Service: "backend", Port: 80, Endpoints: int32(strings.Count(want, "server "))}
		})
	}
	if !upstreamIs("server 10.244.1.1:8080 max_fails=0;") {
		t.Fatalf("nginx.conf is %q, want the endpoint 10.244.1.1:8080 as the upstream's server", config(ctx))
	}

	// A second pod becomes ready; the first terminates.
	slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.244.1.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	if slice, err := cs.DiscoveryV1().EndpointSlices(ns).Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	} else if !upstreamIs("server 10.244.1.1:8080 max_fails=0; server 10.244.1.2:8080 max_fails=0;") {
		t.Errorf("after a second endpoint nginx.conf is %q", config(ctx))
	} else {
		slice.Endpoints[0].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}
		if _, err := cs.DiscoveryV1().EndpointSlices(ns).Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !upstreamIs("server 10.244.1.2:8080 max_fails=0;") {
			t.Errorf("after the first endpoint began terminating nginx.conf is %q", config(ctx))
		}
	}
	if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, "backend-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var n v1beta1.NginxOperator
		return strings.Contains(config(ctx), "location / { return 503;") && !strings.Contains(config(ctx), "upstream") &&
			c.Get(ctx, client.ObjectKeyFromObject(gw), &n) == nil && len(n.Status.Upstreams) == 1 && n.Status.Upstreams[0].Endpoints == 0
	}) {
		t.Errorf("without endpoints nginx.conf is %q, want the location to answer 503", config(ctx))
	}

	if err := cs.CoreV1().Services(ns).Delete(ctx, "backend", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, degradedWith(c, ns, "gw", nginx.ReasonServiceNotFound, `"backend"`)) {
		t.Errorf("a deleted proxied Service: Degraded is %+v", framework.InstanceCondition(ctx, c, ns, "gw", v1beta1.ConditionDegraded))
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, backend, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "gw") }) {
		t.Errorf("the Service came back and the instance did not recover: %+v", framework.InstanceCondition(ctx, c, ns, "gw", v1beta1.ConditionDegraded))
	}

	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "site", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, degradedWith(c, ns, "gw", nginx.ReasonConfigMapNotFound, `"site"`)) {
		t.Errorf("a deleted content ConfigMap: Degraded is %+v", framework.InstanceCondition(ctx, c, ns, "gw", v1beta1.ConditionDegraded))
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, site, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "gw") }) {
		t.Errorf("the ConfigMap came back and the instance did not recover: %+v", framework.InstanceCondition(ctx, c, ns, "gw", v1beta1.ConditionDegraded))
	}
}
