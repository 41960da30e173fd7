//go:build !unit

package monitor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

func instance(ns, name string, labels map[string]string, metrics bool) *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](1),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Metrics:  v1beta1.MetricsSpec{Enabled: metrics},
		},
	}
}

func nginxMonitor(ns, name string, spec v1beta1.NginxMonitorSpec) *v1beta1.NginxMonitor {
	return &v1beta1.NginxMonitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec}
}

// waitMonitor polls the monitor until cond holds for its current generation.
func waitMonitor(t *testing.T, c client.Client, ns, name, what string, cond func(*v1beta1.NginxMonitor) bool) *v1beta1.NginxMonitor {
	t.Helper()
	var m v1beta1.NginxMonitor
	ok := framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) bool {
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &m) != nil {
			return false
		}
		return m.Status.ObservedGeneration == m.Generation && cond(&m)
	})
	if !ok {
		t.Fatalf("monitor %s/%s: %s; status: %+v", ns, name, what, m.Status)
	}
	return &m
}

func readyReason(reason string, matched int32) func(*v1beta1.NginxMonitor) bool {
	return func(m *v1beta1.NginxMonitor) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, v1beta1.ConditionReady)
		return c != nil && c.Reason == reason && m.Status.MatchedInstances == matched
	}
}

func scrapeConfigs(t *testing.T, c client.Client, ns, monitorName string) string {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: monitor.SecretName(monitorName)}, &s); err != nil {
		t.Fatalf("scrape config Secret: %v", err)
	}
	return string(s.Data[monitor.ScrapeConfigsKey])
}

func TestInvalidMonitorsAreRefusedAtAdmission(t *testing.T) {
	t.Parallel()
	_, ns, _, c := inprocess.Setup(t, env)
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"regex that does not compile", map[string]any{"endpoint": map[string]any{"relabelings": []any{map[string]any{"sourceLabels": []any{"a"}, "regex": "(unclosed", "action": "keep"}}}}, "spec.endpoint.relabelings[0]"},
		{"metric relabeling regex that does not compile", map[string]any{"endpoint": map[string]any{"metricRelabelings": []any{map[string]any{"sourceLabels": []any{"__name__"}, "regex": "a{2,1}", "action": "drop"}}}}, "spec.endpoint.metricRelabelings[0]"},
		{"unknown action", map[string]any{"endpoint": map[string]any{"relabelings": []any{map[string]any{"action": "rename"}}}}, "spec.endpoint.relabelings[0].action"},
		{"replace without target label", map[string]any{"endpoint": map[string]any{"relabelings": []any{map[string]any{"sourceLabels": []any{"a"}, "action": "replace"}}}}, "targetLabel is required"},
		{"hashmod without modulus", map[string]any{"endpoint": map[string]any{"relabelings": []any{map[string]any{"sourceLabels": []any{"a"}, "targetLabel": "shard", "action": "hashmod"}}}}, "modulus must be positive"},
		{"labeldrop with source labels", map[string]any{"endpoint": map[string]any{"metricRelabelings": []any{map[string]any{"sourceLabels": []any{"a"}, "regex": "tmp_.*", "action": "labeldrop"}}}}, "take only regex"},
		{"bad source label name", map[string]any{"endpoint": map[string]any{"relabelings": []any{map[string]any{"sourceLabels": []any{"a-b"}, "action": "keep"}}}}, "spec.endpoint.relabelings[0].sourceLabels[0]"},
		{"any and matchNames", map[string]any{"namespaceSelector": map[string]any{"any": true, "matchNames": []any{"a"}}}, "set either any or matchNames, not both"},
		{"labelSelector and matchNames", map[string]any{"namespaceSelector": map[string]any{"labelSelector": map[string]any{}, "matchNames": []any{"a"}}}, "set labelSelector alone"},
		{"tls over http", map[string]any{"endpoint": map[string]any{"tlsConfig": map[string]any{"insecureSkipVerify": true}}}, "tlsConfig needs scheme https"},
		{"unknown scheme", map[string]any{"endpoint": map[string]any{"scheme": "ftp"}}, "spec.endpoint.scheme"},
		{"bad interval", map[string]any{"endpoint": map[string]any{"interval": "30 seconds"}}, "spec.endpoint.interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1beta1.GroupVersion.String(), "kind": "NginxMonitor",
				"metadata": map[string]any{"name": "bad", "namespace": ns},
				"spec":     tc.spec,
			}}
			err := c.Create(context.Background(), obj)
			if err == nil {
				_ = c.Delete(context.Background(), obj)
				t.Fatalf("created; want refused with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refused with %v; want %q in the message", err, tc.want)
			}
			t.Logf("refused: %v", err)
		})
	}
	// A valid regex with every feature is accepted.
	ok := nginxMonitor(ns, "good", v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{
		Relabelings: []v1beta1.RelabelConfig{{SourceLabels: []string{"__meta_kubernetes_pod_node_name"}, Regex: `(.+)\.example\.com`, TargetLabel: "node", Replacement: ptr.To("$1"), Action: "replace"}},
	}})
	if err := c.Create(context.Background(), ok); err != nil {
		t.Errorf("a valid monitor was refused: %v", err)
	}
	// So is every example.
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"monitoring.yaml", "team-a.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "example", file))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := framework.DecodeYAML(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			if obj.GetKind() != "NginxMonitor" {
				continue
			}
			obj.SetNamespace(ns)
			if err := c.Create(context.Background(), obj); err != nil {
				t.Errorf("example/%s: NginxMonitor %s refused: %v", file, obj.GetName(), err)
			}
		}
	}
}

