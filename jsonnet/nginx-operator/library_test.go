package jsonnet_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-jsonnet"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// libRender evaluates the library the way users import it, with jsonnet/ (the
// test runs in jsonnet/nginx-operator) as the only library path.
func libRender(t *testing.T, params map[string]any) []map[string]any {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{".."}})
	out, err := vm.EvaluateAnonymousSnippet("library_test.jsonnet",
		fmt.Sprintf("(import 'nginx-operator/main.libsonnet').new(%s).all", p))
	if err != nil {
		t.Fatalf("jsonnet: %v", err)
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(out), &objs); err != nil {
		t.Fatal(err)
	}
	return objs
}

// libDecodeYAML decodes a multi-document YAML stream the way kubectl reads it,
// through JSON so numbers compare equal to jsonnet's.
func libDecodeYAML(t *testing.T, stream []byte) []map[string]any {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(j, &obj); err != nil {
			t.Fatal(err)
		}
		if obj != nil { // a document of comments only
			objs = append(objs, obj)
		}
	}
}

func libKustomize(t *testing.T, dir string) []map[string]any {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // as hack/bundle: the kustomization sorts
	res, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatal(err)
	}
	y, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return libDecodeYAML(t, y)
}

func libID(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v/%v", obj["kind"], md["namespace"], md["name"])
}

// libCompare reports a difference in the order of the objects, then in each.
func libCompare(t *testing.T, want, got []map[string]any) {
	t.Helper()
	var wantIDs, gotIDs []string
	for _, o := range want {
		wantIDs = append(wantIDs, libID(o))
	}
	for _, o := range got {
		gotIDs = append(gotIDs, libID(o))
	}
	if diff := cmp.Diff(wantIDs, gotIDs); diff != "" {
		t.Fatalf("objects in order (-manifest +jsonnet):\n%s", diff)
	}
	for i := range want {
		if diff := cmp.Diff(want[i], got[i]); diff != "" {
			t.Errorf("%s (-manifest +jsonnet):\n%s", wantIDs[i], diff)
		}
	}
}

func TestLibraryDefaultsRenderBundleYAMLObjectByObject(t *testing.T) {
	raw, err := os.ReadFile("../../bundle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	libCompare(t, libDecodeYAML(t, raw), libRender(t, map[string]any{}))
}

func TestLibraryWatchingNamespacesRendersNamespacedOverlay(t *testing.T) {
	libCompare(t, libKustomize(t, "../../config/namespaced"),
		libRender(t, map[string]any{"namespaces": []string{"team-a", "team-b"}}))
}

// libField walks obj along path; a number in path indexes a list.
func libField(obj any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := obj.(map[string]any)
			obj = m[k]
		case int:
			l, _ := obj.([]any)
			if k >= len(l) {
				return nil
			}
			obj = l[k]
		}
	}
	return obj
}

