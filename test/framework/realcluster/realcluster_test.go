package realcluster

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

func TestParseRefsReadsHackImagesOutput(t *testing.T) {
	out := "operator  ghcr.io/nginx-operator/nginx-operator:v0.1.0@sha256:35fb  id sha256:0b0c  19.7 MB  /tmp/x/operator.tar\n" +
		"nginx     ghcr.io/nginx-operator/nginx:v0.1.0@sha256:7d30  id sha256:34ca  4.2 MB  /tmp/x/nginx.tar\n"
	got, err := parseRefs(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"operator": "ghcr.io/nginx-operator/nginx-operator:v0.1.0", "nginx": "ghcr.io/nginx-operator/nginx:v0.1.0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseRefs = %v, want %v", got, want)
	}
	if _, err := parseRefs(""); err == nil {
		t.Error("parseRefs of nothing: want an error")
	}
}

// The manifest is bundle.yaml but for the image arguments of the
// operator's container.
func TestBundleManifestOnlyAddsTheImageFlags(t *testing.T) {
	imgs := &Images{Refs: map[string]string{Operator: "reg/operator:t", Nginx: "reg/nginx:t", Exporter: "reg/exporter:t"}}
	got, err := BundleManifest(imgs)
	if err != nil {
		t.Fatal(err)
	}
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := framework.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := framework.DecodeYAML(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(orig) != len(changed) {
		t.Fatalf("%d objects, want bundle.yaml's %d", len(changed), len(orig))
	}
	for i := range orig {
		o, c := orig[i], changed[i]
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(c.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			want := []string{"--nginx-image=reg/nginx:t", "--exporter-image=reg/exporter:t", "--agent-image=reg/operator:t", "--reloader-image=reg/operator:t"}
			if len(args) < len(want) || !reflect.DeepEqual(args[len(args)-len(want):], want) {
				t.Errorf("operator args %q: want %q last", args, want)
			}
			origContainers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			origArgs, _, _ := unstructured.NestedStringSlice(origContainers[0].(map[string]any), "args")
			if len(args) == len(origArgs)+len(want) {
				containers[0].(map[string]any)["args"] = origContainers[0].(map[string]any)["args"]
				if err := unstructured.SetNestedSlice(c.Object, containers, "spec", "template", "spec", "containers"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !reflect.DeepEqual(o.Object, c.Object) {
			t.Errorf("%s %s differs from bundle.yaml's", c.GetKind(), c.GetName())
		}
	}
}
