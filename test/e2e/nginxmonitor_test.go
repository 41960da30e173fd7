package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	yaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// discoveredTarget is one active target of Prometheus, by its labels.
type discoveredTarget struct {
	Labels map[string]string
}

func (d discoveredTarget) String() string {
	return d.Labels["namespace"] + "/" + d.Labels["instance"] + "/" + d.Labels["pod"]
}

// TestNginxMonitorPrometheusDiscoversExactlyTheSelectedInstancesPods runs a real
// Prometheus with the scrape configuration the operator generated (as a
// scrape_config_files entry) and a kubeconfig for the local apiserver. Its
// Kubernetes discovery must find exactly the pods (kwok pods) of the
// instances the monitor selects, each in the exporter's and the reloader's
// job, with the namespace, instance, pod and target labels, and follow an
// instance added and an instance relabelled.
func TestNginxMonitorPrometheusDiscoversExactlyTheSelectedInstancesPods(t *testing.T) {
	t.Parallel()
	promBin := tools.Installed(t, tools.InstallPrometheus, "prometheus")
	ctx, ns, _ := withOperator(t)
	c := inprocess.Client(t, cluster.Config)

	withLabels := func(n *v1beta1.NginxOperator, team string, metrics bool) *v1beta1.NginxOperator {
		n.Labels = map[string]string{"team": team}
		n.Spec.Metrics.Enabled = metrics
		return n
	}
	for _, n := range []*v1beta1.NginxOperator{
		withLabels(newInstance(ns, "web", 1), "a", true),
		withLabels(newInstance(ns, "api", 2), "a", true),
		withLabels(newInstance(ns, "other", 1), "b", true),  // not selected
		withLabels(newInstance(ns, "quiet", 1), "a", false), // selected, no metrics port
	} {
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	mon := &v1beta1.NginxMonitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"},
		Spec: v1beta1.NginxMonitorSpec{
			Selector:     metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
			Endpoint:     v1beta1.Endpoint{Interval: "5s"},
			TargetLabels: []string{"team"},
		},
	}
	if err := c.Create(ctx, mon); err != nil {
		t.Fatal(err)
	}

	// The generated file, with a kubeconfig for Prometheus outside the cluster.
	dir := t.TempDir()
	scrapeFile := filepath.Join(dir, "scrape-configs.yaml")
	lastData, lastFile := "", []byte(nil)
	writeScrapeConfigs := func(want string) {
		t.Helper()
		if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
			var s corev1.Secret
			if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monitor.SecretName("team-a")}, &s) != nil {
				return false
			}
			lastData, lastFile = string(s.Data[monitor.ScrapeConfigsKey]), s.Data[monitor.ScrapeConfigFileKey]
			return strings.Contains(lastData, want)
		}) {
			t.Fatalf("the scrape configuration never contained %q:\n%s", want, lastData)
		}
		// The file form Prometheus' scrape_config_files loads, with the
		// kubeconfig a Prometheus outside the cluster needs.
		var file struct {
			ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
		}
		if err := yaml.Unmarshal(lastFile, &file); err != nil {
			t.Fatal(err)
		}
		for _, sc := range file.ScrapeConfigs {
			for _, sd := range sc["kubernetes_sd_configs"].([]any) {
				sd.(map[any]any)["kubeconfig_file"] = cluster.Kubeconfig
			}
		}
		out, err := yaml.Marshal(map[string]any{"scrape_configs": file.ScrapeConfigs})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(scrapeFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeScrapeConfigs(ns + ";web;web")

	promFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promFile, []byte("scrape_config_files: ["+scrapeFile+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := tools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	prom := exec.Command(promBin, "--config.file="+promFile, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--web.enable-lifecycle")
	var promOut bytes.Buffer
	prom.Stdout, prom.Stderr = &promOut, &promOut
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", promOut.String())
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	promAPI := tools.NewPrometheus(t, base, nil)
	targets := func() []discoveredTarget {
		active, err := promAPI.ActiveTargets(ctx)
		if err != nil {
			return nil
		}
		out := make([]discoveredTarget, 0, len(active))
		for _, tg := range active {
			labels := map[string]string{}
			for k, v := range tg.Labels {
				labels[string(k)] = string(v)
			}
			out = append(out, discoveredTarget{Labels: labels})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
		return out
	}
	// Each selected pod is two targets: its exporter, in the monitor's job,
	// and its reloader, in the monitor's reloader job.
	jobs := []string{monitor.JobName(ns, "team-a"), monitor.ReloaderJobName(ns, "team-a")}
	expect := func(what string, want ...string) []discoveredTarget {
		t.Helper()
		var got []discoveredTarget
		start := time.Now()
		defer func() {
			t.Logf("%s: Prometheus discovered %v after %s", what, got, time.Since(start).Round(100*time.Millisecond))
		}()
		if !framework.WaitFor(ctx, 120*time.Second, func(context.Context) bool {
			got = targets()
			byJob := map[string][]string{}
			for _, tg := range got {
				byJob[tg.Labels["job"]] = append(byJob[tg.Labels["job"]], tg.String())
			}
			if len(byJob) != len(jobs) {
				return false
			}
			for _, job := range jobs {
				if strings.Join(byJob[job], ",") != strings.Join(want, ",") {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("%s: Prometheus discovered %v, want %v in each of the jobs %v\nscrape configs:\n%s", what, got, want, jobs, lastData)
		}
		return got
	}
	reload := func() {
		t.Helper()
		resp, err := http.Post(base+"/-/reload", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("reload: %s", resp.Status)
		}
	}

	got := expect("initial selection", ns+"/api/api-0", ns+"/api/api-1", ns+"/web/web-0")
	for _, tg := range got {
		if tg.Labels["team"] != "a" || !slices.Contains(jobs, tg.Labels["job"]) {
			t.Errorf("target %v: labels %v, want team=a and a job of %v", tg, tg.Labels, jobs)
		}
	}
	waitReady(t, c, ns, "team-a", 3) // web, api and quiet (selected, though it has no metrics port)

	// An instance added to the selection is discovered.
	if err := c.Create(ctx, withLabels(newInstance(ns, "shop", 1), "a", true)); err != nil {
		t.Fatal(err)
	}
	writeScrapeConfigs(ns + ";shop;shop")
	reload()
	expect("after adding shop", ns+"/api/api-0", ns+"/api/api-1", ns+"/shop/shop-0", ns+"/web/web-0")

	// An instance relabelled out of the selection is dropped.
	api := v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}
	framework.Update(ctx, t, c, &api, func(*v1beta1.NginxOperator) {
		api.Labels["team"] = "b"
	})
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		var s corev1.Secret
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: monitor.SecretName("team-a")}, &s) == nil &&
			!strings.Contains(string(s.Data[monitor.ScrapeConfigsKey]), ";api;")
	}) {
		t.Fatal("the relabelled instance stayed in the scrape configuration")
	}
	writeScrapeConfigs(ns + ";shop;shop")
	reload()
	expect("after relabelling api", ns+"/shop/shop-0", ns+"/web/web-0")
}

// waitReady waits for the monitor to be Ready with matched instances.
func waitReady(t *testing.T, c client.Client, ns, name string, matched int32) {
	t.Helper()
	var m v1beta1.NginxMonitor
	if !framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) bool {
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &m) != nil {
			return false
		}
		cond := meta.FindStatusCondition(m.Status.Conditions, v1beta1.ConditionReady)
		return cond != nil && cond.Status == metav1.ConditionTrue && m.Status.MatchedInstances == matched
	}) {
		t.Fatalf("monitor %s/%s not Ready with %d instances: %+v", ns, name, matched, m.Status)
	}
}

