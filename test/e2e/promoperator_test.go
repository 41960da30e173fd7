package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// installPrometheusOperator builds prometheus-operator from its Go module and
// prints where its binary and CRDs are.
const installPrometheusOperator = "hack/install-prometheus-operator.sh"

// promoperatorCRDDir is the example/prometheus-operator-crd directory of the
// prometheus-operator module the installer builds.
func promoperatorCRDDir(t *testing.T) string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, installPrometheusOperator), "--print-crd-dir").Output()
	if err != nil {
		t.Fatalf("%s --print-crd-dir: %v", installPrometheusOperator, err)
	}
	dir := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(dir, "monitoring.coreos.com_servicemonitors.yaml")); err != nil {
		t.Fatalf("prometheus-operator CRDs: %v", err)
	}
	return dir
}

// startPrometheusOperator runs the real prometheus-operator as the cluster
// admin, scoped to namespace ns, with the status of configuration resources
// (ServiceMonitors) on, until the test ends.
func startPrometheusOperator(t *testing.T, bin, ns string) string {
	t.Helper()
	port, err := tools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "prometheus-operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--namespaces="+ns,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--feature-gates=StatusForConfigurationResources=true",
		"--log-level=debug",
	)
	// prometheus-operator reads KUBECONFIG when no --apiserver is given.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("prometheus-operator log (last 8000 bytes):\n%s", promopTail(out, 8000))
			}
		}
	})
	return logPath
}

