package monitor

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// TestBuildServiceMonitorMatchesGoldenFiles renders, for every scrape
// configuration golden case, the ServiceMonitor as the operator applies it
// (testdata/servicemonitor/<case>.yaml; rewrite with -update).
func TestBuildServiceMonitorMatchesGoldenFiles(t *testing.T) {
	for name, tc := range goldens {
		t.Run(name, func(t *testing.T) {
			obj, err := serviceMonitorApplyObject(BuildServiceMonitor(&tc.monitor, NewSelection(tc.instances)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := yaml.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "servicemonitor", name+".yaml"), got)
		})
	}
}

// scrapeConfigJobs are the job_names of the scrape_configs Build writes, in order.
func scrapeConfigJobs(t *testing.T, mon *v1beta1.NginxMonitor, sel Selection) []string {
	t.Helper()
	data, err := Build(mon, sel, Credentials{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		JobName string `json:"job_name"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatalf("scrape configs %q: %v", data, err)
	}
	var jobs []string
	for _, sc := range list {
		jobs = append(jobs, sc.JobName)
	}
	return jobs
}

// TestServiceMonitorTargetsGetTheScrapeConfigJob: prometheus-operator sets a
// ServiceMonitor target's job to its Service's name, then applies the
// endpoint's relabelings in order. Each endpoint's rules must therefore set
// job to the job name of the matching scrape configuration (the exporter's
// JobName, the reloader's ReloaderJobName), unconditionally (no source label
// that could be missing, no regex that could fail), before the user's
// relabelings (which, as in the scrape configuration, may still change the
// exporter's), and in a form prometheus-operator validates. Two monitors of
// one instance get two pairs of jobs.
func TestServiceMonitorTargetsGetTheScrapeConfigJob(t *testing.T) {
	instances := []Instance{{Namespace: "team-a", Name: "www", Labels: map[string]string{"team": "a"}, MetricsEnabled: true}}
	userRule := v1beta1.RelabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_node_name"}, TargetLabel: "node", Action: "replace"}
	for name, tc := range map[string]struct {
		monitor v1beta1.NginxMonitor
		sel     Selection
	}{
		"own namespace":             {monitor: mon("team-a", "web", v1beta1.NginxMonitorSpec{}), sel: NewSelection(instances)},
		"another monitor, same www": {monitor: mon("monitoring", "all", v1beta1.NginxMonitorSpec{NamespaceSelector: v1beta1.NamespaceSelector{Any: true}}), sel: NewSelection(instances)},
		"with user relabelings": {
			monitor: mon("team-a", "relabelled", v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{Relabelings: []v1beta1.RelabelConfig{userRule}}}),
			sel:     NewSelection(instances),
		},
		"selecting nothing": {monitor: mon("team-a", "nothing", v1beta1.NginxMonitorSpec{})},
	} {
		t.Run(name, func(t *testing.T) {
			want := []string{JobName(tc.monitor.Namespace, tc.monitor.Name), ReloaderJobName(tc.monitor.Namespace, tc.monitor.Name)}
			if len(tc.sel.Scraped()) > 0 {
				if got := scrapeConfigJobs(t, &tc.monitor, tc.sel); !slices.Equal(got, want) {
					t.Fatalf("scrape configuration jobs %q, want %q", got, want)
				}
			}
			endpoints := BuildServiceMonitor(&tc.monitor, tc.sel).Spec.Endpoints
			if len(endpoints) != len(want) || endpoints[0].Port != MetricsPortName || endpoints[1].Port != ReloaderPortName {
				t.Fatalf("endpoints %+v, want the exporter's then the reloader's", endpoints)
			}
			for e, ep := range endpoints {
				var jobRules []int
				for i, r := range ep.RelabelConfigs {
					if r.TargetLabel == "job" {
						jobRules = append(jobRules, i)
					}
				}
				if len(jobRules) != 1 {
					t.Fatalf("endpoint %s: %d rules set job, want 1: %+v", ep.Port, len(jobRules), ep.RelabelConfigs)
				}
				i := jobRules[0]
				r := ep.RelabelConfigs[i]
				if r.Action != "replace" || len(r.SourceLabels) != 0 || r.Regex != "" || r.Replacement == nil || *r.Replacement != want[e] {
					t.Errorf("endpoint %s: job rule %+v, want an unconditional replace with %q", ep.Port, r, want[e])
				}
				if user := len(tc.monitor.Spec.Endpoint.Relabelings); user > 0 && ep.Port == MetricsPortName {
					if got := ep.RelabelConfigs[len(ep.RelabelConfigs)-user:]; got[0].TargetLabel != userRule.TargetLabel || i >= len(ep.RelabelConfigs)-user {
						t.Errorf("the user's relabelings must come last, after the job rule: %+v", ep.RelabelConfigs)
					}
				}
				if err := ep.Validate(); err != nil {
					t.Errorf("endpoint %s validation: %v", ep.Port, err)
				}
			}
		})
	}
	a := BuildServiceMonitor(&[]v1beta1.NginxMonitor{mon("team-a", "web", v1beta1.NginxMonitorSpec{})}[0], NewSelection(instances))
	b := BuildServiceMonitor(&[]v1beta1.NginxMonitor{mon("monitoring", "all", v1beta1.NginxMonitorSpec{})}[0], NewSelection(instances))
	if jobOf(a) == jobOf(b) {
		t.Errorf("two monitors of one instance share the job %q", jobOf(a))
	}
}

func jobOf(sm *monitoringv1.ServiceMonitor) string {
	for _, r := range sm.Spec.Endpoints[0].RelabelConfigs {
		if r.TargetLabel == "job" && r.Replacement != nil {
			return *r.Replacement
		}
	}
	return ""
}

// TestServiceMonitorSelectingNothingIsValidAndMatchesNoService: a monitor
// that scrapes nothing (no instance, or none with metrics) gets a
// ServiceMonitor whose selector Kubernetes' selector validation accepts
// (prometheus-operator refuses the ServiceMonitor as InvalidConfiguration
// otherwise), that survives the string form prometheus-operator's role
// selector mechanism hands to Kubernetes discovery, and that matches no
// Service: not the operator's for any instance name, not one with an empty
// or no instance label.
func TestServiceMonitorSelectingNothingIsValidAndMatchesNoService(t *testing.T) {
	serviceLabels := func(instance string) labels.Set {
		l := labels.Set{naming.LabelManagedBy: naming.ManagedBy, naming.LabelName: layout.AppName, naming.LabelComponent: layout.Component}
		if instance != "" {
			l[naming.LabelInstance] = instance
		}
		return l
	}
	services := map[string]labels.Set{
		"client Service of www":   serviceLabels("www"),
		"client Service of -":     serviceLabels("-"),
		"empty instance label":    labels.Merge(serviceLabels(""), labels.Set{naming.LabelInstance: ""}),
		"no instance label":       serviceLabels(""),
		"an unrelated Service":    {"app": "web"},
		"a Service with no label": {},
	}
	m := mon("team-a", "nothing", v1beta1.NginxMonitorSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "nobody"}}})
	for name, sel := range map[string]Selection{
		"no instance":              {},
		"no instance with metrics": NewSelection([]Instance{{Namespace: "team-a", Name: "www"}}),
	} {
		t.Run(name, func(t *testing.T) {
			sm := BuildServiceMonitor(&m, sel)
			selector, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
			if err != nil {
				t.Fatalf("selector %+v is refused: %v", sm.Spec.Selector, err)
			}
			if selector.Empty() {
				t.Fatal("the selector is empty: it would select every Service")
			}
			reparsed, err := labels.Parse(selector.String())
			if err != nil {
				t.Fatalf("the selector's string form %q does not parse: %v", selector.String(), err)
			}
			for svc, l := range services {
				if selector.Matches(l) || reparsed.Matches(l) {
					t.Errorf("the selector %q matches the %s", selector, svc)
				}
			}
			for _, e := range sm.Spec.Selector.MatchExpressions {
				for _, v := range e.Values {
					if v == "-" || v == "" {
						t.Errorf("selector value %q", v)
					}
				}
			}
			if got := sm.Spec.NamespaceSelector.MatchNames; !slices.Equal(got, []string{"team-a"}) {
				t.Errorf("namespaces %v, want the monitor's only", got)
			}
			ep := sm.Spec.Endpoints[0]
			keep := ep.RelabelConfigs[0]
			if keep.Action != "keep" || keep.Regex == "" || strings.Contains(keep.Regex, ";") {
				t.Errorf("first relabeling %+v: want a keep rule that matches no <namespace>;<service>", keep)
			}
			if err := ep.Validate(); err != nil {
				t.Errorf("endpoint validation: %v", err)
			}
		})
	}
	// The same selector with an instance selected is an In over its name:
	// it matches its client Service, and nothing above but that.
	sm := BuildServiceMonitor(&m, NewSelection([]Instance{{Namespace: "team-a", Name: "www", MetricsEnabled: true}}))
	selector, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	for svc, l := range services {
		if got, want := selector.Matches(l), svc == "client Service of www"; got != want {
			t.Errorf("selecting www: matches the %s: %v, want %v", svc, got, want)
		}
	}
}
