package monitor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

func TestServiceMonitorSelectsTheSameInstancesAsTheScrapeConfig(t *testing.T) {
	m := &v1beta1.NginxMonitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "all"},
		Spec: v1beta1.NginxMonitorSpec{
			Endpoint:     v1beta1.Endpoint{Interval: "15s", SampleLimit: 100},
			TargetLabels: []string{"team"},
		},
	}
	m = validationtest.NginxMonitor(t, m)
	sm := BuildServiceMonitor(m, NewSelection([]Instance{
		{Namespace: "team-b", Name: "shop", Labels: map[string]string{"team": "b"}, MetricsEnabled: true},
		{Namespace: "team-a", Name: "www", Labels: map[string]string{"team": "a"}, MetricsEnabled: true},
		{Namespace: "team-a", Name: "quiet", MetricsEnabled: false},
	}))
	if sm.Name != "all" || sm.Namespace != "monitoring" || sm.Kind != "ServiceMonitor" {
		t.Errorf("meta: %+v %+v", sm.TypeMeta, sm.ObjectMeta)
	}
	if got := strings.Join(sm.Spec.NamespaceSelector.MatchNames, ","); got != "team-a,team-b" {
		t.Errorf("namespaces %s", got)
	}
	exprs := sm.Spec.Selector.MatchExpressions
	if len(exprs) != 1 || strings.Join(exprs[0].Values, ",") != "shop,www" {
		t.Errorf("instance selector %+v: want shop and www only", exprs)
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Port != MetricsPortName || ep.Interval != "15s" || sm.Spec.SampleLimit == nil || *sm.Spec.SampleLimit != 100 {
		t.Errorf("endpoint %+v sampleLimit %v", ep, sm.Spec.SampleLimit)
	}
	if keep := ep.RelabelConfigs[0]; keep.Action != "keep" || keep.Regex != "team-a;www|team-b;shop" {
		t.Errorf("first relabeling %+v: want keeping exactly the client Services", keep)
	}
	teams := 0
	for _, r := range ep.RelabelConfigs {
		if r.TargetLabel == "team" {
			teams++
		}
	}
	if teams != 2 {
		t.Errorf("%d team target label rules, want 2", teams)
	}

}

// TestServiceMonitorAppliesOnlyTheTLSFieldsTheMonitorSets: prometheus-operator's
// type holds tlsConfig.ca and .cert by value; an unset one is not sent.
func TestServiceMonitorAppliesOnlyTheTLSFieldsTheMonitorSets(t *testing.T) {
	m := &v1beta1.NginxMonitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "secure"},
		Spec: v1beta1.NginxMonitorSpec{Endpoint: v1beta1.Endpoint{Scheme: "https", TLSConfig: &v1beta1.TLSConfig{
			CA: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}, Key: "ca.crt"},
		}}},
	}
	obj, err := serviceMonitorApplyObject(BuildServiceMonitor(validationtest.NginxMonitor(t, m), Selection{}))
	if err != nil {
		t.Fatal(err)
	}
	endpoints, _, err := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	if err != nil || len(endpoints) != 2 {
		t.Fatalf("endpoints %v: %v", endpoints, err)
	}
	tls, _ := endpoints[0].(map[string]any)["tlsConfig"].(map[string]any)
	want := map[string]any{"ca": map[string]any{"secret": map[string]any{"name": "tls", "key": "ca.crt"}}}
	if diff := cmp.Diff(want, tls); diff != "" {
		t.Errorf("tlsConfig (-want +got):\n%s", diff)
	}
	if scheme := endpoints[0].(map[string]any)["scheme"]; scheme != "https" {
		t.Errorf("scheme %v", scheme)
	}
	// The reloader's endpoint is plain HTTP: the exporter's TLS is not its.
	reloaderEndpoint := endpoints[1].(map[string]any)
	if reloaderEndpoint["port"] != ReloaderPortName || reloaderEndpoint["scheme"] != "http" || reloaderEndpoint["tlsConfig"] != nil {
		t.Errorf("reloader endpoint %v, want port reloader over plain http", reloaderEndpoint)
	}
}
