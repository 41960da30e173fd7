package operator

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The NetworkPolicies admit the operator's pods by PodLabels: the
// Deployment's pods must carry them.
func TestPodLabelsAreTheDeploymentsPodLabels(t *testing.T) {
	data, err := os.ReadFile("../../config/manager/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k := range PodLabels() {
		if v, ok := d.Spec.Template.Labels[k]; ok {
			got[k] = v
		}
	}
	if diff := cmp.Diff(PodLabels(), got); diff != "" {
		t.Errorf("config/manager/deployment.yaml's pod labels lack PodLabels (-want +got):\n%s", diff)
	}
}
