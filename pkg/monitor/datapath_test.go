package monitor

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/common/model"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// TestRealPrometheusScrapesTheExporterAndTheReloaderWithTheGeneratedConfig
// is the metrics data path on loopback: a real nginx running the rendered
// configuration with metrics on (stub_status on 127.0.0.1) under the real
// nginx-reloader (built from cmd/nginx-reloader), the real
// nginx-prometheus-exporter reading stub_status, and a real Prometheus
// scraping both with the two scrape configurations Build generated, their
// Kubernetes discovery replaced by a static target carrying the labels
// discovery would set. Prometheus must report nginx_up 1 in the exporter's
// job, and in the reloader's job a successful last reload and the hash of
// the configuration nginx runs, with those labels.
func TestRealPrometheusScrapesTheExporterAndTheReloaderWithTheGeneratedConfig(t *testing.T) {
	nginxBin := tools.Nginx(t)
	exporterBin := tools.Require(t, "prometheus-nginx-exporter", "apt-get install -y prometheus-nginx-exporter")
	prometheusBin := tools.Require(t, "prometheus", "apt-get install -y prometheus")

	dir := t.TempDir()
	// nginx workers started as root run as "nobody", which must read the files.
	tools.Must(t, os.Chmod(dir, 0o755))
	tools.Must(t, os.Chmod(filepath.Dir(dir), 0o755))
	reloaderBin := framework.ReloaderBinary(t)
	httpPort, healthPort, stubPort, exporterPort, reloaderPort, promPort := tools.Port(t), tools.Port(t), tools.Port(t), tools.Port(t), tools.Port(t), tools.Port(t)

	// nginx with the operator's rendered configuration.
	spec := v1beta1.NginxOperatorSpec{
		Ports:   []v1beta1.Port{{Name: "http", ContainerPort: int32(httpPort)}},
		Metrics: v1beta1.MetricsSpec{Enabled: true},
	}
	paths := render.Paths{Temp: dir, Content: filepath.Join(dir, "html"), Files: filepath.Join(dir, "files"), MimeTypes: filepath.Join(dir, "mime.types")}
	tools.Must(t, os.MkdirAll(paths.Content, 0o755))
	tools.Must(t, os.WriteFile(paths.MimeTypes, []byte("types {\n    text/html html;\n}\n"), 0o644))
	tools.Must(t, os.WriteFile(filepath.Join(paths.Content, "index.html"), []byte("hello\n"), 0o644))
	cfg, err := render.Config(validationtest.Spec(t, spec), render.Options{Paths: paths, Namespace: "team-a", HealthPort: healthPort, StubStatusPort: stubPort})
	tools.Must(t, err)
	if !strings.Contains(string(cfg), fmt.Sprintf("listen 127.0.0.1:%d;", stubPort)) {
		t.Fatalf("stub_status does not listen on loopback only:\n%s", cfg)
	}
	// The configuration in a directory of its own, as in a pod: the
	// reloader watches the directory of its -config, and Prometheus writes
	// into dir.
	confDir := filepath.Join(dir, "conf")
	tools.Must(t, os.Mkdir(confDir, 0o755))
	nginxConf := filepath.Join(confDir, "nginx.conf")
	tools.Must(t, os.WriteFile(nginxConf, cfg, 0o644))
	// nginx under the reloader, which serves its metrics on loopback.
	proc := tools.Start(t, "nginx-reloader", reloaderBin,
		append([]string{fmt.Sprintf("-listen-address=127.0.0.1:%d", reloaderPort), "-config=" + nginxConf, "--", nginxBin},
			tools.NginxArgs(dir, nginxConf, "-g", "daemon off;")...)...)

	// The Debian exporter (0.11) exits when stub_status does not answer at
	// its start: wait for nginx first.
	tools.Eventually(t, 20*time.Second, "nginx's stub_status answers on loopback", func() error {
		if err := proc.Exited(); err != nil {
			return &tools.Stop{Err: err}
		}
		resp, err := http.Get(nginx.StubStatusURI(stubPort))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("stub_status: %s", resp.Status)
		}
		return nil
	})

	// The exporter with the sidecar's arguments, on loopback.
	tools.Start(t, "exporter", exporterBin,
		"--nginx.scrape-uri="+nginx.StubStatusURI(stubPort),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", exporterPort))

	// The generated scrape configuration, discovery replaced by a static target.
	mon := &v1beta1.NginxMonitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"},
		Spec: v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{
			Interval: "1s", ScrapeTimeout: "1s",
			MetricRelabelings: []v1beta1.RelabelConfig{{SourceLabels: []string{"__name__"}, Regex: "nginx_connections_waiting", Action: "drop"}},
		}},
	}
	generated, err := Build(validationtest.NginxMonitor(t, mon), NewSelection([]Instance{{Namespace: "team-a", Name: "www", MetricsEnabled: true}}), Credentials{}, Options{})
	tools.Must(t, err)
	var scrapeConfigs []map[string]any
	tools.Must(t, yaml.Unmarshal(generated, &scrapeConfigs))
	// Each job's static target: the port its relabelling keeps.
	targets := map[string]int{JobName("team-a", "web"): exporterPort, ReloaderJobName("team-a", "web"): reloaderPort}
	if len(scrapeConfigs) != len(targets) {
		t.Fatalf("want the exporter's and the reloader's scrape configs, got:\n%s", generated)
	}
	for _, sc := range scrapeConfigs {
		port, ok := targets[fmt.Sprint(sc["job_name"])]
		if !ok {
			t.Fatalf("unexpected job %v in:\n%s", sc["job_name"], generated)
		}
		delete(sc, "kubernetes_sd_configs")
		delete(sc, "relabel_configs") // they select among discovered endpoints; the static target is the selection
		sc["static_configs"] = []any{map[string]any{
			"targets": []any{fmt.Sprintf("127.0.0.1:%d", port)},
			"labels":  map[string]any{LabelNamespace: "team-a", LabelInstance: "www", LabelPod: "www-0"},
		}}
	}
	promCfg, err := yaml.Marshal(map[string]any{"scrape_configs": scrapeConfigs})
	tools.Must(t, err)
	promFile := filepath.Join(dir, "prometheus.yml")
	tools.Must(t, os.WriteFile(promFile, promCfg, 0o644))
	tools.Start(t, "prometheus", prometheusBin,
		"--config.file="+promFile,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort))

	// Prometheus' answer for nginx_up, polled until the first scrapes are in.
	ctx := context.Background()
	prom := tools.NewPrometheus(t, fmt.Sprintf("http://127.0.0.1:%d", promPort), nil)
	query := func(q string) model.Vector {
		v, err := prom.Query(ctx, q)
		if err != nil {
			t.Fatalf("query %s: %v", q, err)
		}
		return v
	}
	var up model.Vector
	tools.Eventually(t, 45*time.Second, "nginx_up is 1", func() error {
		v, err := prom.Query(ctx, "nginx_up")
		if err != nil {
			return err
		}
		if up = v; len(up) != 1 || up[0].Value != 1 {
			return fmt.Errorf("nginx_up = %v, want one sample with value 1\nprometheus.yml:\n%s", up, promCfg)
		}
		return nil
	})
	want := map[string]string{"job": JobName("team-a", "web"), LabelNamespace: "team-a", LabelInstance: "www", LabelPod: "www-0"}
	for k, v := range want {
		if string(up[0].Metric[model.LabelName(k)]) != v {
			t.Errorf("nginx_up label %s = %q, want %q (all: %v)", k, up[0].Metric[model.LabelName(k)], v, up[0].Metric)
		}
	}
	if got := query("nginx_connections_accepted"); len(got) != 1 {
		t.Errorf("nginx_connections_accepted: %+v", got)
	}
	if got := query("nginx_connections_waiting"); len(got) != 0 {
		t.Errorf("the metric relabeling should drop nginx_connections_waiting: %+v", got)
	}
	t.Logf("nginx_up %s %v", up[0].Value, up[0].Metric)

	// The reloader's job: nginx loaded the rendered configuration, and
	// Prometheus has it under the reloader's job with the same labels.
	var info model.Vector
	tools.Eventually(t, 45*time.Second, "reloader_config_info is in", func() error {
		if err := proc.Exited(); err != nil {
			return &tools.Stop{Err: err}
		}
		v, err := prom.Query(ctx, "reloader_config_info")
		if err != nil {
			return err
		}
		if info = v; len(info) != 1 {
			return fmt.Errorf("reloader_config_info = %v, want one series", info)
		}
		return nil
	})
	want[string(model.JobLabel)] = ReloaderJobName("team-a", "web")
	want["hash"] = reloader.ConfigHash(cfg)
	for k, v := range want {
		if string(info[0].Metric[model.LabelName(k)]) != v {
			t.Errorf("reloader_config_info label %s = %q, want %q (all: %v)", k, info[0].Metric[model.LabelName(k)], v, info[0].Metric)
		}
	}
	ok := query("reloader_last_reload_successful")
	if len(ok) != 1 || ok[0].Value != 1 || string(ok[0].Metric[model.JobLabel]) != ReloaderJobName("team-a", "web") {
		t.Errorf("reloader_last_reload_successful = %v, want 1 in the reloader's job", ok)
	}
	// Each job has only its own target's series.
	if got := query(fmt.Sprintf(`count by (job) ({job=%q, __name__=~"nginx_.+"})`, ReloaderJobName("team-a", "web"))); len(got) != 0 {
		t.Errorf("the reloader's job has nginx_* series: %v", got)
	}
	if got := query(fmt.Sprintf(`count by (job) ({job=%q, __name__=~"reloader_.+"})`, JobName("team-a", "web"))); len(got) != 0 {
		t.Errorf("the exporter's job has reloader_* series: %v", got)
	}
	t.Logf("reloader_config_info %v", info[0].Metric)
}
