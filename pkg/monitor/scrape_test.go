package monitor

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type goldenCase struct {
	monitor   v1beta1.NginxMonitor
	instances []Instance
	creds     Credentials
}

// mon is a monitor as the apiserver stores it and the controller builds
// from: with the CRD's defaults. A spec the CRD refuses panics, failing the
// test that built it.
func mon(ns, name string, spec v1beta1.NginxMonitorSpec) v1beta1.NginxMonitor {
	m, errs := validation.NginxMonitor(context.Background(), &v1beta1.NginxMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec})
	if len(errs) > 0 {
		panic(fmt.Sprintf("the CRD refuses the test's monitor %s/%s: %v", ns, name, errs.ToAggregate()))
	}
	return *m
}

func sel(key string) *corev1.SecretKeySelector {
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "scrape-auth"}, Key: key}
}

// goldens are representative monitors; each has a golden scrape-configs.yaml.
var goldens = map[string]goldenCase{
	"own-namespace": {
		monitor: mon("team-a", "web", v1beta1.NginxMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		}),
		instances: []Instance{
			{Namespace: "team-a", Name: "www", Labels: map[string]string{"team": "a"}, MetricsEnabled: true},
			{Namespace: "team-a", Name: "gateway", Labels: map[string]string{"team": "a"}, MetricsEnabled: true},
			{Namespace: "team-a", Name: "no-metrics", Labels: map[string]string{"team": "a"}},
		},
	},
	"several-namespaces-with-target-labels-and-relabelings": {
		monitor: mon("monitoring", "all-teams", v1beta1.NginxMonitorSpec{
			NamespaceSelector: v1beta1.NamespaceSelector{MatchNames: []string{"team-a", "team-b"}},
			Endpoint: v1beta1.Endpoint{
				Interval: "15s", ScrapeTimeout: "5s", Path: "/metrics", HonorLabels: true, SampleLimit: 5000,
				Relabelings: []v1beta1.RelabelConfig{
					{SourceLabels: []string{"__meta_kubernetes_pod_node_name"}, TargetLabel: "node", Action: "replace"},
					{Regex: "__meta_kubernetes_pod_label_(.+)", Action: "labelmap"},
				},
				MetricRelabelings: []v1beta1.RelabelConfig{
					{SourceLabels: []string{"__name__"}, Regex: "nginx_connections_(reading|writing)", Action: "drop"},
				},
			},
			TargetLabels: []string{"team", "app.kubernetes.io/part-of"},
		}),
		instances: []Instance{
			{Namespace: "team-b", Name: "shop", Labels: map[string]string{"team": "b", "app.kubernetes.io/part-of": "store$1"}, MetricsEnabled: true},
			{Namespace: "team-a", Name: "www", Labels: map[string]string{"team": "a"}, MetricsEnabled: true},
			{Namespace: "team-a", Name: "a.b", Labels: map[string]string{}, MetricsEnabled: true},
		},
	},
	"https-with-basic-auth": {
		monitor: mon("team-a", "secure", v1beta1.NginxMonitorSpec{
			Endpoint: v1beta1.Endpoint{
				Scheme:    "https",
				BasicAuth: &v1beta1.BasicAuth{Username: *sel("username"), Password: *sel("password")},
				TLSConfig: &v1beta1.TLSConfig{CA: sel("ca.crt"), ServerName: "www.team-a.svc"},
			},
		}),
		instances: []Instance{{Namespace: "team-a", Name: "www", MetricsEnabled: true}},
		creds:     Credentials{Username: "prometheus", Password: "s3cr3t", CA: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
	},
	"no-matching-instances": {
		monitor: mon("team-a", "nothing", v1beta1.NginxMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "nobody"}},
		}),
	},
}

// checkGolden compares got with the golden file, which -update rewrites.
func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/monitor -run Golden -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", golden, diff)
	}
}

func TestBuildMatchesGoldenFiles(t *testing.T) {
	for name, tc := range goldens {
		t.Run(name, func(t *testing.T) {
			got, err := Build(&tc.monitor, NewSelection(tc.instances), tc.creds, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", name+".yaml"), got)
		})
	}
}

// TestGoldenScrapeConfigsPassPromtool loads every golden file into a
// prometheus.yml, as its scrape_configs (the file is a list of scrape_config
// entries, as prometheus-operator's additionalScrapeConfigs expects) and, in
// its FileForm, through scrape_config_files, and
// checks it with the real promtool (built with Kubernetes discovery).
func TestGoldenScrapeConfigsPassPromtool(t *testing.T) {
	promtool := tools.Installed(t, tools.InstallPrometheus, "promtool")
	dir := t.TempDir()
	for name := range goldens {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			cfg := "global: {scrape_interval: 1m}\nscrape_configs:\n" + indent(string(data))
			checkPromtool(t, promtool, filepath.Join(dir, name+".inline.yml"), cfg)
			file := filepath.Join(dir, name+".scrape-config-file.yaml")
			if err := os.WriteFile(file, FileForm(data), 0o644); err != nil {
				t.Fatal(err)
			}
			checkPromtool(t, promtool, filepath.Join(dir, name+".files.yml"), "scrape_config_files: ["+file+"]\n")
		})
	}
}

func checkPromtool(t *testing.T, promtool, path, cfg string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "config", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool check config %s: %v\n%s\nconfig:\n%s", path, err, out, cfg)
	}
}

// indent nests a YAML list under a key: "[]" stays an empty flow list.
func indent(list string) string {
	if strings.TrimSpace(list) == "[]" {
		return "  []\n"
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(list, "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	return b.String()
}

func TestValidateRefusesWhatPrometheusWould(t *testing.T) {
	for name, tc := range map[string]struct {
		endpoint     v1beta1.Endpoint
		targetLabels []string
		want         string
	}{
		"timeout longer than interval": {endpoint: v1beta1.Endpoint{Interval: "10s", ScrapeTimeout: "1m"}, want: "longer than endpoint.interval"},
		"bad duration":                 {endpoint: v1beta1.Endpoint{Interval: "10 seconds"}, want: "endpoint.interval"},
		"bad regex":                    {endpoint: v1beta1.Endpoint{Relabelings: []v1beta1.RelabelConfig{{Regex: "(a", Action: "keep", SourceLabels: []string{"a"}}}}, want: "endpoint.relabelings[0].regex"},
		"reserved target label":        {targetLabels: []string{"namespace"}, want: "targetLabels"},
		"clashing target labels":       {targetLabels: []string{"a.b", "a/b"}, want: "both become the label"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Validate(&v1beta1.NginxMonitorSpec{Endpoint: tc.endpoint, TargetLabels: tc.targetLabels})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if err := Validate(&v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{Interval: "1m", ScrapeTimeout: "1m"}}); err != nil {
		t.Errorf("timeout equal to the interval: %v", err)
	}
}

func TestSecretNameIsDNSSafeForLongMonitorNames(t *testing.T) {
	name := SecretName(strings.Repeat("a", 253))
	if len(name) > 63 || !strings.HasSuffix(name, "-scrape-config") {
		t.Errorf("SecretName: %q (%d chars)", name, len(name))
	}
	if SecretName("web") != "web-scrape-config" {
		t.Errorf("SecretName(web) = %q", SecretName("web"))
	}
}
