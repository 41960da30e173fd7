package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const repoRoot = "../.."

func TestCommittedReferenceMatchesFreshGeneration(t *testing.T) {
	want, err := generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, "Documentation", "api.md"))
	if err != nil {
		t.Fatalf("reading the committed reference: %v (run make apidocs)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("Documentation/api.md is stale: run make apidocs (-fresh +committed):\n%s", diff)
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	first, err := generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		again, err := generate(repoRoot)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(first), string(again)); diff != "" {
			t.Fatalf("run %d differs from the first:\n%s", i+2, diff)
		}
	}
}

func TestParseJSONTag(t *testing.T) {
	tests := []struct {
		raw         string
		want        jsonTag
		wantPresent bool
	}{
		{"`json:\"replicas,omitempty\"`", jsonTag{Name: "replicas", OmitEmpty: true}, true},
		{"`json:\"name\"`", jsonTag{Name: "name"}, true},
		{"`json:\",inline\"`", jsonTag{Inline: true}, true},
		{"`json:\"-\"`", jsonTag{Skip: true}, true},
		{"`json:\"when,omitzero\" protobuf:\"bytes,1\"`", jsonTag{Name: "when", OmitEmpty: true}, true},
		{"`yaml:\"other\"`", jsonTag{}, false},
		{`json:"unquoted,omitempty"`, jsonTag{Name: "unquoted", OmitEmpty: true}, true},
	}
	for _, tt := range tests {
		got, present := parseJSONTag(tt.raw)
		if present != tt.wantPresent {
			t.Errorf("parseJSONTag(%s) present = %v, want %v", tt.raw, present, tt.wantPresent)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseJSONTag(%s) (-want +got):\n%s", tt.raw, diff)
		}
	}
}

