package monitor

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

// TestScrapeConfigAndServiceMonitorListInstancesInTheSelectionsOrder: both
// builders read one Selection, ordered by namespace then name, so a
// namespace that prefixes another ("team" and "team-a") comes first in both,
// as it does in status.instances.
func TestScrapeConfigAndServiceMonitorListInstancesInTheSelectionsOrder(t *testing.T) {
	m := validationtest.NginxMonitor(t, &v1beta1.NginxMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "all"}})
	sel := NewSelection([]Instance{
		{Namespace: "team-a", Name: "www", MetricsEnabled: true},
		{Namespace: "team", Name: "www", MetricsEnabled: true},
		{Namespace: "team", Name: "off"},
		{Namespace: "team", Name: "api", MetricsEnabled: true},
	})
	var all []string
	for _, in := range sel.All() {
		all = append(all, in.Namespace+"/"+in.Name)
	}
	if got := strings.Join(all, ","); got != "team/api,team/off,team/www,team-a/www" {
		t.Errorf("selection order %s", got)
	}
	if got := strings.Join(sel.Namespaces(), ","); got != "team,team-a" {
		t.Errorf("namespaces %s", got)
	}

	data, err := Build(m, sel, Credentials{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `regex: team;api;api|team;www;www|team-a;www;www`; !strings.Contains(string(data), want) {
		t.Errorf("scrape configs lack %q:\n%s", want, data)
	}
	if want := "names:\n      - team\n      - team-a\n"; !strings.Contains(string(data), want) {
		t.Errorf("scrape configs lack the namespaces in order %q:\n%s", want, data)
	}
	sm := BuildServiceMonitor(m, sel)
	if got := sm.Spec.Endpoints[0].RelabelConfigs[0].Regex; got != "team;api|team;www|team-a;www" {
		t.Errorf("ServiceMonitor keep regex %s", got)
	}
	if got := strings.Join(sm.Spec.NamespaceSelector.MatchNames, ","); got != "team,team-a" {
		t.Errorf("ServiceMonitor namespaces %s", got)
	}
	if got := strings.Join(sm.Spec.Selector.MatchExpressions[0].Values, ","); got != "api,www" {
		t.Errorf("ServiceMonitor instance names %s, want each once, sorted", got)
	}
}