func promopTail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// TestPromoperatorLoadsBothConfigurationPathsWithTheMonitorsJobs runs the
// real prometheus-operator (0.93, built from its module, with its own CRDs)
// on a Prometheus that loads one monitor's scrape configuration Secret as
// additionalScrapeConfigs and selects the ServiceMonitors of two others, one
// of them selecting no instance. The configuration prometheus-operator
// generates (the prometheus-<name> Secret) must contain the Secret's job and
// a ServiceMonitor job whose targets are relabelled to the monitor's job
// name after prometheus-operator's own job rule, and prometheus-operator
// must reject none of the ServiceMonitors (InvalidConfiguration).
//
// Not parallel: it replaces the stand-in ServiceMonitor CRD with
// prometheus-operator's CRDs, which stay installed (a superset for every
// ServiceMonitor the operator writes).
func TestPromoperatorLoadsBothConfigurationPathsWithTheMonitorsJobs(t *testing.T) {
	bin := tools.Installed(t, installPrometheusOperator, "operator")
	crdDir := promoperatorCRDDir(t)
	ctx, ns, _ := withOperator(t)
	c := inprocess.Client(t, cluster.Config)

	// Server-side: the CRDs are too large for client-side apply's
	// annotation, and the stand-in ServiceMonitor CRD is replaced.
	if out, err := kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", crdDir); err != nil {
		t.Fatalf("installing prometheus-operator's CRDs: %v\n%s", err, out)
	}
	if out, err := kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/prometheuses.monitoring.coreos.com", "crd/servicemonitors.monitoring.coreos.com"); err != nil {
		t.Fatalf("waiting for the CRDs: %v\n%s", err, out)
	}

	web := newInstance(ns, "web", 1)
	web.Labels = map[string]string{"team": "a"}
	web.Spec.Metrics.Enabled = true
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	newMonitor := func(name, team string, serviceMonitor bool) *v1beta1.NginxMonitor {
		return &v1beta1.NginxMonitor{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1beta1.NginxMonitorSpec{
				Selector:       metav1.LabelSelector{MatchLabels: map[string]string{"team": team}},
				Endpoint:       v1beta1.Endpoint{Interval: "15s"},
				ServiceMonitor: v1beta1.ServiceMonitorSpec{Enabled: serviceMonitor},
			},
		}
	}
	// Two monitors of one instance, by the two paths, and one of nothing.
	for _, m := range []*v1beta1.NginxMonitor{
		newMonitor("by-secret", "a", false),
		newMonitor("by-servicemonitor", "a", true),
		newMonitor("nothing", "nobody", true),
	} {
		if err := c.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"by-servicemonitor", "nothing"} {
		promopWaitMonitor(ctx, t, c, ns, name, monitor.ConditionServiceMonitor, monitor.ReasonServiceMonitorApplied)
	}

	// The Prometheus is in the monitors' namespace: additionalScrapeConfigs
	// is read from the Prometheus's. It has a ServiceMonitor selector, so
	// prometheus-operator manages its configuration.
	prom := fmt.Sprintf(`
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s, namespace: %s}
spec:
  replicas: 1
  serviceMonitorSelector: {matchLabels: {app.kubernetes.io/name: nginx-monitor}}
  additionalScrapeConfigs: {name: %s, key: %s}
`, ns, monitor.SecretName("by-secret"), monitor.ScrapeConfigsKey)
	if out, err := kubectlWithInput(ctx, prom, "create", "-f", "-"); err != nil {
		t.Fatalf("creating the Prometheus: %v\n%s", err, out)
	}
	logPath := startPrometheusOperator(t, bin, ns)

	type scrapeConfig struct {
		JobName        string           `yaml:"job_name"`
		RelabelConfigs []map[string]any `yaml:"relabel_configs"`
	}
	var cfg struct {
		ScrapeConfigs []scrapeConfig `yaml:"scrape_configs"`
	}
	// prometheus-operator names a ServiceMonitor's jobs by endpoint index:
	// 0 is the exporter's endpoint, 1 the reloader's.
	smJob := func(name string) string { return "serviceMonitor/" + ns + "/" + name + "/0" }
	smReloaderJob := func(name string) string { return "serviceMonitor/" + ns + "/" + name + "/1" }
	jobs := map[string]scrapeConfig{}
	wantJobs := []string{
		monitor.JobName(ns, "by-secret"), monitor.ReloaderJobName(ns, "by-secret"),
		smJob("by-servicemonitor"), smReloaderJob("by-servicemonitor"), smJob("nothing"), smReloaderJob("nothing"),
	}
	var generated string
	if !framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) bool {
		var s corev1.Secret
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prometheus-k8s"}, &s) != nil {
			return false
		}
		zr, err := gzip.NewReader(bytes.NewReader(s.Data["prometheus.yaml.gz"]))
		if err != nil {
			return false
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return false
		}
		generated = string(raw)
		cfg.ScrapeConfigs = nil
		if yaml.Unmarshal(raw, &cfg) != nil {
			return false
		}
		jobs = map[string]scrapeConfig{}
		for _, sc := range cfg.ScrapeConfigs {
			jobs[sc.JobName] = sc
		}
		for _, job := range wantJobs {
			if _, ok := jobs[job]; !ok {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("prometheus-operator's configuration never had the jobs %v (see its log %s):\n%s", wantJobs, logPath, generated)
	}

	// The ServiceMonitors' targets: the last rule setting job (prometheus-
	// operator's own sets it from the Service name first) sets the monitor's
	// job name, the exporter's or the reloader's.
	for _, name := range []string{"by-servicemonitor", "nothing"} {
		for smJobName, want := range map[string]string{smJob(name): monitor.JobName(ns, name), smReloaderJob(name): monitor.ReloaderJobName(ns, name)} {
			var jobRules []map[string]any
			for _, r := range jobs[smJobName].RelabelConfigs {
				if r["target_label"] == "job" {
					jobRules = append(jobRules, r)
				}
			}
			if len(jobRules) < 2 || fmt.Sprint(jobRules[len(jobRules)-1]["replacement"]) != want || jobRules[0]["replacement"] == want {
				t.Errorf("%s: rules setting job %v, want prometheus-operator's then one replacing it with %q", smJobName, jobRules, want)
			}
		}
	}
	if monitor.JobName(ns, "by-secret") == monitor.JobName(ns, "by-servicemonitor") {
		t.Error("two monitors of one instance share a job")
	}

	// No ServiceMonitor rejected: their status (StatusForConfigurationResources)
	// says Accepted for the Prometheus, and no InvalidConfiguration event.
	for _, name := range []string{"by-servicemonitor", "nothing"} {
		var status string
		if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
			out, err := kubectl(ctx, "get", "servicemonitor", "-n", ns, name, "-o", "jsonpath={.status.bindings[*].conditions[?(@.type==\"Accepted\")]}")
			if err != nil {
				return false
			}
			status = out
			return strings.Contains(out, `"status":"True"`) || strings.Contains(out, "InvalidConfiguration")
		}) || !strings.Contains(status, `"status":"True"`) {
			t.Errorf("ServiceMonitor %s: Accepted condition %s, want True", name, status)
		}
	}
	out, err := kubectl(ctx, "get", "events", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var events struct {
		Items []corev1.Event `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &events); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "InvalidConfiguration" {
			t.Errorf("event %s on %s/%s: %s", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		}
	}
	// Nor on the Prometheus: its Reconciled condition is True.
	var reconciled string
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		reconciled, _ = kubectl(ctx, "get", "prometheus", "-n", ns, "k8s", "-o", "jsonpath={.status.conditions[?(@.type==\"Reconciled\")]}")
		return strings.Contains(reconciled, `"status":"True"`)
	}) {
		t.Errorf("Prometheus k8s: Reconciled condition %s, want True", reconciled)
	}
	if strings.Contains(reconciled, "InvalidConfiguration") {
		t.Errorf("Prometheus k8s: %s", reconciled)
	}
	t.Logf("jobs in prometheus-operator's configuration: %v", func() []string {
		var names []string
		for _, sc := range cfg.ScrapeConfigs {
			names = append(names, sc.JobName)
		}
		return names
	}())
}

// promopWaitMonitor waits for the monitor's condition typ to have reason.
func promopWaitMonitor(ctx context.Context, t *testing.T, c client.Client, ns, name, typ, reason string) {
	t.Helper()
	var last string
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		var m v1beta1.NginxMonitor
		cond := framework.Condition(ctx, c, client.ObjectKey{Namespace: ns, Name: name}, &m, typ)
		if cond == nil {
			return false
		}
		last = cond.Reason + ": " + cond.Message
		return cond.Reason == reason
	}) {
		t.Fatalf("NginxMonitor %s/%s: condition %s is %q, want reason %s", ns, name, typ, last, reason)
	}
}
