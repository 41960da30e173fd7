package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The tests read the committed bundle and config/ from the repository root.
const (
	repoRoot       = "../.."
	bundleDir      = repoRoot + "/bundle"
	dockerfilePath = repoRoot + "/bundle.Dockerfile"
)

// committed is the committed bundle, parsed.
type committed struct {
	csv         map[string]any
	crds        map[string]map[string]any // by metadata.name
	crdFiles    map[string]string         // metadata.name -> file name
	others      map[string]map[string]any // by file name
	annotations map[string]string
}

func loadBundle(t *testing.T) committed {
	t.Helper()
	c := committed{crds: map[string]map[string]any{}, crdFiles: map[string]string{}, others: map[string]map[string]any{}}
	files, err := filepath.Glob(filepath.Join(bundleDir, "manifests", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundle/manifests/*.yaml (%v): run go run ./hack/olm -o bundle", err)
	}
	for _, f := range files {
		objs, err := readYAMLFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 {
			t.Fatalf("%s: want one object per file, got %d", f, len(objs))
		}
		o := objs[0]
		switch o["kind"] {
		case "ClusterServiceVersion":
			if c.csv != nil {
				t.Fatalf("%s: a second ClusterServiceVersion", f)
			}
			c.csv = o
		case "CustomResourceDefinition":
			name := str(o, "metadata", "name")
			c.crds[name] = o
			c.crdFiles[name] = filepath.Base(f)
		default:
			c.others[filepath.Base(f)] = o
		}
	}
	if c.csv == nil {
		t.Fatal("bundle/manifests has no ClusterServiceVersion")
	}
	b, err := os.ReadFile(filepath.Join(bundleDir, "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(b, &meta); err != nil {
		t.Fatalf("metadata/annotations.yaml: %v", err)
	}
	c.annotations = meta.Annotations
	return c
}

// csvAs decodes part of the CSV into a typed value.
func csvAs[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding %T: %v", out, err)
	}
	return out
}

func (c committed) spec(t *testing.T) csvSpec {
	return csvAs[csvSpec](t, c.csv["spec"])
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, sub := range []string{manifestsDir, metadataDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[sub+"/"+e.Name()] = string(b)
		}
	}
	return out
}

func TestCommittedBundleEqualsFreshGeneration(t *testing.T) {
	tmp := t.TempDir()
	o := options{root: repoRoot, out: filepath.Join(tmp, "bundle"), dockerfile: filepath.Join(tmp, "bundle.Dockerfile")}
	b, err := generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.write(o.out, o.dockerfile); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(readDir(t, o.out), readDir(t, bundleDir)); diff != "" {
		t.Errorf("bundle/ is stale; run go run ./hack/olm -o bundle (-fresh +committed):\n%s", diff)
	}
	fresh, _ := os.ReadFile(o.dockerfile)
	old, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(fresh), string(old)); diff != "" {
		t.Errorf("bundle.Dockerfile is stale (-fresh +committed):\n%s", diff)
	}
}

func TestGenerationIsDeterministicAndPrunesStaleFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	o := options{root: repoRoot, out: dir, dockerfile: filepath.Join(dir, "..", "bundle.Dockerfile")}
	first, err := generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, manifestsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, manifestsDir, "nginx.operator.dev_removed.yaml")
	if err := os.WriteFile(stale, []byte("kind: Stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := first.write(o.out, o.dockerfile); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a file the generator no longer produces survived regeneration: %v", err)
	}
	second, err := generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.files, second.files); diff != "" {
		t.Errorf("two generations differ (-first +second):\n%s", diff)
	}
}

var csvNameRE = regexp.MustCompile(`^` + regexp.QuoteMeta(packageName) + `\.v(.+)$`)

func TestCSVHasRequiredFields(t *testing.T) {
	c := loadBundle(t)
	spec := c.spec(t)
	meta := csvAs[csvMetadata](t, c.csv["metadata"])
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"apiVersion is operators.coreos.com/v1alpha1", c.csv["apiVersion"] == "operators.coreos.com/v1alpha1", c.csv["apiVersion"]},
		{"metadata.name is <package>.v<spec.version>", meta.Name == packageName+".v"+spec.Version && csvNameRE.MatchString(meta.Name), meta.Name},
		{"spec.version is semver", semverRE.MatchString(spec.Version), spec.Version},
		{"displayName is set", spec.DisplayName != "", spec.DisplayName},
		{"description is set", len(spec.Description) > 200, len(spec.Description)},
		{"minKubeVersion is 1.30.0", spec.MinKubeVersion == "1.30.0", spec.MinKubeVersion},
		{"maintainers are set", len(spec.Maintainers) > 0 && spec.Maintainers[0].Name != "", spec.Maintainers},
		{"provider is set", spec.Provider.Name != "", spec.Provider},
		{"links are set", len(spec.Links) > 0, spec.Links},
		{"keywords are set", len(spec.Keywords) > 0, spec.Keywords},
		{"install strategy is deployment", spec.Install.Strategy == "deployment", spec.Install.Strategy},
		{"one deployment", len(spec.Install.Spec.Deployments) == 1, len(spec.Install.Spec.Deployments)},
		{"capabilities is a level of OLM's model", map[string]bool{"Basic Install": true, "Seamless Upgrades": true, "Full Lifecycle": true, "Deep Insights": true, "Auto Pilot": true}[meta.Annotations["capabilities"]], meta.Annotations["capabilities"]},
		{"containerImage is the deployed image", meta.Annotations["containerImage"] != "" && meta.Annotations["containerImage"] == containerOf(t, spec)["image"], meta.Annotations["containerImage"]},
		{"categories are set", meta.Annotations["categories"] != "", meta.Annotations["categories"]},
		{"repository is set", strings.HasPrefix(meta.Annotations["repository"], "https://"), meta.Annotations["repository"]},
		{"no createdAt: the output is deterministic", meta.Annotations["createdAt"] == "", meta.Annotations["createdAt"]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}

func containerOf(t *testing.T, spec csvSpec) map[string]any {
	t.Helper()
	if len(spec.Install.Spec.Deployments) == 0 {
		t.Fatal("the CSV has no deployment")
	}
	c := container(spec.Install.Spec.Deployments[0].Spec, operatorContainer)
	if c == nil {
		t.Fatalf("the CSV deployment has no container %q", operatorContainer)
	}
	return c
}

// OLM (classic and v1) refuses a bundle that declares a conversion webhook
// and supports any install mode but AllNamespaces.
func TestInstallModesListAllFourAndAllowOnlyWhatOLMAcceptsWithAConversionWebhook(t *testing.T) {
	spec := loadBundle(t).spec(t)
	got := map[string]bool{}
	for _, m := range spec.InstallModes {
		if _, dup := got[m.Type]; dup {
			t.Errorf("install mode %s listed twice", m.Type)
		}
		got[m.Type] = m.Supported
	}
	hasConversion := false
	for _, wh := range spec.WebhookDefinitions {
		hasConversion = hasConversion || wh.Type == "ConversionWebhook"
	}
	want := map[string]bool{"OwnNamespace": !hasConversion, "SingleNamespace": !hasConversion, "MultiNamespace": !hasConversion, "AllNamespaces": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("installModes (-want +got):\n%s", diff)
	}
}

func TestOwnedCRDsAreTheBundleCRDsEveryServedVersion(t *testing.T) {
	c := loadBundle(t)
	spec := c.spec(t)
	type gvk struct{ name, version, kind string }
	owned := map[gvk]bool{}
	for _, o := range spec.CustomResourceDefinitions.Owned {
		owned[gvk{o.Name, o.Version, o.Kind}] = true
		t.Run(o.Name+"/"+o.Version, func(t *testing.T) {
			if o.DisplayName == "" || o.Description == "" {
				t.Errorf("displayName %q, description %q: both are required", o.DisplayName, o.Description)
			}
			crd, ok := c.crds[o.Name]
			if !ok {
				t.Fatalf("no CRD %s in bundle/manifests", o.Name)
			}
			if k := str(crd, "spec", "names", "kind"); k != o.Kind {
				t.Errorf("kind %s, CRD says %s", o.Kind, k)
			}
			if v := crdVersion(crd, o.Version); v == nil || v["served"] != true {
				t.Errorf("version %s is not served by the CRD", o.Version)
			}
		})
	}
	// And the reverse: nothing in the bundle goes undescribed.
	for name, crd := range c.crds {
		for _, v := range crdVersions(crd) {
			if v["served"] != true {
				continue
			}
			k := gvk{name, v["name"].(string), str(crd, "spec", "names", "kind")}
			if !owned[k] {
				t.Errorf("CRD %s version %s is served but not in customresourcedefinitions.owned", name, k.version)
			}
		}
	}
}

func TestBundleCRDFileNamesAreGroupAndPlural(t *testing.T) {
	c := loadBundle(t)
	for name, crd := range c.crds {
		want := str(crd, "spec", "group") + "_" + str(crd, "spec", "names", "plural") + ".yaml"
		if c.crdFiles[name] != want {
			t.Errorf("CRD %s is in %s, want %s", name, c.crdFiles[name], want)
		}
	}
}

func crdVersions(crd map[string]any) []map[string]any {
	var out []map[string]any
	vs, _ := mapAt(crd, "spec")["versions"].([]any)
	for _, v := range vs {
		if vm, ok := v.(map[string]any); ok {
			out = append(out, vm)
		}
	}
	return out
}

func crdVersion(crd map[string]any, version string) map[string]any {
	for _, v := range crdVersions(crd) {
		if v["name"] == version {
			return v
		}
	}
	return nil
}

// schemaAt follows a dotted path through an OpenAPI v3 schema, descending
// into array items; nil when a step does not exist.
func schemaAt(schema map[string]any, path string) map[string]any {
	for _, step := range strings.Split(path, ".") {
		for schema["type"] == "array" {
			schema = mapAt(schema, "items")
		}
		schema = mapAt(schema, "properties", step)
		if schema == nil {
			return nil
		}
	}
	return schema
}

func TestDescriptorPathsExistInTheCRDSchema(t *testing.T) {
	c := loadBundle(t)
	for _, o := range c.spec(t).CustomResourceDefinitions.Owned {
		v := crdVersion(c.crds[o.Name], o.Version)
		if v == nil {
			t.Errorf("%s %s: no such CRD version", o.Name, o.Version)
			continue
		}
		root := mapAt(v, "schema", "openAPIV3Schema")
		for _, set := range []struct {
			field string
			ds    []descriptor
		}{{"spec", o.SpecDescriptors}, {"status", o.StatusDescriptors}} {
			for _, d := range set.ds {
				t.Run(fmt.Sprintf("%s/%s/%s.%s", o.Kind, o.Version, set.field, d.Path), func(t *testing.T) {
					if schemaAt(root, set.field+"."+d.Path) == nil {
						t.Errorf("no %s.%s in the %s %s schema", set.field, d.Path, o.Kind, o.Version)
					}
					if d.DisplayName == "" || len(d.XDescriptors) == 0 {
						t.Errorf("displayName %q, x-descriptors %v: both are needed for the console", d.DisplayName, d.XDescriptors)
					}
					for _, x := range d.XDescriptors {
						if !strings.HasPrefix(x, "urn:alm:descriptor:") {
							t.Errorf("x-descriptor %q is not an urn:alm:descriptor", x)
						}
					}
				})
			}
		}
	}
}

func TestSchemaAtFindsOnlyExistingPaths(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{
			"ports": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"name": map[string]any{"type": "string"},
			}}},
		}},
	}}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"spec", true},
		{"spec.ports", true},
		{"spec.ports.name", true},
		{"spec.port", false},
		{"spec.ports.name.x", false},
		{"status", false},
	} {
		if got := schemaAt(schema, tc.path) != nil; got != tc.want {
			t.Errorf("schemaAt(%q) found = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// Every child kind the CSV says a resource creates is one the operator may
// create: a console link to a kind the operator cannot make is a lie.
func TestOwnedResourcesAreKindsTheOperatorMayCreate(t *testing.T) {
	c := loadBundle(t)
	spec := c.spec(t)
	canCreate := map[string]bool{}
	for _, p := range append(append([]permission{}, spec.Install.Spec.ClusterPermissions...), spec.Install.Spec.Permissions...) {
		for _, r := range p.Rules {
			for _, v := range r.Verbs {
				if v == "create" || v == "*" {
					for _, res := range r.Resources {
						canCreate[res] = true
					}
				}
			}
		}
	}
	for _, o := range spec.CustomResourceDefinitions.Owned {
		for _, r := range o.Resources {
			plural := strings.ToLower(r.Kind) + "s"
			if !canCreate[plural] {
				t.Errorf("%s %s lists %s, but no permission creates %s", o.Kind, o.Version, r.Kind, plural)
			}
		}
	}
}

// exampleObjects reads example/*.yaml without the generator's help.
func exampleObjects(t *testing.T) []map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "example", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(m) > 0 {
				out = append(out, m)
			}
		}
	}
	return out
}

func TestALMExamplesAreTheFirstSampleOfEachOwnedKind(t *testing.T) {
	c := loadBundle(t)
	meta := csvAs[csvMetadata](t, c.csv["metadata"])
	var got []map[string]any
	if err := json.Unmarshal([]byte(meta.Annotations["alm-examples"]), &got); err != nil {
		t.Fatalf("alm-examples is not a JSON array: %v", err)
	}
	owned := map[string]bool{}
	for _, o := range c.spec(t).CustomResourceDefinitions.Owned {
		owned[str(c.crds[o.Name], "spec", "group")+"/"+o.Version+"/"+o.Kind] = true
	}
	var want []map[string]any
	seen := map[string]bool{}
	for _, e := range exampleObjects(t) {
		key := fmt.Sprint(e["apiVersion"], "/", e["kind"])
		if owned[key] && !seen[key] {
			seen[key] = true
			delete(e["metadata"].(map[string]any), "namespace")
			want = append(want, e)
		}
	}
	if len(want) == 0 {
		t.Fatal("example/ has no custom resources of the bundle's kinds")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("alm-examples (-want from example/ +got):\n%s", diff)
	}
	for _, e := range got {
		key := fmt.Sprint(e["apiVersion"], "/", e["kind"])
		t.Run(key, func(t *testing.T) {
			if !owned[key] {
				t.Fatalf("%s is not an owned kind and version", key)
			}
			name := str(e, "metadata", "name")
			if name == "" {
				t.Error("the example has no metadata.name")
			}
			var crd map[string]any
			for _, x := range c.crds {
				if str(x, "spec", "names", "kind") == e["kind"] {
					crd = x
				}
			}
			_, version, _ := strings.Cut(e["apiVersion"].(string), "/")
			schema := mapAt(crdVersion(crd, version), "schema", "openAPIV3Schema", "properties", "spec")
			for _, p := range unknownFields(schema, e["spec"], "spec") {
				t.Errorf("%s: field not in the CRD schema", p)
			}
		})
	}
}

// unknownFields lists the paths of v that schema does not declare, stopping
// where the schema allows anything.
func unknownFields(schema map[string]any, v any, path string) []string {
	if schema == nil {
		return []string{path}
	}
	if schema["x-kubernetes-preserve-unknown-fields"] == true || schema["x-kubernetes-int-or-string"] == true {
		return nil
	}
	var out []string
	switch val := v.(type) {
	case map[string]any:
		props := mapAt(schema, "properties")
		if props == nil {
			if ap := mapAt(schema, "additionalProperties"); ap != nil {
				for k, x := range val {
					out = append(out, unknownFields(ap, x, path+"."+k)...)
				}
			}
			return out
		}
		for k, x := range val {
			out = append(out, unknownFields(mapAt(props, k), x, path+"."+k)...)
		}
	case []any:
		for i, x := range val {
			out = append(out, unknownFields(mapAt(schema, "items"), x, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	sort.Strings(out)
	return out
}

func TestUnknownFieldsReportsFieldsMissingFromTheSchema(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"replicas": map[string]any{"type": "integer"},
		"labels":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"raw":      map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
		"ports": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"name": map[string]any{"type": "string"},
		}}},
	}}
	for _, tc := range []struct {
		name string
		spec string
		want []string
	}{
		{"declared fields", `{"replicas": 1, "labels": {"a": "b"}, "raw": {"x": 1}, "ports": [{"name": "http"}]}`, nil},
		{"a typo at the top", `{"replica": 1}`, []string{"spec.replica"}},
		{"a typo in a list item", `{"ports": [{"name": "http"}, {"nmae": "x"}]}`, []string{"spec.ports[1].nmae"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.spec), &v); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, unknownFields(schema, v, "spec")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// configObjects builds a config/ directory without the generator's transforms.
func configObjects(t *testing.T, dir string) []map[string]any {
	t.Helper()
	objs, err := kustomize(filepath.Join(repoRoot, "config", dir))
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, so numbers are float64 as in the parsed bundle files.
	return deepCopy(objs)
}

// The documented CRD transformation: spec.conversion is dropped, and
// nothing else changes.
func TestBundleCRDsEqualConfigCRDsWithoutSpecConversion(t *testing.T) {
	c := loadBundle(t)
	want := map[string]map[string]any{}
	for _, o := range configObjects(t, "crd") {
		delete(o["spec"].(map[string]any), "conversion")
		want[str(o, "metadata", "name")] = o
	}
	if diff := cmp.Diff(want, c.crds); diff != "" {
		t.Errorf("bundle CRDs differ from config/crd beyond spec.conversion (-config +bundle):\n%s", diff)
	}
}

func TestConversionWebhookDefinitionMatchesConfig(t *testing.T) {
	c := loadBundle(t)
	spec := c.spec(t)
	type want struct {
		path     string
		versions []string
	}
	fromConfig := map[string]want{}
	for _, o := range configObjects(t, "crd") {
		if str(o, "spec", "conversion", "strategy") != "Webhook" {
			continue
		}
		wh := mapAt(o, "spec", "conversion", "webhook")
		var versions []string
		for _, v := range wh["conversionReviewVersions"].([]any) {
			versions = append(versions, v.(string))
		}
		fromConfig[str(o, "metadata", "name")] = want{str(wh, "clientConfig", "service", "path"), versions}
	}
	if len(fromConfig) == 0 {
		if len(spec.WebhookDefinitions) > 0 {
			t.Errorf("config/crd has no conversion webhook, the CSV declares %d webhooks", len(spec.WebhookDefinitions))
		}
		return
	}
	dep := spec.Install.Spec.Deployments[0]
	var webhookPort float64
	for _, p := range containerOf(t, spec)["ports"].([]any) {
		if pm := p.(map[string]any); pm["name"] == "webhook" {
			webhookPort = pm["containerPort"].(float64)
		}
	}
	got := map[string]want{}
	for _, wh := range spec.WebhookDefinitions {
		if wh.Type != "ConversionWebhook" {
			t.Errorf("unexpected webhook type %s", wh.Type)
			continue
		}
		if wh.DeploymentName != dep.Name {
			t.Errorf("deploymentName %s, the CSV's deployment is %s", wh.DeploymentName, dep.Name)
		}
		if float64(wh.TargetPort) != webhookPort || webhookPort == 0 {
			t.Errorf("targetPort %d, the container's webhook port is %v", wh.TargetPort, webhookPort)
		}
		if wh.ContainerPort < 1 || wh.ContainerPort > 65535 {
			t.Errorf("containerPort %d is not a port", wh.ContainerPort)
		}
		for _, name := range wh.ConversionCRDs {
			got[name] = want{wh.WebhookPath, wh.AdmissionReviewVersions}
		}
	}
	if diff := cmp.Diff(fromConfig, got, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("conversion webhooks (-config/crd +CSV):\n%s", diff)
	}
}

func policyRules(t *testing.T, v any) []rbacv1.PolicyRule {
	return csvAs[[]rbacv1.PolicyRule](t, v)
}

func ruleKey(r rbacv1.PolicyRule) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func TestPermissionsAreExactlyRoleYAMLRules(t *testing.T) {
	spec := loadBundle(t).spec(t)
	sa := str(spec.Install.Spec.Deployments[0].Spec, "template", "spec", "serviceAccountName")
	objs, err := readYAMLFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	fromRole := map[string]bool{} // rules of a namespaced Role in role.yaml
	for _, o := range objs {
		for _, r := range policyRules(t, o["rules"]) {
			want = append(want, ruleKey(r))
			fromRole[ruleKey(r)] = o["kind"] == "Role"
		}
	}
	var got []string
	for _, set := range []struct {
		name  string
		perms []permission
	}{{"clusterPermissions", spec.Install.Spec.ClusterPermissions}, {"permissions", spec.Install.Spec.Permissions}} {
		for _, p := range set.perms {
			if p.ServiceAccountName != sa {
				t.Errorf("%s for service account %q, the deployment runs as %q", set.name, p.ServiceAccountName, sa)
			}
			for _, r := range p.Rules {
				got = append(got, ruleKey(r))
				lease := len(r.APIGroups) == 1 && r.APIGroups[0] == "coordination.k8s.io"
				if set.name == "permissions" && !lease && !fromRole[ruleKey(r)] {
					t.Errorf("namespaced permission %s: of the ClusterRole's rules only the leader-election Lease may be limited to the install namespace", ruleKey(r))
				}
			}
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CSV rules (-role.yaml +CSV):\n%s", diff)
	}
}

// The documented Deployment transformation: the operator container gets the
// args below appended, and nothing else changes.
var documentedOLMArgs = []any{"--webhook-cert-management=external"}

func TestDeploymentEqualsConfigManagerExceptDocumentedArgs(t *testing.T) {
	spec := loadBundle(t).spec(t)
	var config map[string]any
	for _, o := range configObjects(t, "manager") {
		if o["kind"] == "Deployment" {
			config = o
		}
	}
	if config == nil {
		t.Fatal("config/manager has no Deployment")
	}
	dep := spec.Install.Spec.Deployments[0]
	if want := str(config, "metadata", "name"); dep.Name != want {
		t.Errorf("deployment name %q, config/manager says %q", dep.Name, want)
	}
	wantLabels := map[string]string{}
	for k, v := range mapAt(config, "metadata", "labels") {
		wantLabels[k] = v.(string)
	}
	if diff := cmp.Diff(wantLabels, dep.Label); diff != "" {
		t.Errorf("deployment labels (-config +CSV):\n%s", diff)
	}
	got := deepCopy(dep.Spec)
	c := container(got, operatorContainer)
	args := c["args"].([]any)
	n := len(args) - len(documentedOLMArgs)
	if n < 0 {
		t.Fatalf("args %v lack the documented %v", args, documentedOLMArgs)
	}
	if diff := cmp.Diff(documentedOLMArgs, args[n:]); diff != "" {
		t.Errorf("the args OLM adds (-documented +CSV):\n%s", diff)
	}
	c["args"] = args[:n]
	want := deepCopy(mapAt(config, "spec"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployment spec differs from config/manager beyond the documented args (-config +CSV):\n%s", diff)
	}
}

// operatorFlags are the flag names `operator run` defines, read from the
// source so the test does not depend on the operator packages compiling.
func operatorFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := map[string]bool{}
	for _, f := range []string{"pkg/operator/options.go", "cmd/operator/run.go"} {
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			idx := 1 // fs.XxxVar(&dst, "name", ...)
			switch sel.Sel.Name {
			case "Func", "String", "Bool", "Int", "Duration":
				idx = 0
			case "StringVar", "BoolVar", "IntVar", "DurationVar", "Var", "Int64Var", "UintVar", "Float64Var":
			default:
				return true
			}
			if len(call.Args) <= idx {
				return true
			}
			if lit, ok := call.Args[idx].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				name, err := strconv.Unquote(lit.Value)
				if err == nil {
					flags[name] = true
				}
			}
			return true
		})
	}
	return flags
}

func TestDeploymentArgsAreFlagsOfOperatorRun(t *testing.T) {
	flags := operatorFlags(t)
	for _, want := range []string{"namespaces", "leader-elect", "conversion-webhook"} {
		if !flags[want] {
			t.Fatalf("reading the operator's flags from source found no --%s (found %v): the parser is out of date", want, flags)
		}
	}
	args := containerOf(t, loadBundle(t).spec(t))["args"].([]any)
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("args %v do not start with the run subcommand", args)
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a.(string), "-"), "=")
		if !flags[name] {
			t.Errorf("arg %v: operator run has no flag --%s", a, name)
		}
	}
}

// OLM installs only some kinds from bundle/manifests, and puts namespaced
// ones in the install namespace itself.
var olmInstallableKinds = map[string]bool{
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"Service": true, "ServiceAccount": true, "ConfigMap": true, "Secret": true,
	"PodDisruptionBudget": true, "PriorityClass": true, "PrometheusRule": true, "ServiceMonitor": true,
	"VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true,
}

func TestExtraManifestsAreInstallableByOLMAndNamespaceFree(t *testing.T) {
	c := loadBundle(t)
	if len(c.others) == 0 {
		t.Fatal("no extra manifests: config/ has a metrics Service and a metrics-reader ClusterRole that belong in the bundle")
	}
	for file, o := range c.others {
		kind := o["kind"].(string)
		if !olmInstallableKinds[kind] {
			t.Errorf("%s: OLM does not install a %s from a bundle", file, kind)
		}
		if ns := str(o, "metadata", "namespace"); ns != "" {
			t.Errorf("%s: metadata.namespace %q; OLM chooses the namespace", file, ns)
		}
		if kind == "Service" && targetsWebhook(o, 0) {
			t.Errorf("%s: a webhook Service; OLM creates its own for the CSV's webhook definition", file)
		}
	}
}

func dockerfileLabels(t *testing.T) (map[string]string, []string) {
	t.Helper()
	b, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	var copies []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "LABEL "); ok {
			k, v, _ := strings.Cut(rest, "=")
			labels[k] = v
		}
		if rest, ok := strings.CutPrefix(line, "COPY "); ok {
			copies = append(copies, rest)
		}
	}
	return labels, copies
}

func TestAnnotationsAndDockerfileLabelsAgree(t *testing.T) {
	c := loadBundle(t)
	want := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         "nginx-operator",
		"operators.operatorframework.io.bundle.channels.v1":        "alpha",
		"operators.operatorframework.io.bundle.channel.default.v1": "alpha",
	}
	if diff := cmp.Diff(want, c.annotations); diff != "" {
		t.Errorf("metadata/annotations.yaml (-want +got):\n%s", diff)
	}
	labels, copies := dockerfileLabels(t)
	if diff := cmp.Diff(c.annotations, labels); diff != "" {
		t.Errorf("bundle.Dockerfile labels differ from annotations.yaml (-annotations +labels):\n%s", diff)
	}
	wantCopies := []string{"bundle/manifests /manifests/", "bundle/metadata /metadata/"}
	if diff := cmp.Diff(wantCopies, copies); diff != "" {
		t.Errorf("bundle.Dockerfile COPY lines (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.annotations["operators.operatorframework.io.bundle.channels.v1"], c.annotations["operators.operatorframework.io.bundle.channel.default.v1"]) {
		t.Error("the default channel is not one of the channels")
	}
}

func TestImageTag(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"ghcr.io/nginx-operator/nginx-operator:v0.1.0", "v0.1.0"},
		{"localhost:5000/op:1.2.3", "1.2.3"},
		{"localhost:5000/op", ""},
		{"op@sha256:abc", ""},
		{"op:v1@sha256:abc", "v1"},
	} {
		if got := imageTag(tc.ref); got != tc.want {
			t.Errorf("imageTag(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

func TestGeneratorRefusesInputsItCannotMapFaithfully(t *testing.T) {
	dep := map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "op"}, "spec": map[string]any{
		"template": map[string]any{"spec": map[string]any{"serviceAccountName": "op", "containers": []any{
			map[string]any{"name": "operator", "image": "op:v1", "args": []any{"run", "--webhook-cert-management=self"}},
		}}},
	}}
	noSA := deepCopy(dep)
	delete(mapAt(noSA, "spec", "template", "spec"), "serviceAccountName")
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"no Deployment", func() error { _, err := operatorDeployment(nil); return err }, "exactly one Deployment"},
		{"two Deployments", func() error { _, err := operatorDeployment([]object{dep, dep}); return err }, "exactly one Deployment"},
		{"no service account", func() error { _, err := operatorDeployment([]object{noSA}); return err }, "serviceAccountName"},
		{"config already sets an OLM arg", func() error { _, err := olmDeploymentSpec(mapAt(dep, "spec"), "op:v1"); return err }, "already sets --webhook-cert-management"},
		{"unknown kind in config", func() error {
			_, err := extraManifests([]object{{"kind": "Ingress", "metadata": map[string]any{"name": "x"}}}, nil, deployment{}, false)
			return err
		}, "no OLM mapping"},
		{"CRD version without a description", func() error {
			_, err := ownedCRDs([]crd{{kind: "NginxOperator", name: "x", obj: map[string]any{"spec": map[string]any{"versions": []any{
				map[string]any{"name": "v9", "served": true},
			}}}}})
			return err
		}, "no description of NginxOperator v9"},
		{"conversion webhook without a webhook port", func() error {
			_, err := conversionWebhook([]conversion{{crd: "x", path: "/convert", reviewVersions: []string{"v1"}}}, deployment{name: "op"})
			return err
		}, "no port named webhook"},
		{"role.yaml of an unexpected kind", func() error {
			_, err := permissionsFrom([]object{{"kind": "RoleBinding"}}, "op")
			return err
		}, "unexpected kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
