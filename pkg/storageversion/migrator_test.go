package storageversion_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/storageversion"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

func TestNeedsMigration(t *testing.T) {
	versions := func(storage string, names ...string) []apiextensionsv1.CustomResourceDefinitionVersion {
		var vs []apiextensionsv1.CustomResourceDefinitionVersion
		for _, n := range names {
			vs = append(vs, apiextensionsv1.CustomResourceDefinitionVersion{Name: n, Served: true, Storage: n == storage})
		}
		return vs
	}
	for _, tc := range []struct {
		name     string
		versions []apiextensionsv1.CustomResourceDefinitionVersion
		stored   []string
		want     bool
	}{
		{"only the storage version stored", versions("v1beta1", "v1alpha1", "v1beta1"), []string{"v1beta1"}, false},
		{"an older version still stored", versions("v1beta1", "v1alpha1", "v1beta1"), []string{"v1alpha1", "v1beta1"}, true},
		{"storage version changed back", versions("v1alpha1", "v1alpha1", "v1beta1"), []string{"v1beta1"}, true},
		{"nothing recorded yet", versions("v1beta1", "v1beta1"), nil, true},
		{"no storage version", versions("", "v1beta1"), []string{"v1beta1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{
				Spec:   apiextensionsv1.CustomResourceDefinitionSpec{Versions: tc.versions},
				Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: tc.stored},
			}
			if got := storageversion.NeedsMigration(crd); got != tc.want {
				t.Errorf("NeedsMigration = %v, want %v", got, tc.want)
			}
		})
	}
}

// A CRD whose storage version moved from v1 to v2: after Migrate, etcd holds
// every object as v2 and the CRD records only v2, and a second pass writes
// nothing.
func TestMigrateRewritesEveryObjectInTheStorageVersion(t *testing.T) {
	ctx := context.Background()
	cluster := env.Cluster(t)
	ns, _ := env.Namespace(t)
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	const group, plural = "migration.test.nginx.operator.dev", "widgets"
	crd := widgetCRD(group, plural)
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), crd) })
	waitEstablished(t, c, crd.Name)
	// Established is set before the apiserver's discovery lists the new
	// group, which the client needs to map the kind: wait for that too.
	waitFor(t, "the Widget kind in discovery", func() bool {
		_, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: "Widget"}, "v1")
		return err == nil
	})

	const before = 5 // more than one page would need hundreds; paging is the client's
	for i := range before {
		createWidget(t, c, ns, "v1", fmt.Sprintf("old-%d", i))
	}
	// The storage version moves to v2, as an operator upgrade would move it.
	if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = false, true
	if err := c.Update(ctx, crd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "storedVersions [v1 v2]", func() bool {
		_ = c.Get(ctx, client.ObjectKeyFromObject(crd), crd)
		return cmp.Equal(crd.Status.StoredVersions, []string{"v1", "v2"})
	})
	// The CRD's status changes before the apiserver's handler for it does:
	// until then, a new object is still stored as v1.
	waitFor(t, "a new object to be stored as v2", func() bool {
		createWidget(t, c, ns, "v2", "new")
		if v, err := cluster.StoredAPIVersion(ctx, group, plural, ns, "new"); err == nil && v == group+"/v2" {
			return true
		}
		_ = c.Delete(ctx, widget(ns, "v2", "new"))
		waitFor(t, "the v1 probe to be deleted", func() bool {
			_, err := cluster.StoredAPIVersion(ctx, group, plural, ns, "new")
			return err != nil
		})
		return false
	})

	stored := func() map[string]string {
		got := map[string]string{}
		for _, name := range append(widgetNames(before), "new") {
			v, err := cluster.StoredAPIVersion(ctx, group, plural, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			got[name] = v
		}
		return got
	}
	want := map[string]string{"new": group + "/v2"}
	for _, n := range widgetNames(before) {
		want[n] = group + "/v1"
	}
	if diff := cmp.Diff(want, stored()); diff != "" {
		t.Fatalf("before the migration, etcd holds (-want +got):\n%s", diff)
	}

	m := &storageversion.Migrator{Client: c, CRDName: crd.Name, Log: testr.New(t)}
	// A pass fails when the apiserver's own CRD controllers changed the CRD
	// meanwhile (the patch carries a resourceVersion); Start retries it.
	waitFor(t, "a migration pass to succeed", func() bool { return m.Migrate(ctx) == nil })
	for n := range want {
		want[n] = group + "/v2"
	}
	if diff := cmp.Diff(want, stored()); diff != "" {
		t.Errorf("after the migration, etcd holds (-want +got):\n%s", diff)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v2"}, crd.Status.StoredVersions); diff != "" {
		t.Errorf("status.storedVersions (-want +got):\n%s", diff)
	}

	// Steady state: nothing to migrate, so not one object changes.
	versions := resourceVersions(t, c, ns)
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(versions, resourceVersions(t, c, ns)); diff != "" {
		t.Errorf("a second pass rewrote objects (-before +after):\n%s", diff)
	}
}

func widgetCRD(group, plural string) *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Schema: schema},
			},
		},
	}
}

func widget(ns, version, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "migration.test.nginx.operator.dev/" + version,
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"size": int64(len(name))},
	}}
}

func createWidget(t *testing.T, c client.Client, ns, version, name string) {
	t.Helper()
	if err := c.Create(context.Background(), widget(ns, version, name)); err != nil {
		t.Fatal(err)
	}
}

func widgetNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("old-%d", i)
	}
	return names
}

func resourceVersions(t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("migration.test.nginx.operator.dev/v2")
	list.SetKind("WidgetList")
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, w := range list.Items {
		out[w.GetName()] = w.GetResourceVersion()
	}
	return out
}

func waitEstablished(t *testing.T, c client.Client, name string) {
	t.Helper()
	waitFor(t, "CRD "+name+" established", func() bool {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if c.Get(context.Background(), client.ObjectKey{Name: name}, crd) != nil {
			return false
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !framework.WaitFor(context.Background(), 30*time.Second, func(context.Context) bool { return cond() }) {
		t.Fatalf("timed out waiting for %s", what)
	}
}
