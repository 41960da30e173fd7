// Package upgrade_test upgrades a cluster from the previous release to this
// tree the way Documentation/operations.md tells users to, and rolls it back.
package upgrade_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/backup"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// operatorUser is who both operators run as: the bundle's ServiceAccount,
// with the bundle's RBAC. The apiserver audits its requests.
var operatorUser = framework.ServiceAccountUser(operatorNamespace, "nginx-operator")

var env = framework.NewEnv(framework.Options{Nodes: 2, AuditUsers: []string{operatorUser}})

// migrationPermissions are what the storage migration needs and the e2e
// suite, whose cluster never stored an older version, cannot exercise;
// test/e2e's least-privilege check leaves them to this test.
var migrationPermissions = []framework.Permission{
	{Group: "nginx.operator.dev", Resource: "nginxoperators", Verb: "update"},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions/status", Verb: "patch"},
}

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

const (
	operatorNamespace = "nginx-operator"
	crdName           = "nginxoperators.nginx.operator.dev"
	group             = "nginx.operator.dev"
	// legacyNamespace holds an object from before v1beta1 existed. Neither
	// operator reconciles it (--deny-namespaces), so nothing but the storage
	// migration ever rewrites it.
	legacyNamespace = "legacy"
)

// The documented upgrade, from the previous release with the examples
// running to this tree, and the documented rollback:
//   - every instance rolls its pods at most once: the releases differ in
//     the pod template (this one runs nginx under the nginx-reloader, see
//     PodTemplateAnnotation) or not at all, and a configuration the other
//     release renders differently needs no roll of its own;
//   - every NginxOperator stays readable as v1alpha1 and as v1beta1;
//   - objects stored as v1alpha1 by the book's operator are rewritten as
//     v1beta1, and the CRD records v1beta1 as its only stored version.
func TestUpgradeFromThePreviousReleaseAndBackRollsNoPod(t *testing.T) {
	ctx := context.Background()
	cluster := env.Cluster(t)
	prev := previousRelease(t)
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	admin := inprocess.Client(t, cluster.Config)
	port, err := tools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	webhookURL := fmt.Sprintf("https://127.0.0.1:%d/convert", port)

	// A cluster that ran the book's operator: v1alpha1 is the only version,
	// and the book's sample is stored as v1alpha1.
	book := bookEra(ctx, t, cluster, prev)

	// The previous release: its bundle, its operator and its examples.
	applyBundle(ctx, t, cluster, filepath.Join(prev.Src, "bundle.yaml"), webhookURL, "--force-conflicts")
	if err := framework.ApplyObjects(ctx, cluster.Config, "", decode(t, []byte(framework.ServiceMonitorCRD))...); err != nil {
		t.Fatal(err)
	}
	kubeconfig := cluster.ServiceAccountKubeconfig(ctx, t, operatorNamespace, "nginx-operator")
	args := []string{"--conversion-webhook=true", "--namespace=" + operatorNamespace, "--deny-namespaces=" + legacyNamespace,
		fmt.Sprintf("--webhook-port=%d", port), "--webhook-url=" + webhookURL, "--metrics-secure=false"}
	op := framework.StartOperatorBinary(t, prev.Binary, kubeconfig, args...)
	examples := applyExamples(ctx, t, cluster, admin, prev.Src)
	framework.WaitReady(ctx, t, admin, 3*time.Minute, examples...)
	if v, err := cluster.StoredAPIVersion(ctx, group, "nginxoperators", legacyNamespace, book); err != nil || v != group+"/v1alpha1" {
		t.Fatalf("before the upgrade, %s/%s is stored as %q (%v), want %s/v1alpha1", legacyNamespace, book, v, err, group)
	}
	before := snapshot(ctx, t, admin, examples)
	portsBefore, _ := clientServices(ctx, t, admin)
	readableInBothVersions(ctx, t, cluster)

	// Upgrade, as Documentation/operations.md says: the new bundle with
	// server-side apply, then the new operator.
	op.Stop()
	applyBundle(ctx, t, cluster, filepath.Join(root, "bundle.yaml"), webhookURL)
	op = framework.StartOperator(t, kubeconfig, args...)
	waitReconciledAll(ctx, t, op, admin)
	waitFor(ctx, t, "the CRD's status.storedVersions to be [v1beta1]", func(ctx context.Context) bool {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if admin.Get(ctx, client.ObjectKey{Name: crdName}, crd) != nil {
			return false
		}
		stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		return slices.Equal(stored, []string{"v1beta1"})
	})
	used, err := framework.UsedPermissions(cluster.AuditLog(), operatorUser)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range migrationPermissions {
		if !used[p] {
			t.Errorf("the storage migration never used %s, which the bundle grants it for that", p)
		}
	}
	for _, key := range nginxOperatorKeys(ctx, t, admin) {
		if v, err := cluster.StoredAPIVersion(ctx, group, "nginxoperators", key.Namespace, key.Name); err != nil || v != group+"/v1beta1" {
			t.Errorf("after the upgrade, %s is stored as %q (%v), want %s/v1beta1", key, v, err, group)
		}
	}
	// A window in which nothing may happen: anything the upgrade was going
	// to roll would have begun within it.
	time.Sleep(3 * time.Second)
	framework.WaitReady(ctx, t, admin, 3*time.Minute, examples...)
	upgraded := snapshot(ctx, t, admin, examples)
	for _, p := range rolledAtMostOnce(before, upgraded) {
		t.Errorf("the upgrade: %s", p)
	}
	// The instances' clients keep their ports: the Services the previous
	// release made stay on the containerPorts, marked so (rule container).
	portsUpgraded, rules := clientServices(ctx, t, admin)
	if diff := cmp.Diff(portsBefore, portsUpgraded); diff != "" {
		t.Errorf("the upgrade moved the ports of the instances' Services (-before +after):\n%s", diff)
	}
	for key, rule := range rules {
		if rule != string(serviceport.Container) {
			t.Errorf("after the upgrade, Service %s has %s=%q, want %q", key, layout.ServicePortsAnnotation, rule, serviceport.Container)
		}
	}
	readableInBothVersions(ctx, t, cluster)

	// Roll back: the previous bundle and the previous operator again.
	op.Stop()
	applyBundle(ctx, t, cluster, filepath.Join(prev.Src, "bundle.yaml"), webhookURL)
	op = framework.StartOperatorBinary(t, prev.Binary, kubeconfig, args...)
	waitReconciledAll(ctx, t, op, admin)
	// The same window for the rollback: at most one roll.
	time.Sleep(3 * time.Second)
	framework.WaitReady(ctx, t, admin, 3*time.Minute, examples...)
	for _, p := range rolledAtMostOnce(upgraded, snapshot(ctx, t, admin, examples)) {
		t.Errorf("the rollback: %s", p)
	}
	if ports, _ := clientServices(ctx, t, admin); !maps.Equal(portsBefore, ports) {
		t.Errorf("after the rollback, the instances' Service ports are %v, want %v", ports, portsBefore)
	}
	readableInBothVersions(ctx, t, cluster)
}