func TestLibraryParamsLandWhereExpected(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		// The operator's namespace, and the other namespaces holding objects.
		wantNamespace      string
		wantRoleNamespaces []string
		wantReplicas       float64
		wantImage          string
		wantArgs           []any
		wantResources      any
	}{
		{
			name:          "defaults",
			params:        map[string]any{},
			wantNamespace: "nginx-operator",
			wantReplicas:  2,
			wantImage:     "ghcr.io/nginx-operator/nginx-operator:v0.1.0",
			wantArgs:      []any{"run", "--leader-elect", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081"},
			wantResources: map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}, "limits": map[string]any{"memory": "256Mi"}},
		},
		{
			name: "own namespace, replicas, image, watched namespaces and resources",
			params: map[string]any{
				"namespace":  "ops",
				"replicas":   3,
				"namespaces": []string{"a", "b"},
				"image":      "registry.example.com/nginx-operator",
				"version":    "v9.9.9",
				"resources":  map[string]any{"requests": map[string]any{"cpu": "1"}},
			},
			wantNamespace:      "ops",
			wantRoleNamespaces: []string{"a", "b", "ops"},
			wantReplicas:       3,
			wantImage:          "registry.example.com/nginx-operator:v9.9.9",
			wantArgs:           []any{"run", "--leader-elect", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081", "--namespaces=a,b"},
			wantResources:      map[string]any{"requests": map[string]any{"cpu": "1"}},
		},
	}
	clusterScoped := map[string]bool{"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var roleNamespaces []string
			var sawDeployment, sawPDB, sawBinding, sawWebhookCRD bool
			for _, obj := range libRender(t, tt.params) {
				id := libID(obj)
				ns, _ := libField(obj, "metadata", "namespace").(string)
				switch kind := obj["kind"].(string); {
				case kind == "Role" || kind == "RoleBinding":
					roleNamespaces = append(roleNamespaces, kind+"/"+ns)
				case clusterScoped[kind]:
					if ns != "" {
						t.Errorf("%s: cluster-scoped object with a namespace", id)
					}
				case ns != tt.wantNamespace:
					t.Errorf("%s: namespace %q, want %q", id, ns, tt.wantNamespace)
				}
				switch obj["kind"] {
				case "Namespace":
					if got := libField(obj, "metadata", "name"); got != tt.wantNamespace {
						t.Errorf("Namespace %v, want %q", got, tt.wantNamespace)
					}
				case "ClusterRoleBinding", "RoleBinding":
					sawBinding = true
					if got := libField(obj, "subjects", 0, "namespace"); got != tt.wantNamespace {
						t.Errorf("%s: subject namespace %v, want %q", id, got, tt.wantNamespace)
					}
				case "CustomResourceDefinition":
					if svc := libField(obj, "spec", "conversion", "webhook", "clientConfig", "service"); svc != nil {
						sawWebhookCRD = true
						if got := libField(svc, "namespace"); got != tt.wantNamespace {
							t.Errorf("%s: conversion webhook Service namespace %v, want %q", id, got, tt.wantNamespace)
						}
					}
				case "Deployment":
					sawDeployment = true
					c := libField(obj, "spec", "template", "spec", "containers", 0)
					for field, d := range map[string]string{
						"replicas":  cmp.Diff(tt.wantReplicas, libField(obj, "spec", "replicas")),
						"image":     cmp.Diff(tt.wantImage, libField(c, "image")),
						"args":      cmp.Diff(tt.wantArgs, libField(c, "args")),
						"resources": cmp.Diff(tt.wantResources, libField(c, "resources")),
					} {
						if d != "" {
							t.Errorf("Deployment %s (-want +got):\n%s", field, d)
						}
					}
				case "PodDisruptionBudget":
					sawPDB = true
				}
			}
			if !sawDeployment || !sawPDB || !sawBinding || !sawWebhookCRD {
				t.Errorf("missing objects: Deployment %v, PodDisruptionBudget %v, binding %v, CRD with conversion webhook %v", sawDeployment, sawPDB, sawBinding, sawWebhookCRD)
			}
			var want []string
			for _, kind := range []string{"Role", "RoleBinding"} {
				for _, ns := range tt.wantRoleNamespaces {
					want = append(want, kind+"/"+ns)
				}
			}
			slices.Sort(want)
			slices.Sort(roleNamespaces)
			if diff := cmp.Diff(want, roleNamespaces); diff != "" {
				t.Errorf("Roles and RoleBindings by namespace (-want +got):\n%s", diff)
			}
		})
	}
}

// The library must also load with its own directory as the library path, as
// `import 'main.libsonnet'`, for users who vendor only this directory.
func TestLibraryImportsFromItsOwnDirectory(t *testing.T) {
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{"."}})
	out, err := vm.EvaluateAnonymousSnippet("own_dir.jsonnet", "std.length((import 'main.libsonnet').new({}).all)")
	if err != nil {
		t.Fatalf("jsonnet: %v", err)
	}
	raw, err := os.ReadFile("../../bundle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintln(len(libDecodeYAML(t, raw))); out != want {
		t.Errorf("objects = %q, want %q", out, want)
	}
}

