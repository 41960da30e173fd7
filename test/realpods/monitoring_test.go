package realpods

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A real Prometheus, on the host, scrapes the exporter sidecar and the
// nginx-reloader of every pod of an NginxOperator through the scrape
// configuration its NginxMonitor generated: Kubernetes discovery (through
// the admin's kubeconfig, as the host is outside the cluster) finds the
// pods, the host reaches their IPs, nginx_up is 1 for each, so the exporter
// reads nginx's stub_status, and each pod's reloader reports a successful
// last reload of the configuration the instance's status.configHash names.
func TestPrometheusScrapesEveryPodsExporterAndReloaderThroughTheNginxMonitor(t *testing.T) {
	promBin := tools.Installed(t, tools.InstallPrometheus, "prometheus")
	ctx, c, ns, cs, cl := setup(t)

	objs := apply(ctx, t, c, ns, `
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: web
  labels:
    team: rp
spec:
  replicas: 2
  ports:
  - name: http
    containerPort: 8080
  metrics:
    enabled: true
  config:
    servers:
    - port: http
      serverNames: [shop.test]
      locations:
      - path: /cart/
        name: cart
        respond: {status: 200, body: cart}
      - path: /search/
        name: search
        respond: {status: 503, body: busy}
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxMonitor
metadata:
  name: team
spec:
  selector:
    matchLabels:
      team: rp
  endpoint:
    interval: 2s
  targetLabels: [team]
`)
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=web"})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range pods.Items {
		want = append(want, p.Name)
	}
	sort.Strings(want)
	if len(want) != 2 {
		t.Fatalf("pods of web: %v, want 2", want)
	}

	// The generated file, with the kubeconfig a Prometheus outside the
	// cluster needs.
	var secret corev1.Secret
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: monitor.SecretName("team")}, &secret); err != nil {
		t.Fatal(err)
	}
	var file struct {
		ScrapeConfigs []map[string]any `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(secret.Data[monitor.ScrapeConfigFileKey], &file); err != nil {
		t.Fatal(err)
	}
	if len(file.ScrapeConfigs) == 0 {
		t.Fatalf("no scrape configuration in %s:\n%s", secret.Name, secret.Data[monitor.ScrapeConfigFileKey])
	}
	for _, sc := range file.ScrapeConfigs {
		sds, _ := sc["kubernetes_sd_configs"].([]any)
		for _, sd := range sds {
			sd.(map[string]any)["kubeconfig_file"] = c.Kubeconfig
		}
	}
	dir := t.TempDir()
	config, err := yaml.Marshal(map[string]any{"scrape_configs": file.ScrapeConfigs})
	if err != nil {
		t.Fatal(err)
	}
	promFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promFile, config, 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := tools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	promLog, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer promLog.Close()
	prom := exec.Command(promBin, "--config.file="+promFile, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port))
	prom.Stdout, prom.Stderr = promLog, promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(promLog.Name())
			t.Logf("prometheus.yml:\n%s\nprometheus output:\n%s", config, out)
		}
	})

	promAPI := tools.NewPrometheus(t, fmt.Sprintf("http://127.0.0.1:%d", port), nil)
	began := time.Now()
	var last string
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		got, err := query(ctx, promAPI, "nginx_up")
		if err != nil {
			last = err.Error()
			return false
		}
		var up []string
		for pod, v := range got {
			if v == "1" {
				up = append(up, pod)
			}
		}
		sort.Strings(up)
		last = fmt.Sprintf("nginx_up by pod: %v", got)
		return strings.Join(up, ",") == strings.Join(want, ",") && len(got) == len(want)
	}) {
		t.Fatalf("Prometheus never saw nginx_up 1 for exactly the pods %v; last: %s", want, last)
	}
	t.Logf("nginx_up is 1 for %v %s after Prometheus started", want, time.Since(began).Round(time.Millisecond))

	// The monitor's reloader job, through the Service's reloader port: each
	// pod has loaded the instance's current configuration, successfully.
	reloaderJob := monitor.ReloaderJobName(ns, "team")
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		var web v1beta1.NginxOperator
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &web); err != nil {
			last = err.Error()
			return false
		}
		info, err := promAPI.Query(ctx, fmt.Sprintf(`reloader_config_info{job=%q}`, reloaderJob))
		if err != nil {
			last = err.Error()
			return false
		}
		hashes := map[string]string{}
		for _, s := range info {
			if s.Metric["instance"] == "web" && s.Metric["namespace"] == model.LabelValue(ns) && s.Metric["team"] == "rp" {
				hashes[string(s.Metric["pod"])] = string(s.Metric["hash"])
			}
		}
		ok, err := query(ctx, promAPI, fmt.Sprintf(`reloader_last_reload_successful{job=%q}`, reloaderJob))
		if err != nil {
			last = err.Error()
			return false
		}
		last = fmt.Sprintf("status.configHash %q; reloader_config_info hash by pod: %v; reloader_last_reload_successful by pod: %v", web.Status.ConfigHash, hashes, ok)
		if web.Status.ConfigHash == "" || len(hashes) != len(want) || len(ok) != len(want) {
			return false
		}
		for _, pod := range want {
			if hashes[pod] != web.Status.ConfigHash || ok[pod] != "1" {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("Prometheus never saw, in job %s, every pod of %v reloaded on the instance's configuration; last: %s", reloaderJob, want, last)
	}
	t.Logf("reloader metrics of %v in job %s: %s", want, reloaderJob, last)
	requestsCountedExactly(ctx, t, promAPI, cs, realcluster.NodeOf(c), ns, reloaderJob)
	for name, logs := range containerLogs(ctx, t, cs, ns, "app.kubernetes.io/instance=web") {
		if !strings.HasSuffix(name, "/nginx") {
			continue
		}
		for _, bad := range nginxTrouble {
			if strings.Contains(logs, bad) {
				t.Errorf("the log of %s has %q:\n%s", name, bad, logs)
			}
		}
	}
}

// query runs an instant query and returns each series' value by its pod label.
func query(ctx context.Context, prom *tools.Prometheus, q string) (map[string]string, error) {
	vec, err := prom.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range vec {
		out[string(s.Metric["pod"])] = s.Value.String()
	}
	return out, nil
}

// requestsCountedExactly sends requests to two routes of instance web
// through its Service, at a rate the reloaders keep up with, and waits
// until Prometheus's nginx_route_requests_total, added over the pods, is
// exactly what was sent, by route and status class.
func requestsCountedExactly(ctx context.Context, t *testing.T, promAPI *tools.Prometheus, cs kubernetes.Interface, rn *node.Node, ns, job string) {
	t.Helper()
	ip := clusterIP(ctx, t, cs, ns, "web")
	hc := rn.HTTPClient()
	sent := map[string]int{"cart 2xx": 0, "search 5xx": 0}
	for i := range 100 {
		path, key, status := "/cart/item", "cart 2xx", http.StatusOK
		if i%4 == 3 {
			path, key, status = "/search/q", "search 5xx", http.StatusServiceUnavailable
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ip+":80"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "shop.test"
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("GET %s: %s, want %d", path, resp.Status, status)
		}
		sent[key]++
	}
	var last string
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		vec, err := promAPI.Query(ctx, fmt.Sprintf(`sum by (route, status) (nginx_route_requests_total{job=%q,instance="web",server="shop.test"})`, job))
		if err != nil {
			last = err.Error()
			return false
		}
		got := map[string]int{}
		for _, s := range vec {
			got[string(s.Metric["route"])+" "+string(s.Metric["status"])] = int(s.Value)
		}
		last = fmt.Sprintf("counted %v, sent %v", got, sent)
		return maps.Equal(got, sent)
	}) {
		t.Fatalf("Prometheus never counted exactly the requests sent: %s", last)
	}
	t.Logf("nginx_route_requests_total through Prometheus: %s", last)
	// Each pod's kernel counted the lines its reloader had no room for:
	// none at this rate.
	dropped, err := query(ctx, promAPI, fmt.Sprintf(`reloader_request_lines_dropped_total{job=%q,instance="web"}`, job))
	if err != nil || len(dropped) != 2 || dropped["web-0"] != "0" || dropped["web-1"] != "0" {
		t.Errorf("reloader_request_lines_dropped_total by pod: %v (%v), want 0 for web-0 and web-1", dropped, err)
	}
}