func TestMonitorSelectingNothingReportsNoMatchingInstancesUntilItsSelectorIsFixed(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	for _, in := range []*v1beta1.NginxOperator{
		instance(ns, "www", map[string]string{"team": "a"}, true),
		instance(ns, "api", map[string]string{"team": "a"}, true),
		instance(ns, "other", map[string]string{"team": "b"}, true),
	} {
		if err := c.Create(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	m := nginxMonitor(ns, "team-a", v1beta1.NginxMonitorSpec{
		Selector:     metav1.LabelSelector{MatchLabels: map[string]string{"team": "typo"}},
		TargetLabels: []string{"team"},
	})
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	got := waitMonitor(t, c, ns, "team-a", "Ready=False NoMatchingInstances", readyReason(monitor.ReasonNoMatchingInstances, 0))
	if cond := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionAccepted); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Accepted: %+v", cond)
	}
	if data := scrapeConfigs(t, c, ns, "team-a"); data != "[]\n" {
		t.Errorf("selecting nothing must scrape nothing, got:\n%s", data)
	}
	if !framework.WaitFor(ctx, 10*time.Second, func(ctx context.Context) bool {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "team-a" && e.Reason == monitor.ReasonNoMatchingInstances && e.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	}) {
		t.Error("no Warning Event NoMatchingInstances")
	}

	// Fixing the selector clears the condition and fills the Secret.
	framework.Update(ctx, t, c, m, func(m *v1beta1.NginxMonitor) { m.Spec.Selector.MatchLabels["team"] = "a" })
	got = waitMonitor(t, c, ns, "team-a", "Ready=True with 2 instances", readyReason(monitor.ReasonScrapeConfigGenerated, 2))
	wantInstances := []v1beta1.InstanceReference{{Namespace: ns, Name: "api"}, {Namespace: ns, Name: "www"}}
	if len(got.Status.Instances) != 2 || got.Status.Instances[0] != wantInstances[0] || got.Status.Instances[1] != wantInstances[1] {
		t.Errorf("status.instances = %v, want %v", got.Status.Instances, wantInstances)
	}
	if got.Status.ScrapeConfigSecret != monitor.SecretName("team-a") {
		t.Errorf("status.scrapeConfigSecret = %q", got.Status.ScrapeConfigSecret)
	}
	data := scrapeConfigs(t, c, ns, "team-a")
	for _, want := range []string{
		"job_name: nginxmonitor/" + ns + "/team-a\n",
		"job_name: nginxmonitor/" + ns + "/team-a/reloader\n",
		"- " + ns, // the namespace list
		"regex: " + ns + ";api;api|" + ns + ";www;www",
		"target_label: team",
	} {
		if !strings.Contains(data, want) {
			t.Errorf("scrape configs lack %q:\n%s", want, data)
		}
	}
	if strings.Contains(data, "other") {
		t.Errorf("the unselected instance is in the scrape configs:\n%s", data)
	}
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monitor.SecretName("team-a")}, &secret); err != nil {
		t.Fatal(err)
	}
	if file := string(secret.Data[monitor.ScrapeConfigFileKey]); !strings.HasPrefix(file, "scrape_configs:\n") || !strings.Contains(file, "job_name: nginxmonitor/"+ns+"/team-a") {
		t.Errorf("%s is not the scrape_config_files form:\n%s", monitor.ScrapeConfigFileKey, file)
	}
	if owner := metav1.GetControllerOf(&secret); owner == nil || owner.Kind != "NginxMonitor" || owner.Name != "team-a" {
		t.Errorf("the Secret's controller is %+v, want the NginxMonitor", owner)
	}

	// Relabelling an instance drops it; a new instance is picked up.
	framework.UpdateInstance(ctx, t, c, client.ObjectKey{Namespace: ns, Name: "www"}, func(www *v1beta1.NginxOperator) { www.Labels["team"] = "b" })
	waitMonitor(t, c, ns, "team-a", "1 instance after relabelling www", readyReason(monitor.ReasonScrapeConfigGenerated, 1))
	if err := c.Create(ctx, instance(ns, "shop", map[string]string{"team": "a"}, true)); err != nil {
		t.Fatal(err)
	}
	waitMonitor(t, c, ns, "team-a", "2 instances after adding shop", readyReason(monitor.ReasonScrapeConfigGenerated, 2))
	if data := scrapeConfigs(t, c, ns, "team-a"); !strings.Contains(data, ns+";shop;shop") || strings.Contains(data, ";www;") {
		t.Errorf("after relabelling www and adding shop:\n%s", data)
	}
	// Deleting the instances leaves the monitor with nothing to scrape, and says so.
	for _, name := range []string{"api", "shop"} {
		if err := c.Delete(ctx, &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	waitMonitor(t, c, ns, "team-a", "NoMatchingInstances after deleting the instances", readyReason(monitor.ReasonNoMatchingInstances, 0))
}

func TestNamespaceLabelSelectorFollowsNamespaceLabels(t *testing.T) {
	t.Parallel()
	ctx, monNS, cs, c := inprocess.Setup(t, env)
	teamNS := framework.Namespace(t, cs)
	inprocess.StartWatching(t, env, nil, monNS, teamNS)

	if err := c.Create(ctx, instance(teamNS, "web", map[string]string{"scrape": "yes"}, true)); err != nil {
		t.Fatal(err)
	}
	m := nginxMonitor(monNS, "by-label", v1beta1.NginxMonitorSpec{
		Selector:          metav1.LabelSelector{MatchLabels: map[string]string{"scrape": "yes"}},
		NamespaceSelector: v1beta1.NamespaceSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"monitoring": "on"}}},
	})
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitMonitor(t, c, monNS, "by-label", "no match before the namespace is labelled", readyReason(monitor.ReasonNoMatchingInstances, 0))

	setLabel := func(value string) {
		t.Helper()
		nsObj, err := cs.CoreV1().Namespaces().Get(ctx, teamNS, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if nsObj.Labels == nil {
			nsObj.Labels = map[string]string{}
		}
		nsObj.Labels["monitoring"] = value
		if _, err := cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setLabel("on")
	waitMonitor(t, c, monNS, "by-label", "the instance once its namespace is labelled", readyReason(monitor.ReasonScrapeConfigGenerated, 1))
	if data := scrapeConfigs(t, c, monNS, "by-label"); !strings.Contains(data, teamNS+";web;web") {
		t.Errorf("scrape configs:\n%s", data)
	}
	setLabel("off")
	waitMonitor(t, c, monNS, "by-label", "no match once the label is changed", readyReason(monitor.ReasonNoMatchingInstances, 0))
}

func TestInvalidMonitorDoesNotAffectAnother(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	if err := c.Create(ctx, instance(ns, "web", nil, true)); err != nil {
		t.Fatal(err)
	}
	bad := nginxMonitor(ns, "bad", v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{Interval: "10s", ScrapeTimeout: "1m"}})
	good := nginxMonitor(ns, "good", v1beta1.NginxMonitorSpec{ServiceMonitor: v1beta1.ServiceMonitorSpec{Enabled: true}})
	for _, m := range []*v1beta1.NginxMonitor{bad, good} {
		if err := c.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	waitMonitor(t, c, ns, "bad", "Accepted=False InvalidSpec", func(m *v1beta1.NginxMonitor) bool {
		cond := meta.FindStatusCondition(m.Status.Conditions, v1beta1.ConditionAccepted)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == monitor.ReasonInvalidSpec &&
			strings.Contains(cond.Message, "longer than endpoint.interval")
	})
	got := waitMonitor(t, c, ns, "good", "Ready=True", readyReason(monitor.ReasonScrapeConfigGenerated, 1))
	// Without prometheus-operator's CRDs the ServiceMonitor condition says so.
	if cond := meta.FindStatusCondition(got.Status.Conditions, monitor.ConditionServiceMonitor); cond == nil || cond.Reason != monitor.ReasonAPINotAvailable {
		t.Errorf("ServiceMonitor condition: %+v", cond)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monitor.SecretName("bad")}, &s); err == nil {
		t.Errorf("an invalid monitor got a scrape config Secret:\n%s", s.Data[monitor.ScrapeConfigsKey])
	}
	// nginx_operator_monitor_targets counts the good monitor's pods (the
	// instance's status.replicas: no pods without nodes here, so 0) and exists.
	if v, ok := gauge(t, "nginx_operator_monitor_targets", map[string]string{"namespace": ns, "name": "good"}); !ok || v != 0 {
		t.Errorf("nginx_operator_monitor_targets{namespace=%q,name=good} = %v (present %v)", ns, v, ok)
	}
}

