package render_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// Every YAML example of Documentation/nginxoperator.md, a whole object or
// just its spec, is one the CRD admits and the renderer renders: the
// documentation cannot drift from the API.
func TestDocumentedNginxOperatorExamplesAreAdmittedAndRender(t *testing.T) {
	doc, err := os.ReadFile("../../../Documentation/nginxoperator.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := yamlBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 2 {
		t.Fatalf("found %d YAML examples, want the overview's and the routing section's", len(blocks))
	}
	for i, b := range blocks {
		text := string(b[1])
		if !strings.HasPrefix(text, "spec:") && !strings.Contains(text, "kind: NginxOperator\n") {
			continue
		}
		obj := &v1beta1.NginxOperator{}
		if err := yaml.UnmarshalStrict(b[1], obj); err != nil {
			t.Errorf("example %d does not decode as an NginxOperator: %v\n%s", i+1, err, text)
			continue
		}
		obj.Name, obj.Namespace = "docs", "team-a"
		admitted := validationtest.NginxOperator(t, obj)
		if _, err := render.Config(&admitted.Spec, render.Options{Paths: render.PodPaths(), Namespace: "team-a"}); err != nil {
			t.Errorf("example %d does not render: %v", i+1, err)
		}
	}
}