// libEval evaluates a snippet with the library on the path as users put it,
// returning the objects of the list it yields, or jsonnet's error.
func libEval(t *testing.T, snippet string) ([]map[string]any, error) {
	t.Helper()
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{".."}})
	out, err := vm.EvaluateAnonymousSnippet("library_test.jsonnet",
		"local nginxOperator = import 'nginx-operator/main.libsonnet';\n"+snippet)
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(out), &objs); err != nil {
		t.Fatal(err)
	}
	return objs, nil
}

// libGateway renders nginxOperator.gateway(params).all.
func libGateway(t *testing.T, params map[string]any) []map[string]any {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := libEval(t, fmt.Sprintf("nginxOperator.gateway(%s).all", p))
	if err != nil {
		t.Fatalf("jsonnet: %v", err)
	}
	return objs
}

// The example make run applies is what the library composes from the same
// few facts, so the example shows how the library's output looks.
func TestLibraryGatewayRendersExampleWebGatewayObjectByObject(t *testing.T) {
	raw, err := os.ReadFile("../../example/web-gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := libEval(t, `[nginxOperator.gatewayClass()] + nginxOperator.gateway({
  name: 'web',
  namespace: 'team-a',
  routes: {
    www: { listener: 'http', hostnames: ['www.team-a.example'], rules: [{ path: '/', service: 'www', port: 80 }] },
  },
}).all`)
	if err != nil {
		t.Fatalf("jsonnet: %v", err)
	}
	libCompare(t, libDecodeYAML(t, raw), got)
}

func TestLibraryGatewayComposesListenersAndRoutes(t *testing.T) {
	httpsListener := map[string]any{"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "*.team-a.example",
		"tls": map[string]any{"certificateRefs": []any{map[string]any{"name": "web-tls"}}}}
	objs := libGateway(t, map[string]any{
		"name":      "edge",
		"namespace": "team-a",
		"className": "shared",
		"listeners": []any{map[string]any{"name": "http", "port": 80, "protocol": "HTTP"}, httpsListener},
		"routes": map[string]any{
			// Listed out of order: the result is ordered by name.
			"shop": map[string]any{"listener": "https", "hostnames": []string{"shop.team-a.example"}, "rules": []any{
				map[string]any{"paths": []string{"/api", "/v2"}, "service": "api", "port": 8080},
				map[string]any{"path": "/", "pathType": "Exact", "service": "shop", "port": 80},
			}},
			"docs": map[string]any{"rules": []any{map[string]any{"path": "/docs", "service": "docs", "port": 80}}},
		},
	})
	var ids []string
	for _, o := range objs {
		ids = append(ids, libID(o))
	}
	if diff := cmp.Diff([]string{"Gateway/team-a/edge", "HTTPRoute/team-a/docs", "HTTPRoute/team-a/shop"}, ids); diff != "" {
		t.Fatalf("objects in order (-want +got):\n%s", diff)
	}
	// Through JSON, as jsonnet's output is read: numbers are float64.
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		what string
		got  any
		want any
	}{
		{"Gateway class", libField(objs[0], "spec", "gatewayClassName"), "shared"},
		{"Gateway listeners, as given", libField(objs[0], "spec", "listeners"),
			norm([]any{map[string]any{"name": "http", "port": 80, "protocol": "HTTP"}, httpsListener})},
		{"docs: the Gateway as parent, every listener", libField(objs[1], "spec", "parentRefs"),
			[]any{map[string]any{"name": "edge"}}},
		{"docs: no hostnames, the listeners'", libField(objs[1], "spec", "hostnames"), nil},
		{"docs: a prefix by default", libField(objs[1], "spec", "rules"), norm([]any{map[string]any{
			"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/docs"}}},
			"backendRefs": []any{map[string]any{"name": "docs", "port": 80}},
		}})},
		{"shop: the https listener", libField(objs[2], "spec", "parentRefs"),
			[]any{map[string]any{"name": "edge", "sectionName": "https"}}},
		{"shop: hostnames", libField(objs[2], "spec", "hostnames"), []any{"shop.team-a.example"}},
		{"shop: a match per path, rules in order", libField(objs[2], "spec", "rules"), norm([]any{
			map[string]any{
				"matches": []any{
					map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/api"}},
					map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/v2"}},
				},
				"backendRefs": []any{map[string]any{"name": "api", "port": 8080}},
			},
			map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "Exact", "value": "/"}}},
				"backendRefs": []any{map[string]any{"name": "shop", "port": 80}},
			},
		})},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
}

func TestLibraryGatewayDefaultsToOneHTTPListenerOfTheLibrarysClass(t *testing.T) {
	objs := libGateway(t, map[string]any{"name": "web", "namespace": "team-a"})
	if len(objs) != 1 {
		t.Fatalf("objects = %d, want the Gateway alone", len(objs))
	}
	want := map[string]any{"gatewayClassName": "nginx-operator",
		"listeners": []any{map[string]any{"name": "http", "port": float64(80), "protocol": "HTTP"}}}
	if diff := cmp.Diff(want, objs[0]["spec"]); diff != "" {
		t.Errorf("Gateway spec (-want +got):\n%s", diff)
	}
}

// Incomplete parameters fail the evaluation naming what is missing and
// where, rather than producing objects the apiserver refuses later.
func TestLibraryGatewayRefusesIncompleteParameters(t *testing.T) {
	rule := map[string]any{"path": "/", "service": "www", "port": 80}
	without := func(field string) map[string]any {
		r := map[string]any{}
		for k, v := range rule {
			if k != field {
				r[k] = v
			}
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"no name", map[string]any{"namespace": "team-a"}, "gateway: name is required"},
		{"no namespace", map[string]any{"name": "web"}, "gateway web: namespace is required"},
		{"a route without rules", map[string]any{"name": "web", "namespace": "a", "routes": map[string]any{"www": map[string]any{}}},
			"gateway web, route www: rules is required"},
		{"a rule without a path", map[string]any{"name": "web", "namespace": "a", "routes": map[string]any{"www": map[string]any{"rules": []any{without("path")}}}},
			"gateway web, route www, rule 0: path or paths is required"},
		{"a rule without a Service", map[string]any{"name": "web", "namespace": "a", "routes": map[string]any{"www": map[string]any{"rules": []any{rule, without("service")}}}},
			"gateway web, route www, rule 1: service is required"},
		{"a rule without a port", map[string]any{"name": "web", "namespace": "a", "routes": map[string]any{"www": map[string]any{"rules": []any{without("port")}}}},
			"gateway web, route www, rule 0: port is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := json.Marshal(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			_, err = libEval(t, fmt.Sprintf("nginxOperator.gateway(%s).all", p))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// libExample renders a file of jsonnet/examples/ that yields a v1 List.
func libExample(t *testing.T, name string) []map[string]any {
	t.Helper()
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{".."}})
	out, err := vm.EvaluateFile(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatalf("rendering %s: %v", name, err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("%s renders %s %s, want a v1 List", name, list.APIVersion, list.Kind)
	}
	return list.Items
}

func TestLibraryTeamGatewayExampleComposesClassGatewayAndRoutes(t *testing.T) {
	objs := libExample(t, "team-gateway.jsonnet")
	var ids []string
	for _, o := range objs {
		ids = append(ids, libID(o))
	}
	want := []string{"GatewayClass/<nil>/nginx-operator", "Gateway/team-a/edge", "HTTPRoute/team-a/api", "HTTPRoute/team-a/www"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Fatalf("objects (-want +got):\n%s", diff)
	}
	// The extension the example shows reached the route.
	if got := libField(objs[2], "spec", "rules", 0, "filters", 0, "type"); got != "RequestHeaderModifier" {
		t.Errorf("api route's filter = %v, want the RequestHeaderModifier the example adds", got)
	}
}