func gauge(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue metric
				}
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// Not parallel: it serves the monitoring.coreos.com API for its duration,
// which the parallel tests (that expect it absent) must not see. Go runs
// every sequential test before the parallel ones.
func TestServiceMonitorIsCreatedWhenPrometheusOperatorAPIIsServed(t *testing.T) {
	cluster := env.Cluster(t)
	inprocess.InstallCRDs(t, cluster.Config)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	objs, err := framework.DecodeYAML([]byte(framework.ServiceMonitorCRD))
	if err != nil {
		t.Fatal(err)
	}
	c := inprocess.Client(t, env.Cluster(t).Config)
	if err := framework.ApplyObjects(ctx, cluster.Config, "", objs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), objs[0])
		framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) bool {
			return c.Get(ctx, client.ObjectKeyFromObject(objs[0]), objs[0].DeepCopy()) != nil
		})
	})
	smList := &unstructured.UnstructuredList{}
	smList.SetAPIVersion("monitoring.coreos.com/v1")
	smList.SetKind("ServiceMonitorList")
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return c.List(ctx, smList) == nil }) {
		t.Fatal("the ServiceMonitor API is not served")
	}

	ns := framework.Namespace(t, cs)
	inprocess.StartWatching(t, env, nil, ns)
	if err := c.Create(ctx, instance(ns, "web", map[string]string{"team": "a"}, true)); err != nil {
		t.Fatal(err)
	}
	m := nginxMonitor(ns, "team-a", v1beta1.NginxMonitorSpec{ServiceMonitor: v1beta1.ServiceMonitorSpec{Enabled: true}, TargetLabels: []string{"team"}})
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitMonitor(t, c, ns, "team-a", "ServiceMonitor applied", func(m *v1beta1.NginxMonitor) bool {
		cond := meta.FindStatusCondition(m.Status.Conditions, monitor.ConditionServiceMonitor)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == monitor.ReasonServiceMonitorApplied
	})
	sm := &unstructured.Unstructured{}
	sm.SetAPIVersion("monitoring.coreos.com/v1")
	sm.SetKind("ServiceMonitor")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "team-a"}, sm); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(sm); owner == nil || owner.Kind != "NginxMonitor" {
		t.Errorf("ServiceMonitor owner %+v", owner)
	}
	var ports []string
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	for _, e := range endpoints {
		port, _ := e.(map[string]any)["port"].(string)
		ports = append(ports, port)
	}
	values, _, _ := unstructured.NestedSlice(sm.Object, "spec", "selector", "matchExpressions")
	if strings.Join(ports, ",") != "metrics,reloader" || len(values) != 1 {
		t.Errorf("ServiceMonitor spec: %v", sm.Object["spec"])
	}

	// Disabling it deletes the ServiceMonitor.
	framework.Update(ctx, t, c, m, func(m *v1beta1.NginxMonitor) { m.Spec.ServiceMonitor.Enabled = false })
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "team-a"}, sm.DeepCopy()) != nil
	}) {
		t.Error("the ServiceMonitor was not deleted after serviceMonitor.enabled was turned off")
	}
}