// On a cluster serving prometheus-operator's API, serviceMonitor.enabled
// creates a ServiceMonitor owned by the monitor, and turning it off deletes it.
func TestServiceMonitorFollowsTheMonitorsSwitch(t *testing.T) {
	t.Parallel()
	ctx, ns, _ := withOperator(t)
	scheme := operator.NewScheme()
	if err := monitor.AddServiceMonitorToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	web := newInstance(ns, "web", 1)
	web.Spec.Metrics.Enabled = true
	m := &v1beta1.NginxMonitor{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       v1beta1.NginxMonitorSpec{Selector: metav1.LabelSelector{}, ServiceMonitor: v1beta1.ServiceMonitorSpec{Enabled: true}},
	}
	for _, obj := range []client.Object{web, m} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(ctx context.Context) bool {
		var sm monitoringv1.ServiceMonitor
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &sm) == nil && metav1.IsControlledBy(&sm, m)
	}
	if !framework.WaitFor(ctx, 60*time.Second, exists) {
		t.Fatal("serviceMonitor.enabled did not create a ServiceMonitor owned by the monitor")
	}
	framework.Update(ctx, t, c, m, func(*v1beta1.NginxMonitor) { m.Spec.ServiceMonitor.Enabled = false })
	// Gone, not unreadable: a Get that fails otherwise proves nothing (the
	// suite's RBAC audit once found no delete after this test passed).
	var last error
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		var sm monitoringv1.ServiceMonitor
		last = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &sm)
		return apierrors.IsNotFound(last)
	}) {
		t.Fatalf("turning serviceMonitor.enabled off did not delete the ServiceMonitor (last read: %v)", last)
	}
}
