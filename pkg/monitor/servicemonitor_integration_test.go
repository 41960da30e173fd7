//go:build !unit

package monitor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// serveServiceMonitorAPI installs the test framework's stand-in
// ServiceMonitor CRD until the test ends.
func serveServiceMonitorAPI(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	objs, err := framework.DecodeYAML([]byte(framework.ServiceMonitorCRD))
	if err != nil {
		t.Fatal(err)
	}
	if err := framework.ApplyObjects(ctx, env.Cluster(t).Config, "", objs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), objs[0]); err != nil {
			t.Errorf("deleting the ServiceMonitor CRD: %v", err)
		}
		framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) bool {
			return c.Get(ctx, client.ObjectKeyFromObject(objs[0]), objs[0].DeepCopy()) != nil
		})
	})
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(monitor.ServiceMonitorGVK.GroupVersion().WithKind("ServiceMonitorList"))
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return c.List(ctx, list) == nil }) {
		t.Fatal("the ServiceMonitor API is not served")
	}
}

// TestServiceMonitorIsAppliedAsSetAndNotRewrittenWhenNothingChanged: a
// ServiceMonitor with credentials and TLS carries exactly the fields the
// monitor sets, a reconcile that changes nothing for it (an unrelated
// instance label) sends no request about it, the monitor or its Secret, and
// turning it off deletes only a ServiceMonitor the monitor controls.
//
// Not parallel: it serves the monitoring.coreos.com API for its duration.
func TestServiceMonitorIsAppliedAsSetAndNotRewrittenWhenNothingChanged(t *testing.T) {
	ctx, ns, _, c := inprocess.Setup(t, env)
	serveServiceMonitorAPI(t, c)
	counter := &inprocess.RequestCounter{}
	inprocess.Start(t, env.Cluster(t).Config, inprocess.Options(ns), counter)

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scrape-auth"},
		StringData: map[string]string{"username": "prometheus", "password": "s3cr3t", "ca.crt": "ca"},
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, instance(ns, "web", map[string]string{"team": "a"}, true)); err != nil {
		t.Fatal(err)
	}
	ref := func(key string) corev1.SecretKeySelector {
		return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "scrape-auth"}, Key: key}
	}
	ca := ref("ca.crt")
	m := nginxMonitor(ns, "secure", v1beta1.NginxMonitorSpec{
		Endpoint: v1beta1.Endpoint{
			Scheme: "https", SampleLimit: 1000,
			BasicAuth: &v1beta1.BasicAuth{Username: ref("username"), Password: ref("password")},
			TLSConfig: &v1beta1.TLSConfig{CA: &ca, ServerName: "web." + ns + ".svc"},
		},
		TargetLabels:   []string{"team"},
		ServiceMonitor: v1beta1.ServiceMonitorSpec{Enabled: true},
	})
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitMonitor(t, c, ns, "secure", "ServiceMonitor applied", func(m *v1beta1.NginxMonitor) bool {
		cond := meta.FindStatusCondition(m.Status.Conditions, monitor.ConditionServiceMonitor)
		return cond != nil && cond.Reason == monitor.ReasonServiceMonitorApplied
	})

	sm := &unstructured.Unstructured{}
	sm.SetGroupVersionKind(monitor.ServiceMonitorGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "secure"}, sm); err != nil {
		t.Fatal(err)
	}
	endpoints, _, err := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if err != nil || len(endpoints) != 2 {
		t.Fatalf("endpoints %v: %v", endpoints, err)
	}
	endpoint := endpoints[0].(map[string]any)
	// The reloader's endpoint, as stored: plain HTTP, no credentials.
	reloaderEndpoint := endpoints[1].(map[string]any)
	for field, want := range map[string]any{"port": "reloader", "scheme": "http", "path": "/metrics", "basicAuth": nil, "tlsConfig": nil} {
		if got := reloaderEndpoint[field]; got != want {
			t.Errorf("reloader endpoint %s = %v, want %v", field, got, want)
		}
	}
	wantTLS := map[string]any{
		"ca":         map[string]any{"secret": map[string]any{"name": "scrape-auth", "key": "ca.crt"}},
		"serverName": "web." + ns + ".svc",
	}
	if diff := cmp.Diff(wantTLS, endpoint["tlsConfig"]); diff != "" {
		t.Errorf("tlsConfig (-want +got):\n%s", diff)
	}
	if endpoint["scheme"] != "https" || endpoint["basicAuth"] == nil {
		t.Errorf("endpoint %v", endpoint)
	}
	if limit, _, _ := unstructured.NestedInt64(sm.Object, "spec", "sampleLimit"); limit != 1000 {
		t.Errorf("sampleLimit %d", limit)
	}

	monitorWrites := func() []string {
		var out []string
		for _, w := range counter.Writes() {
			if strings.Contains(w, "/servicemonitors/") || strings.Contains(w, "/nginxmonitors/") || strings.Contains(w, "-scrape-config") {
				out = append(out, w)
			}
		}
		return out
	}
	before, after := writesAfterAnUnrelatedChange(ctx, t, c, ns, monitorWrites)
	t.Logf("writes to reach Applied: %v; after an unrelated change: %d", before, len(after))

	// A ServiceMonitor of that name the monitor does not control (here its
	// own deleted and another made in its place) is not deleted when the
	// monitor's serviceMonitor.enabled is turned off.
	if err := c.Delete(ctx, sm); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKeyFromObject(sm), sm.DeepCopy()) != nil
	}) {
		t.Fatal("the ServiceMonitor was not deleted")
	}
	foreign := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"endpoints": []any{map[string]any{"port": "web"}}}}}
	foreign.SetGroupVersionKind(monitor.ServiceMonitorGVK)
	foreign.SetNamespace(ns)
	foreign.SetName("secure")
	if err := c.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	framework.Update(ctx, t, c, m, func(m *v1beta1.NginxMonitor) { m.Spec.ServiceMonitor.Enabled = false })
	waitMonitor(t, c, ns, "secure", "no ServiceMonitor condition once disabled", func(m *v1beta1.NginxMonitor) bool {
		return meta.FindStatusCondition(m.Status.Conditions, monitor.ConditionServiceMonitor) == nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil {
		t.Errorf("the ServiceMonitor the monitor does not control: %v", err)
	}
}