// TestReconcilingAnUnchangedMonitorSendsNoWrites: once a monitor is Ready, a
// reconcile triggered by an instance change that changes nothing for the
// monitor (an unrelated label) sends no mutating request about the monitor
// or its Secret.
func TestReconcilingAnUnchangedMonitorSendsNoWrites(t *testing.T) {
	t.Parallel()
	counter := &inprocess.RequestCounter{}
	ctx, ns, _, _ := inprocess.Setup(t, env, inprocess.WithOperator(counter))
	// Only the monitor's own writes: the NginxOperator controller runs too.
	monitorWrites := func() []string {
		var out []string
		for _, w := range counter.Writes() {
			if strings.Contains(w, "/nginxmonitors/") || strings.Contains(w, "-scrape-config") {
				out = append(out, w)
			}
		}
		return out
	}
	c := inprocess.Client(t, env.Cluster(t).Config)
	if err := c.Create(ctx, instance(ns, "web", map[string]string{"team": "a"}, true)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, nginxMonitor(ns, "team-a", v1beta1.NginxMonitorSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}})); err != nil {
		t.Fatal(err)
	}
	waitMonitor(t, c, ns, "team-a", "Ready", readyReason(monitor.ReasonScrapeConfigGenerated, 1))
	before, after := writesAfterAnUnrelatedChange(ctx, t, c, ns, monitorWrites)
	t.Logf("monitor writes to reach Ready: %d (%v); after an unrelated change: %d", len(before), before, len(after))
}

