package monitor

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	yaml "go.yaml.in/yaml/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// everyExporterSetting is a monitor that sets every endpoint field: none of
// them but the interval and the timeout may reach the reloader's job.
func everyExporterSetting() v1beta1.NginxMonitor {
	return mon("monitoring", "all", v1beta1.NginxMonitorSpec{
		NamespaceSelector: v1beta1.NamespaceSelector{MatchNames: []string{"team-a", "team-b"}},
		Endpoint: v1beta1.Endpoint{
			Interval: "15s", ScrapeTimeout: "5s", Path: "/exporter/metrics", Scheme: "https", HonorLabels: true, SampleLimit: 2,
			BasicAuth: &v1beta1.BasicAuth{Username: *sel("username"), Password: *sel("password")},
			TLSConfig: &v1beta1.TLSConfig{CA: sel("ca.crt"), ServerName: "exporter.svc", InsecureSkipVerify: true},
			Relabelings: []v1beta1.RelabelConfig{
				{SourceLabels: []string{"__meta_kubernetes_pod_node_name"}, TargetLabel: "node", Action: "replace"},
				{TargetLabel: "__metrics_path__", Replacement: ptr.To("/elsewhere"), Action: "replace"},
			},
			MetricRelabelings: []v1beta1.RelabelConfig{{SourceLabels: []string{"__name__"}, Regex: "nginx_.+", Action: "keep"}},
		},
		TargetLabels: []string{"team"},
	})
}

var everyExporterSettingInstances = []Instance{
	{Namespace: "team-b", Name: "shop", Labels: map[string]string{"team": "b"}, MetricsEnabled: true},
	{Namespace: "team-a", Name: "www", Labels: map[string]string{"team": "a"}, MetricsEnabled: true},
	{Namespace: "team-a", Name: "quiet", Labels: map[string]string{"team": "a"}},
}

// TestReloaderJobScrapesPlainHTTPWithOnlyTheIntervalAndTimeoutOfTheEndpoint:
// the second scrape_config Build writes scrapes the reloader port of the
// same pods as the exporter's job, with the same operator relabelling (the
// same selection, namespace, instance, pod and targetLabels), at the same
// interval and timeout, over plain HTTP on /metrics, and with none of the
// exporter's scheme, path, credentials, TLS, honorLabels, sampleLimit,
// relabelings or metric relabelings.
func TestReloaderJobScrapesPlainHTTPWithOnlyTheIntervalAndTimeoutOfTheEndpoint(t *testing.T) {
	m := everyExporterSetting()
	creds := Credentials{Username: "prometheus", Password: "s3cr3t", CA: "ca"}
	for _, role := range []string{"endpointslice", "endpoints"} {
		t.Run(role, func(t *testing.T) {
			data, err := Build(&m, NewSelection(everyExporterSettingInstances), creds, Options{Role: role, KubeconfigFile: "/kubeconfig"})
			if err != nil {
				t.Fatal(err)
			}
			var jobs []scrapeConfig
			if err := yaml.Unmarshal(data, &jobs); err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 2 {
				t.Fatalf("%d scrape configs, want the exporter's and the reloader's:\n%s", len(jobs), data)
			}
			exporter, reloader := jobs[0], jobs[1]
			if exporter.JobName != JobName("monitoring", "all") || exporter.Scheme != "https" || exporter.BasicAuth == nil || exporter.TLSConfig == nil {
				t.Errorf("the exporter's job lost its settings:\n%s", data)
			}
			// The operator's rules of the exporter's job, without the user's
			// relabelings that follow them, keeping the reloader's port.
			operatorRules := slices.Clone(exporter.RelabelConfigs[:len(exporter.RelabelConfigs)-len(m.Spec.Endpoint.Relabelings)])
			if operatorRules[0].Regex != MetricsPortName || operatorRules[0].Action != "keep" {
				t.Fatalf("the exporter's first rule %+v does not keep its port", operatorRules[0])
			}
			operatorRules[0].Regex = ReloaderPortName
			want := scrapeConfig{
				JobName:             ReloaderJobName("monitoring", "all"),
				ScrapeInterval:      "15s",
				ScrapeTimeout:       "5s",
				MetricsPath:         "/metrics",
				Scheme:              "http",
				KubernetesSDConfigs: exporter.KubernetesSDConfigs,
				RelabelConfigs:      operatorRules,
			}
			if diff := cmp.Diff(want, reloader); diff != "" {
				t.Errorf("the reloader's scrape config (-want +got):\n%s", diff)
			}
			teams := 0
			for _, r := range reloader.RelabelConfigs {
				if r.TargetLabel == "team" {
					teams++
				}
			}
			if teams != 2 {
				t.Errorf("%d team target label rules in the reloader's job, want one per scraped instance", teams)
			}
		})
	}
}