// bookEra installs the book's CRD (the previous release's NginxOperator CRD
// cut down to v1alpha1, stored as such, without conversion) and creates the
// book's sample in the legacy namespace. It returns the sample's name.
func bookEra(ctx context.Context, t *testing.T, cluster *framework.Cluster, prev release) string {
	t.Helper()
	var crd *unstructured.Unstructured
	for _, o := range decodeFile(t, filepath.Join(prev.Src, "bundle.yaml")) {
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == crdName {
			crd = o
		}
	}
	if crd == nil {
		t.Fatalf("the previous bundle has no CRD %s", crdName)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var book []any
	for _, v := range versions {
		if v.(map[string]any)["name"] == "v1alpha1" {
			v.(map[string]any)["storage"] = true
			delete(v.(map[string]any), "deprecated")
			delete(v.(map[string]any), "deprecationWarning")
			book = append(book, v)
		}
	}
	if err := unstructured.SetNestedSlice(crd.Object, book, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(crd.Object, "spec", "conversion")
	if err := framework.ApplyObjects(ctx, cluster.Config, "", crd); err != nil {
		t.Fatal(err)
	}
	if err := framework.WaitEstablished(ctx, cluster.Config, crdName); err != nil {
		t.Fatal(err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": legacyNamespace}}}
	sample := decodeFile(t, filepath.Join(prev.Src, "example", "v1alpha1-book.yaml"))
	for _, o := range sample {
		o.SetNamespace(legacyNamespace)
	}
	if err := framework.ApplyObjects(ctx, cluster.Config, "", append([]*unstructured.Unstructured{ns}, sample...)...); err != nil {
		t.Fatal(err)
	}
	return sample[0].GetName()
}

// applyBundle applies bundle with `kubectl apply --server-side`, changed only
// where a cluster without real pods needs it: the operator runs on this host,
// not as the bundle's Deployment, so the CRD's conversion webhook is its URL
// instead of the Service.
func applyBundle(ctx context.Context, t *testing.T, cluster *framework.Cluster, bundle, webhookURL string, extra ...string) {
	t.Helper()
	var docs []string
	for _, o := range decodeFile(t, bundle) {
		if o.GetKind() == "Deployment" {
			continue
		}
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == crdName {
			if err := unstructured.SetNestedMap(o.Object, map[string]any{"url": webhookURL}, "spec", "conversion", "webhook", "clientConfig"); err != nil {
				t.Fatal(err)
			}
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	args := append([]string{"apply", "--server-side", "-f", "-"}, extra...)
	if out, err := cluster.Kubectl(ctx, strings.Join(docs, "---\n"), args...); err != nil {
		t.Fatalf("kubectl %s with %s: %v\n%s", strings.Join(args, " "), bundle, err, out)
	}
}

// applyExamples applies the release's example/ and the TLS Secrets they
// leave to the user, and returns the applied objects.
func applyExamples(ctx context.Context, t *testing.T, cluster *framework.Cluster, admin client.Client, src string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(src, "example", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		objs = append(objs, decodeFile(t, f)...)
	}
	// v1alpha1 objects go through the conversion webhook, which serves once
	// the operator is up.
	var lastErr error
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		err := framework.ApplyObjects(ctx, cluster.Config, "", objs...)
		if err != nil && ctx.Err() == nil {
			lastErr = err
		}
		return err == nil
	}) {
		t.Fatalf("applying the examples of %s: %v", src, lastErr)
	}
	for ns, name := range framework.ExampleTLSSecrets {
		_, certPEM, keyPEM := framework.ServingCert(t, name+"."+ns+".example")
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}
		if err := admin.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// waitReconciledAll waits until op has reconciled every NginxOperator,
// NginxMonitor and NginxBackup of the watched namespaces at least once and
// its work queues are empty.
func waitReconciledAll(ctx context.Context, t *testing.T, op *framework.Operator, c client.Client) {
	t.Helper()
	want := map[string]int{
		nginx.ControllerName:   len(objectsOf(ctx, t, c, "NginxOperatorList")),
		monitor.ControllerName: len(objectsOf(ctx, t, c, "NginxMonitorList")),
		backup.ControllerName:  len(objectsOf(ctx, t, c, "NginxBackupList")),
	}
	waitFor(ctx, t, fmt.Sprintf("the operator to reconcile every object once (%v)", want), func(ctx context.Context) bool {
		for controller, n := range want {
			done, err := op.Metric(ctx, "controller_runtime_reconcile_total", map[string]string{"controller": controller})
			if err != nil || done < float64(n) {
				return false
			}
		}
		depth, err := op.Metric(ctx, "workqueue_depth", nil)
		return err == nil && depth == 0
	})
}

// objectsOf lists the objects of listKind outside the legacy namespace.
func objectsOf(ctx context.Context, t *testing.T, c client.Client, listKind string) []unstructured.Unstructured {
	t.Helper()
	return slices.DeleteFunc(list(ctx, t, c, listKind), func(o unstructured.Unstructured) bool { return o.GetNamespace() == legacyNamespace })
}

func nginxOperatorKeys(ctx context.Context, t *testing.T, c client.Client) []client.ObjectKey {
	t.Helper()
	var keys []client.ObjectKey
	for _, o := range list(ctx, t, c, "NginxOperatorList") {
		keys = append(keys, client.ObjectKeyFromObject(&o))
	}
	return keys
}

// list lists every object of listKind, a kind of ours, as v1beta1.
func list(ctx context.Context, t *testing.T, c client.Client, listKind string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(group + "/v1beta1")
	l.SetKind(listKind)
	if err := c.List(ctx, l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// clientServices reads the client Service of every NginxOperator that has
// one: the ports of its spec.ports ("name=port ..."; the metrics ports
// differ between releases, this one adding the reloader's) and its
// layout.ServicePortsAnnotation, by namespace/name of the Service.
func clientServices(ctx context.Context, t *testing.T, c client.Client) (ports, rules map[string]string) {
	t.Helper()
	ports, rules = map[string]string{}, map[string]string{}
	for _, key := range nginxOperatorKeys(ctx, t, c) {
		var svc corev1.Service
		name := client.ObjectKey{Namespace: key.Namespace, Name: layout.NamesFor(key.Name).Service}
		if err := c.Get(ctx, name, &svc); err != nil {
			if apierrors.IsNotFound(err) {
				continue // the legacy namespace's, which no operator reconciles
			}
			t.Fatal(err)
		}
		var list []string
		for _, p := range svc.Spec.Ports {
			if p.Name != layout.MetricsPortName && p.Name != layout.ReloaderPortName {
				list = append(list, fmt.Sprintf("%s=%d", p.Name, p.Port))
			}
		}
		ports[name.String()] = strings.Join(list, " ")
		rules[name.String()] = svc.Annotations[layout.ServicePortsAnnotation]
	}
	if len(ports) == 0 {
		t.Fatal("no instance has a Service: nothing to compare")
	}
	return ports, rules
}

// workload is what the examples run: their StatefulSets and pods.
type workload struct {
	sets map[string]statefulSetState // by namespace/name
	pods map[string]string           // namespace/name: UID
}

type statefulSetState struct {
	UID        string
	Generation int64
	// Template is the pod template as YAML.
	Template string
}

// snapshot records the examples' workload once every StatefulSet has rolled
// out its current template.
func snapshot(ctx context.Context, t *testing.T, c client.Client, examples []*unstructured.Unstructured) workload {
	t.Helper()
	namespaces := map[string]bool{}
	for _, o := range examples {
		if o.GetNamespace() != "" {
			namespaces[o.GetNamespace()] = true
		}
	}
	var w workload
	var rolling []string
	if !framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) bool {
		w, rolling = workload{sets: map[string]statefulSetState{}, pods: map[string]string{}}, nil
		for ns := range namespaces {
			var sets appsv1.StatefulSetList
			if err := c.List(ctx, &sets, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, s := range sets.Items {
				key := ns + "/" + s.Name
				st := s.Status
				if st.ObservedGeneration != s.Generation || st.CurrentRevision != st.UpdateRevision || st.UpdatedReplicas != st.Replicas {
					rolling = append(rolling, key)
				}
				w.sets[key] = statefulSetState{UID: string(s.UID), Generation: s.Generation, Template: templateYAML(t, s.Spec.Template)}
			}
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, p := range pods.Items {
				w.pods[ns+"/"+p.Name] = string(p.UID)
			}
		}
		return len(rolling) == 0
	}) {
		t.Fatalf("StatefulSets still rolling after 3 minutes: %v", rolling)
	}
	if len(w.sets) == 0 || len(w.pods) == 0 {
		t.Fatal("the examples run no StatefulSet and no pod: nothing to compare")
	}
	return w
}

func templateYAML(t *testing.T, tmpl corev1.PodTemplateSpec) string {
	t.Helper()
	out, err := yaml.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// rolledAtMostOnce compares two workloads: a StatefulSet whose pod template
// is the same kept its generation and pods; one whose template changed
// rolled once, not more.
func rolledAtMostOnce(before, after workload) []string {
	var problems []string
	if diff := cmp.Diff(slices.Sorted(maps.Keys(before.sets)), slices.Sorted(maps.Keys(after.sets))); diff != "" {
		problems = append(problems, "the StatefulSets changed (-before +after):\n"+diff)
	}
	podsOf := func(w workload, set string) map[string]string {
		out := map[string]string{}
		for name, uid := range w.pods {
			if i := strings.LastIndex(name, "-"); i > 0 && name[:i] == set {
				out[name] = uid
			}
		}
		return out
	}
	for key, b := range before.sets {
		a, ok := after.sets[key]
		if !ok {
			continue
		}
		switch {
		case a.UID != b.UID:
			problems = append(problems, key+" was replaced")
		case a.Template == b.Template:
			if a.Generation != b.Generation {
				problems = append(problems, fmt.Sprintf("%s went from generation %d to %d with the same pod template", key, b.Generation, a.Generation))
			}
			if diff := cmp.Diff(podsOf(before, key), podsOf(after, key)); diff != "" {
				problems = append(problems, fmt.Sprintf("%s's pods were replaced with the same pod template (-before +after):\n%s", key, diff))
			}
		case a.Generation != b.Generation+1:
			problems = append(problems, fmt.Sprintf("%s went from generation %d to %d: it rolled more than once", key, b.Generation, a.Generation))
		}
	}
	return problems
}

// readableInBothVersions lists every NginxOperator as v1alpha1 (through the
// conversion webhook) and as v1beta1, and expects the same objects.
func readableInBothVersions(ctx context.Context, t *testing.T, cluster *framework.Cluster) {
	t.Helper()
	names := map[string][]string{}
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		out, err := cluster.Kubectl(ctx, "", "get", "nginxoperators."+version+"."+group, "-A", "-o", "name")
		if err != nil {
			t.Fatalf("reading NginxOperators as %s: %v\n%s", version, err, out)
		}
		for _, line := range strings.Split(out, "\n") {
			// kubectl also prints the apiserver's deprecation warning for v1alpha1.
			if strings.HasPrefix(line, "nginxoperator.") {
				names[version] = append(names[version], line)
			}
		}
	}
	if len(names["v1beta1"]) == 0 {
		t.Fatal("no NginxOperator to read")
	}
	if diff := cmp.Diff(names["v1beta1"], names["v1alpha1"]); diff != "" {
		t.Errorf("NginxOperators as v1alpha1 differ from v1beta1 (-v1beta1 +v1alpha1):\n%s", diff)
	}
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func(context.Context) bool) {
	t.Helper()
	if !framework.WaitFor(ctx, 2*time.Minute, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, data)
}

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := framework.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