// TestMissingCredentialsSecretIsReportedThenPickedUp: basic-auth from a Secret
// that does not exist yet leaves the monitor Ready=False SecretNotFound; once
// the Secret exists the credentials are in the generated configuration.
func TestMissingCredentialsSecretIsReportedThenPickedUp(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	if err := c.Create(ctx, instance(ns, "web", nil, true)); err != nil {
		t.Fatal(err)
	}
	ref := func(key string) corev1.SecretKeySelector {
		return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "scrape-auth"}, Key: key}
	}
	m := nginxMonitor(ns, "auth", v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{
		BasicAuth: &v1beta1.BasicAuth{Username: ref("username"), Password: ref("password")},
	}})
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitMonitor(t, c, ns, "auth", "Ready=False SecretNotFound", func(m *v1beta1.NginxMonitor) bool {
		cond := meta.FindStatusCondition(m.Status.Conditions, v1beta1.ConditionReady)
		return cond != nil && cond.Reason == monitor.ReasonSecretNotFound && strings.Contains(cond.Message, `"scrape-auth"`)
	})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scrape-auth"},
		StringData: map[string]string{"username": "prometheus", "password": "s3cr3t"},
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	var got *v1beta1.NginxMonitor
	ok := framework.WaitFor(ctx, 40*time.Second, func(ctx context.Context) bool {
		var mm v1beta1.NginxMonitor
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auth"}, &mm) != nil {
			return false
		}
		got = &mm
		return readyReason(monitor.ReasonScrapeConfigGenerated, 1)(&mm)
	})
	if !ok {
		t.Fatalf("not Ready after the Secret was created: %+v", got.Status)
	}
	if data := scrapeConfigs(t, c, ns, "auth"); !strings.Contains(data, "username: prometheus") || !strings.Contains(data, "password: s3cr3t") {
		t.Errorf("credentials missing from the scrape configuration:\n%s", data)
	}
}

// writesAfterAnUnrelatedChange lets the first writes settle, changes a label
// of the instance "web" that no monitor selects on, and fails the test if the
// monitor then writes anything: the writes before and after the change.
func writesAfterAnUnrelatedChange(ctx context.Context, t *testing.T, c client.Client, ns string, monitorWrites func() []string) (before, after []string) {
	t.Helper()
	tools.Settled(t, 2*time.Second, time.Minute, "the monitor's writes", func() int { return len(monitorWrites()) })
	before = monitorWrites()
	framework.UpdateInstance(ctx, t, c, client.ObjectKey{Namespace: ns, Name: "web"}, func(web *v1beta1.NginxOperator) { web.Labels["unrelated"] = "x" })
	// A window in which nothing may happen: the change reaches the
	// controller's watch well within it, and must cause no write.
	time.Sleep(3 * time.Second)
	after = monitorWrites()[len(before):]
	if len(after) != 0 {
		t.Errorf("an unchanged monitor's objects were written: %v", after)
	}
	return before, after
}