// parseSource loads an API package from Go source held in memory.
func parseSource(t *testing.T, srcs ...string) *apiPackage {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for i, src := range srcs {
		f, err := parser.ParseFile(fset, "src"+string(rune('a'+i))+".go", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := loadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const flattenSource = `
// +groupName=example.dev
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type Common struct {
	// Shared is inlined into its embedder.
	Shared string ` + "`json:\"shared\"`" + `
	Nested ` + "`json:\",inline\"`" + `
}

type Nested struct {
	Deep int32 ` + "`json:\"deep,omitempty\"`" + `
}

type Spec struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	First  string ` + "`json:\"first\"`" + `
	Common ` + "`json:\",inline\"`" + `
	Hidden string ` + "`json:\"-\"`" + `
	Untagged bool
	private string
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	*Pointed
}

type Pointed struct {
	Last string ` + "`json:\"last\"`" + `
}
`

func TestFieldsFlattenInlineEmbeddingAndDropSkipped(t *testing.T) {
	p := parseSource(t, flattenSource)
	if p.Group != "example.dev" || p.Version != "v1" {
		t.Fatalf("group/version = %s/%s, want example.dev/v1", p.Group, p.Version)
	}
	fs, err := p.fields(p.Types["Spec"])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		if f.External != "" {
			got = append(got, "external:"+f.External)
			continue
		}
		got = append(got, f.JSONName)
	}
	want := []string{"external:metav1.TypeMeta", "first", "shared", "deep", "Untagged", "metadata", "last"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flattened fields (-want +got):\n%s", diff)
	}
}

func TestFieldsRefuseInlineCycles(t *testing.T) {
	p := parseSource(t, `package v1
type A struct {
	B `+"`json:\",inline\"`"+`
}
type B struct {
	A `+"`json:\",inline\"`"+`
}
`)
	if _, err := p.fields(p.Types["A"]); err == nil {
		t.Fatal("an inline embedding cycle was accepted")
	}
}

func TestReachableGroupsTypesByKindInFieldOrder(t *testing.T) {
	tag := func(name string) string { return "`json:\"" + name + "\"`" }
	p := parseSource(t, `package v1
type Alpha struct {
	Spec AlphaSpec `+tag("spec")+`
	Status AlphaStatus `+tag("status")+`
}
type AlphaSpec struct {
	Shared *Shared `+tag("shared")+`
	Items []Item `+tag("items")+`
}
type AlphaStatus struct {
	Phase Phase `+tag("phase")+`
}
type Beta struct {
	Spec BetaSpec `+tag("spec")+`
}
type BetaSpec struct {
	Shared Shared `+tag("shared")+`
	Labels map[string]Label `+tag("labels")+`
	Alpha Alpha `+tag("alpha")+`
}
type Shared struct {
	Deep Deep `+tag("deep")+`
}
type Deep struct{}
type Item struct{}
type Label struct{}
type Phase string
type Orphan struct{}
`)
	got, err := p.reachable([]string{"Alpha", "Beta"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"AlphaSpec", "AlphaStatus", "Shared", "Item", "Phase", "Deep", "BetaSpec", "Label"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reachable (-want +got):\n%s", diff)
	}
}

func TestParseMarkers(t *testing.T) {
	tests := []struct {
		line string
		want []marker
	}{
		{"+optional", []marker{{Name: "optional"}}},
		{"+kubebuilder:validation:Minimum=0", []marker{{Name: "kubebuilder:validation:Minimum", Value: "0"}}},
		{"+kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`", []marker{{Name: "kubebuilder:validation:Pattern", Value: "^[a-z]([-a-z0-9]*[a-z0-9])?$"}}},
		{`+kubebuilder:default="1m"`, []marker{{Name: "kubebuilder:default", Value: "1m"}}},
		{"+kubebuilder:default={{name: http, containerPort: 8080}}", []marker{{Name: "kubebuilder:default", Value: "{{name: http, containerPort: 8080}}"}}},
		{`+kubebuilder:validation:XValidation:rule="has(self.a) != has(self.b)",message="set exactly one of a, or b"`,
			[]marker{{Name: "kubebuilder:validation:XValidation", Args: map[string]string{"rule": "has(self.a) != has(self.b)", "message": "set exactly one of a, or b"}}}},
		{`+kubebuilder:validation:XValidation:rule="self.x in ['a', 'b']",message="quote \" inside"`,
			[]marker{{Name: "kubebuilder:validation:XValidation", Args: map[string]string{"rule": "self.x in ['a', 'b']", "message": `quote " inside`}}}},
		{"+kubebuilder:resource:shortName=ngx,categories=nginx", []marker{{Name: "kubebuilder:resource", Args: map[string]string{"shortName": "ngx", "categories": "nginx"}}}},
		{"+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas", []marker{{Name: "kubebuilder:subresource:scale", Args: map[string]string{"specpath": ".spec.replicas", "statuspath": ".status.replicas"}}}},
		{"+kubebuilder:printcolumn:name=\"Ready\",type=string,JSONPath=`.status.conditions[?(@.type==\"Available\")].status`",
			[]marker{{Name: "kubebuilder:printcolumn", Args: map[string]string{"name": "Ready", "type": "string", "JSONPath": `.status.conditions[?(@.type=="Available")].status`}}}},
		{"Replicas is the number of pods.", nil},
		{"  +listType=map", []marker{{Name: "listType", Value: "map"}}},
	}
	for _, tt := range tests {
		got := parseMarkers([]string{tt.line})
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseMarkers(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestDescriptionDropsMarkersAndJoinsParagraphs(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"one line", []string{"Replicas is the number of pods."}, []string{"Replicas is the number of pods."}},
		{"lines of a paragraph joined", []string{"Replicas is the number", "of pods."}, []string{"Replicas is the number of pods."}},
		{"markers removed", []string{"Port of the Service.", "+kubebuilder:validation:Minimum=1", "+optional"}, []string{"Port of the Service."}},
		{"paragraphs kept apart", []string{"First.", "", "Second", "part."}, []string{"First.", "Second part."}},
		{"only markers", []string{"+optional"}, nil},
		{"blank lines around", []string{"", "  Text.  ", ""}, []string{"Text."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, description(tt.lines)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestKubeLink(t *testing.T) {
	ref := "https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.36/#"
	tests := []struct {
		path, name, want string
	}{
		{"k8s.io/api/core/v1", "ResourceRequirements", "[ResourceRequirements](" + ref + "resourcerequirements-v1-core)"},
		{"k8s.io/api/core/v1", "SecretKeySelector", "[SecretKeySelector](" + ref + "secretkeyselector-v1-core)"},
		{"k8s.io/api/apps/v1", "StatefulSetSpec", "[StatefulSetSpec](" + ref + "statefulsetspec-v1-apps)"},
		{"k8s.io/apimachinery/pkg/apis/meta/v1", "Time", "[Time](" + ref + "time-v1-meta)"},
		{"k8s.io/apimachinery/pkg/apis/meta/v1", "LabelSelector", "[LabelSelector](" + ref + "labelselector-v1-meta)"},
		{"k8s.io/apimachinery/pkg/api/resource", "Quantity", "[Quantity](" + ref + "quantity-resource-core)"},
		{"k8s.io/apimachinery/pkg/util/intstr", "IntOrString", "int or string"},
		{"k8s.io/api/core/v1", "PullPolicy", "string"},
		{"example.com/other", "Thing", "`Thing`"},
	}
	for _, tt := range tests {
		if got := kubeLink(tt.path, tt.name); got != tt.want {
			t.Errorf("kubeLink(%s, %s) = %s, want %s", tt.path, tt.name, got, tt.want)
		}
	}
}

func TestRequirement(t *testing.T) {
	tests := []struct {
		name    string
		markers []marker
		tag     jsonTag
		want    string
	}{
		{"optional marker", []marker{{Name: "optional"}}, jsonTag{Name: "a"}, "Optional"},
		{"required marker beats omitempty", []marker{{Name: "required"}}, jsonTag{Name: "a", OmitEmpty: true}, "Required"},
		{"kubebuilder required", []marker{{Name: "kubebuilder:validation:Required"}}, jsonTag{Name: "a", OmitEmpty: true}, "Required"},
		{"omitempty alone", nil, jsonTag{Name: "a", OmitEmpty: true}, "Optional"},
		{"neither", nil, jsonTag{Name: "a"}, "Required"},
	}
	for _, tt := range tests {
		if got := requirement(tt.markers, tt.tag); got != tt.want {
			t.Errorf("%s: requirement = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestValidations(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"enum", []string{"+kubebuilder:validation:Enum=Always;IfNotPresent"}, []string{"Enum: `Always`, `IfNotPresent`"}},
		{"bounds", []string{"+kubebuilder:validation:Minimum=1", "+kubebuilder:validation:Maximum=65535"}, []string{"Minimum: 1", "Maximum: 65535"}},
		{"pattern with pipe is escaped", []string{"+kubebuilder:validation:Pattern=`^(a|b)$`"}, []string{"Pattern: `^(a\\|b)$`"}},
		{"lengths and items", []string{"+kubebuilder:validation:MaxLength=5", "+kubebuilder:validation:MaxItems=3", "+kubebuilder:validation:items:MaxLength=7"},
			[]string{"Max length: 5", "Max items: 3", "Items: Max length: 7"}},
		{"rule with message", []string{`+kubebuilder:validation:XValidation:rule="self > 0",message="must be <positive>"`}, []string{"Rule: `self > 0` — must be &lt;positive&gt;"}},
		{"map list", []string{"+listType=map", "+listMapKey=name"}, []string{"Unique by `name`"}},
		{"set list", []string{"+listType=set"}, []string{"Unique items"}},
		{"non-validation markers ignored", []string{"+optional", "+kubebuilder:validation:XIntOrString", "+listType=atomic", "+kubebuilder:default=3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, validations(parseMarkers(tt.lines))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCodeSpanSurvivesBackticksAndPipes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a|b", "`a\\|b`"},
		{"a`b", "``a`b``"},
		{"has `tick`", "`` has `tick` ``"},
		{"`edge", "`` `edge ``"},
	}
	for _, tt := range tests {
		if got := code(tt.in); got != tt.want {
			t.Errorf("code(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeTextKeepsProseInsideItsCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain words", "plain words"},
		{"a | b", `a \| b`},
		{"<prefix>/<id>", "&lt;prefix&gt;/&lt;id&gt;"},
		{`names ("*.example.com")`, `names ("\*.example.com")`},
	}
	for _, tt := range tests {
		if got := escapeText(tt.in); got != tt.want {
			t.Errorf("escapeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

const renderSource = `
// Package v1 is a small API.
//
// +groupName=example.dev
package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Widget is a thing.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wd,categories=things
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec WidgetSpec ` + "`json:\"spec\"`" + `
}

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items []Widget ` + "`json:\"items\"`" + `
}

// WidgetSpec is what a widget wants.
// +kubebuilder:validation:XValidation:rule="self.size > 0",message="size must be positive"
type WidgetSpec struct {
	// Size of the widget.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	Size int32 ` + "`json:\"size,omitempty\"`" + `
	// Parts of the widget.
	// +optional
	Parts []Part ` + "`json:\"parts,omitempty\"`" + `
	// Resources of the widget.
	// +optional
	Resources corev1.ResourceRequirements ` + "`json:\"resources,omitempty\"`" + `
	// Color of the widget.
	Color Color ` + "`json:\"color\"`" + `
}

// Part is one part.
type Part struct {
	// Name of the part.
	Name string ` + "`json:\"name\"`" + `
}

// Unused is reachable from no kind.
type Unused struct {
	X string ` + "`json:\"x\"`" + `
}

// Color of a widget.
// +kubebuilder:validation:Enum=Red;Blue
type Color string

const (
	// Red is warm.
	Red Color = "Red"
	// Blue is cold.
	Blue Color = "Blue"
)
`

func TestRenderSmallPackage(t *testing.T) {
	out, err := render([]*apiPackage{parseSource(t, renderSource)})
	if err != nil {
		t.Fatal(err)
	}
	doc := string(out)
	tests := []struct {
		name, want string
	}{
		{"kind facts", "`apiVersion: example.dev/v1` · scope: Namespaced · short names: `wd` · categories: `things` · subresources: `status`"},
		{"typemeta expanded", "| `apiVersion` | string | Required |  |  | `example.dev/v1` |"},
		{"metadata links to the k8s reference", "| `metadata` | [ObjectMeta](https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.36/#objectmeta-v1-meta) | Optional |"},
		{"local type linked", "| `spec` | [WidgetSpec](#v1-widgetspec) | Required |"},
		{"default and bounds", "| `size` | int32 | Optional | `3` | Minimum: 1 | Size of the widget. |"},
		{"slice of local type", "| `parts` | [][Part](#v1-part) | Optional |  |  | Parts of the widget. |"},
		{"k8s type linked", "| `resources` | [ResourceRequirements](https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.36/#resourcerequirements-v1-core) | Optional |"},
		{"enum field takes the type's validation", "| `color` | [Color](#v1-color) | Required |  | Enum: `Red`, `Blue` | Color of the widget. |"},
		{"type rule", "- Rule: `self.size > 0` — size must be positive"},
		{"enum values", "| `Red` | Red is warm. |\n| `Blue` | Blue is cold. |"},
	}
	for _, tt := range tests {
		if !strings.Contains(doc, tt.want) {
			t.Errorf("%s: output lacks %q:\n%s", tt.name, tt.want, doc)
		}
	}
	for _, absent := range []string{"### WidgetList", "### Unused"} {
		if strings.Contains(doc, absent) {
			t.Errorf("output has %q, which is a list or unreachable", absent)
		}
	}
	// Kinds come first, then the reachable types in the order they are met.
	order := []string{"### Widget\n", "### WidgetSpec", "### Part", "### Color"}
	last := -1
	for _, h := range order {
		i := strings.Index(doc, h)
		if i <= last {
			t.Fatalf("section %q out of order (at %d, previous at %d)", h, i, last)
		}
		last = i
	}
}

// docSections reads the generated reference back: for every anchored section,
// its table rows as field name -> the section anchor the type cell links to
// ("" when it links nowhere inside the document).
func docSections(doc []byte) map[string]map[string]string {
	anchorRE := regexp.MustCompile(`^<a id="([^"]+)"></a>$`)
	rowRE := regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]*) \\|")
	linkRE := regexp.MustCompile(`\]\(#([^)]+)\)`)
	sections := map[string]map[string]string{}
	var cur map[string]string
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if m := anchorRE.FindSubmatch(line); m != nil {
			cur = map[string]string{}
			sections[string(m[1])] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if m := rowRE.FindSubmatch(line); m != nil {
			target := ""
			if l := linkRE.FindSubmatch(m[2]); l != nil {
				target = string(l[1])
			}
			cur[string(m[1])] = target
		}
	}
	return sections
}

type crdSchema struct {
	Type       string               `json:"type"`
	Properties map[string]crdSchema `json:"properties"`
	Items      *crdSchema           `json:"items"`
}

type crdFile struct {
	Spec struct {
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema crdSchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// undocumentedCRDFields walks the spec of every version of every CRD in
// crdDir two levels deep and returns the fields the reference lacks, and how
// many it checked. It follows the reference's own links: from the kind's
// section to its spec type, and from a field to its type's section.
func undocumentedCRDFields(t *testing.T, doc []byte, crdDir string) (missing []string, checked int) {
	t.Helper()
	sections := docSections(doc)
	paths, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no CRDs in %s", crdDir)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var crd crdFile
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, v := range crd.Spec.Versions {
			where := v.Name + " " + crd.Spec.Names.Kind
			kindAnchor := anchor(v.Name, crd.Spec.Names.Kind)
			kindRows, ok := sections[kindAnchor]
			if !ok {
				missing = append(missing, where+": no section #"+kindAnchor)
				continue
			}
			spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
			if !ok {
				continue
			}
			specAnchor := kindRows["spec"]
			if specAnchor == "" {
				missing = append(missing, where+": the spec row of #"+kindAnchor+" links to no section")
				continue
			}
			for _, name := range sortedKeys(spec.Properties) {
				prop := spec.Properties[name]
				target, ok := sections[specAnchor][name]
				checked++
				if !ok {
					missing = append(missing, where+": spec."+name+" is not in #"+specAnchor)
					continue
				}
				sub := prop.Properties
				if prop.Items != nil {
					sub = prop.Items.Properties
				}
				// Fields of Kubernetes types link out of the document and
				// are documented there.
				if target == "" {
					continue
				}
				for _, subName := range sortedKeys(sub) {
					checked++
					if _, ok := sections[target][subName]; !ok {
						missing = append(missing, where+": spec."+name+"."+subName+" is not in #"+target)
					}
				}
			}
		}
	}
	return missing, checked
}

func TestEveryCRDSpecFieldIsDocumented(t *testing.T) {
	doc, err := generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	missing, checked := undocumentedCRDFields(t, doc, filepath.Join(repoRoot, "config", "crd", "bases"))
	t.Logf("checked %d CRD fields against the reference", checked)
	if len(missing) > 0 {
		t.Errorf("fields of the CRDs missing from the reference:\n%s", strings.Join(missing, "\n"))
	}
	if checked < 20 {
		t.Fatalf("checked only %d fields; the CRDs or the reference did not parse as expected", checked)
	}
}

func TestCRDFieldCheckFindsRowsRemovedFromTheReference(t *testing.T) {
	doc, err := generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	// Drop the first-level row spec.schedule (NginxBackupSpec) and the
	// second-level row spec.endpoint.interval (Endpoint).
	var kept [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("| `schedule` |")) || bytes.HasPrefix(line, []byte("| `interval` |")) {
			continue
		}
		kept = append(kept, line)
	}
	missing, _ := undocumentedCRDFields(t, bytes.Join(kept, []byte("\n")), filepath.Join(repoRoot, "config", "crd", "bases"))
	want := []string{
		"v1beta1 NginxBackup: spec.schedule is not in #v1beta1-nginxbackupspec",
		"v1beta1 NginxMonitor: spec.endpoint.interval is not in #v1beta1-endpoint",
	}
	if diff := cmp.Diff(want, missing); diff != "" {
		t.Errorf("missing fields (-want +got):\n%s", diff)
	}
}

func sortedKeys(m map[string]crdSchema) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