// TestReloaderEndpointOfTheServiceMonitorIsPlainHTTPWithTheSameLabels is
// the ServiceMonitor counterpart: a second endpoint on port reloader, with
// the first's operator relabelings but its own job, the interval and
// timeout, and nothing else of the monitor's endpoint.
func TestReloaderEndpointOfTheServiceMonitorIsPlainHTTPWithTheSameLabels(t *testing.T) {
	m := everyExporterSetting()
	sm := BuildServiceMonitor(&m, NewSelection(everyExporterSettingInstances))
	if len(sm.Spec.Endpoints) != 2 {
		t.Fatalf("endpoints %+v, want the exporter's and the reloader's", sm.Spec.Endpoints)
	}
	exporter, reloader := sm.Spec.Endpoints[0], sm.Spec.Endpoints[1]
	if exporter.Port != MetricsPortName || exporter.BasicAuth == nil || exporter.TLSConfig == nil || len(exporter.MetricRelabelConfigs) != 1 {
		t.Errorf("the exporter's endpoint lost its settings: %+v", exporter)
	}
	operatorRules := slices.Clone(exporter.RelabelConfigs[:len(exporter.RelabelConfigs)-len(m.Spec.Endpoint.Relabelings)])
	for i, r := range operatorRules {
		if r.TargetLabel == "job" {
			operatorRules[i].Replacement = ptr.To(ReloaderJobName("monitoring", "all"))
		}
	}
	want := monitoringv1.Endpoint{
		Port:           ReloaderPortName,
		Path:           "/metrics",
		Scheme:         ptr.To(monitoringv1.Scheme("http")),
		Interval:       "15s",
		ScrapeTimeout:  "5s",
		RelabelConfigs: operatorRules,
	}
	if diff := cmp.Diff(want, reloader); diff != "" {
		t.Errorf("the reloader's endpoint (-want +got):\n%s", diff)
	}
	if err := reloader.Validate(); err != nil {
		t.Errorf("endpoint validation: %v", err)
	}
}

// TestJobNamesAreDistinctPerMonitorAndKind: Prometheus refuses two
// scrape_configs with one job_name, and the mixin tells exporter jobs from
// reloader jobs by name, so no monitor's reloader job may equal another's
// exporter job, whatever the names (which hold no "/").
func TestJobNamesAreDistinctPerMonitorAndKind(t *testing.T) {
	monitors := []metav1.ObjectMeta{
		{Namespace: "team-a", Name: "web"},
		{Namespace: "team-a", Name: "reloader"},
		{Namespace: "team-a", Name: "web.reloader"},
		{Namespace: "reloader", Name: "web"},
		{Namespace: "web", Name: "reloader"},
		{Namespace: "team-b", Name: "web"},
	}
	seen := map[string]string{}
	for _, m := range monitors {
		for kind, job := range map[string]string{"exporter": JobName(m.Namespace, m.Name), "reloader": ReloaderJobName(m.Namespace, m.Name)} {
			who := kind + " job of " + m.Namespace + "/" + m.Name
			if other, ok := seen[job]; ok {
				t.Errorf("%s and %s are both %q", other, who, job)
			}
			seen[job] = who
		}
	}
}
