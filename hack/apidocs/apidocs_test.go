// Package apidocs checks Documentation/api.md, which `make apidocs` generates
// with crd-ref-docs (a go.mod tool) from the Go types in pkg/apis and the
// templates in this directory: that the committed file is fresh, that the
// generation is deterministic, and that it documents what the CRDs in
// config/crd/bases accept.
package apidocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/hack/internal/mdtable"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

const repoRoot = "../.."

// generate runs the Makefile's apidocs target into a temporary file, so the
// test checks exactly what `make apidocs` writes.
func generate(t *testing.T) []byte {
	t.Helper()
	tools.Integration(t, "make and crd-ref-docs")
	out := filepath.Join(t.TempDir(), "api.md")
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", repoRoot, "apidocs", "APIDOCS_OUT="+out)
	// Not the flags of a make that runs this test: its jobserver is not ours.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// With -s, make and crd-ref-docs (--log-level=WARN) print only
	// warnings and errors.
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		t.Fatalf("make apidocs: %v\n%s", err, output.String())
	}
	if output.Len() > 0 {
		t.Errorf("make apidocs printed warnings:\n%s", output.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var (
	freshOnce sync.Once
	fresh     []byte
)

// freshReference generates the reference once per test binary.
func freshReference(t *testing.T) []byte {
	t.Helper()
	tools.Integration(t, "make and crd-ref-docs")
	freshOnce.Do(func() { fresh = generate(t) })
	if fresh == nil {
		t.Fatal("generation failed")
	}
	return fresh
}

func TestCommittedReferenceMatchesFreshGeneration(t *testing.T) {
	want := freshReference(t)
	got, err := os.ReadFile(filepath.Join(repoRoot, "Documentation", "api.md"))
	if err != nil {
		t.Fatalf("reading the committed reference: %v (run make apidocs)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("Documentation/api.md is stale: run make apidocs (-fresh +committed):\n%s", diff)
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	first := freshReference(t)
	for i := 0; i < 2; i++ {
		if diff := cmp.Diff(string(first), string(generate(t))); diff != "" {
			t.Fatalf("run %d differs from the first:\n%s", i+2, diff)
		}
	}
}

// section is what the reference says about one type: its field rows, the
// type-level rules and, for a kind, its printer columns.
type section struct {
	rows    map[string]row
	rules   []string // "- Rule: ..." lines, after "Rule: "
	columns []string // "name jsonPath" of the printer column rows
}

// row is one line of a field table.
type row struct {
	typ, required, def, validation, description string
	// link is the anchor the type cell links to inside the document, or "".
	link string
}

var (
	anchorRE = regexp.MustCompile(`^<a id="([^"]+)"></a>$`)
	linkRE   = regexp.MustCompile(`\]\(#([^)]+)\)`)
)

// cells splits a markdown table row into its cells (mdtable.Cells).
func cells(line string) []string { return mdtable.Cells(line) }

// parseReference reads the generated reference back into sections by anchor.
func parseReference(doc []byte) map[string]*section {
	sections := map[string]*section{}
	var cur *section
	table := ""
	for _, line := range strings.Split(string(doc), "\n") {
		if m := anchorRE.FindStringSubmatch(line); m != nil {
			cur = &section{rows: map[string]row{}}
			sections[m[1]] = cur
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case line == "":
			table = ""
		case strings.HasPrefix(line, "- Rule: "):
			cur.rules = append(cur.rules, strings.TrimPrefix(line, "- Rule: "))
		case strings.HasPrefix(line, "| Field |"), strings.HasPrefix(line, "| Column |"):
			table = strings.Fields(line)[1]
		case strings.HasPrefix(line, "|---"):
		case table == "Column" && strings.HasPrefix(line, "|"):
			c := cells(line)
			cur.columns = append(cur.columns, c[0]+" "+strings.Trim(c[2], "`"))
		case table == "Field" && strings.HasPrefix(line, "| `"):
			c := cells(line)
			if len(c) != 6 {
				continue
			}
			r := row{typ: c[1], required: c[2], def: c[3], validation: c[4], description: c[5]}
			if l := linkRE.FindStringSubmatch(c[1]); l != nil {
				r.link = l[1]
			}
			cur.rows[strings.Trim(c[0], "`")] = r
		}
	}
	return sections
}

// unescape undoes the escaping of prose in table cells.
func unescape(s string) string {
	return strings.NewReplacer(`\|`, "|", "&lt;", "<", "&gt;", ">", `\*`, "*").Replace(s)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func code(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// checker compares the reference with the CRDs and collects what differs.
type checker struct {
	sections map[string]*section
	problems []string
	checked  int
	walked   map[string]bool
}

func (c *checker) problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func loadCRDs(t *testing.T) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

// checkReference walks every version of every CRD and reports what the
// reference lacks or gets wrong.
func checkReference(doc []byte, crds []apiextensionsv1.CustomResourceDefinition) *checker {
	c := &checker{sections: parseReference(doc), walked: map[string]bool{}}
	for _, crd := range crds {
		kind := crd.Spec.Names.Kind
		for _, v := range crd.Spec.Versions {
			anchor := v.Name + "-" + strings.ToLower(kind)
			sec, ok := c.sections[anchor]
			if !ok {
				c.problem("%s %s: no section #%s", v.Name, kind, anchor)
				continue
			}
			for _, col := range v.AdditionalPrinterColumns {
				if !slices.Contains(sec.columns, col.Name+" "+col.JSONPath) {
					c.problem("%s %s: printer column %q (%s) is not in #%s", v.Name, kind, col.Name, col.JSONPath, anchor)
				}
			}
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				c.problem("%s %s: the CRD has no schema", v.Name, kind)
				continue
			}
			c.walk(v.Name+" "+kind, anchor, v.Schema.OpenAPIV3Schema, true)
		}
	}
	return c
}

// walk checks the properties of schema against the section of anchor and
// follows the links of its rows to the sections of their types.
func (c *checker) walk(path, anchor string, schema *apiextensionsv1.JSONSchemaProps, root bool) {
	if c.walked[anchor] {
		return
	}
	c.walked[anchor] = true
	sec := c.sections[anchor]
	if sec == nil {
		c.problem("%s: no section #%s", path, anchor)
		return
	}
	if root {
		for _, rule := range schema.XValidations {
			if !slices.ContainsFunc(sec.rules, func(r string) bool { return strings.HasPrefix(r, code(rule.Rule)) }) {
				c.problem("%s: rule %q is not in #%s", path, rule.Message, anchor)
			}
		}
	}
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		prop := schema.Properties[name]
		where := path + ": " + name
		c.checked++
		r, ok := sec.rows[name]
		if !ok {
			c.problem("%s is not in #%s", where, anchor)
			continue
		}
		want := "Optional"
		// apiVersion and kind are optional in the schema, yet the API
		// server needs them in every object it is sent.
		if slices.Contains(schema.Required, name) || root && (name == "apiVersion" || name == "kind") {
			want = "Required"
		}
		if r.required != want {
			c.problem("%s is %s in the CRD, %s in #%s", where, want, r.required, anchor)
		}
		if !(root && (name == "apiVersion" || name == "kind")) && oneLine(prop.Description) != oneLine(unescape(r.description)) {
			c.problem("%s: description %q, the CRD's is %q", where, unescape(r.description), oneLine(prop.Description))
		}
		c.checkDefault(where, prop.Default, r.def)
		for _, v := range validations(&prop, "") {
			// The value rules of int-or-string types (IntOrString,
			// Quantity) come with the type, which the row names.
			if !prop.XIntOrString && !strings.Contains(r.validation, v) {
				c.problem("%s: %q is not among its validations %q", where, v, r.validation)
			}
		}
		// Rules and bounds of an element or of a struct: on the row, or
		// in the section of the type the row links to.
		elem := &prop
		if prop.Items != nil && prop.Items.Schema != nil {
			elem = prop.Items.Schema
			for _, v := range validations(elem, "Items: ") {
				if elem.Type != "object" && !strings.Contains(r.validation, v) {
					c.problem("%s: %q is not among its validations %q", where, v, r.validation)
				}
			}
		} else if prop.AdditionalProperties != nil && prop.AdditionalProperties.Schema != nil {
			elem = prop.AdditionalProperties.Schema
		}
		var linked *section
		if r.link != "" {
			linked = c.sections[r.link]
		}
		for _, rule := range elem.XValidations {
			inRow := strings.Contains(r.validation, code(rule.Rule))
			inSection := linked != nil && slices.ContainsFunc(linked.rules, func(s string) bool { return strings.HasPrefix(s, code(rule.Rule)) })
			if !inRow && !inSection {
				c.problem("%s: rule %q is neither in its row nor in the section of its type", where, rule.Message)
			}
		}
		if r.link != "" && elem.Type == "object" && len(elem.Properties) > 0 {
			c.walk(path+"."+name, r.link, elem, false)
		}
	}
}

// validations lists the texts the reference shows for the value rules of a
// schema (not its CEL rules, which the caller looks up).
func validations(s *apiextensionsv1.JSONSchemaProps, prefix string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, prefix+fmt.Sprintf(format, args...)) }
	if len(s.Enum) > 0 {
		var vs []string
		for _, e := range s.Enum {
			var v any
			if err := json.Unmarshal(e.Raw, &v); err != nil {
				vs = append(vs, string(e.Raw))
				continue
			}
			vs = append(vs, code(fmt.Sprint(v)))
		}
		add("Enum: %s", strings.Join(vs, ", "))
	}
	if s.Minimum != nil {
		add("Minimum: %s", number(*s.Minimum))
	}
	if s.Maximum != nil {
		add("Maximum: %s", number(*s.Maximum))
	}
	for _, b := range []struct {
		label string
		v     *int64
	}{
		{"Min length", s.MinLength}, {"Max length", s.MaxLength},
		{"Min items", s.MinItems}, {"Max items", s.MaxItems},
		{"Min properties", s.MinProperties}, {"Max properties", s.MaxProperties},
	} {
		if b.v != nil {
			add("%s: %d", b.label, *b.v)
		}
	}
	if s.Pattern != "" {
		add("Pattern: %s", code(s.Pattern))
	}
	if s.XListType != nil && *s.XListType == "set" {
		add("Unique items")
	}
	if s.XListType != nil && *s.XListType == "map" {
		var keys []string
		for _, k := range s.XListMapKeys {
			keys = append(keys, code(k))
		}
		add("Unique by %s", strings.Join(keys, ", "))
	}
	return out
}

// checkDefault compares a CRD default with the Default cell: a code span
// holding the string itself or the JSON of any other value.
func (c *checker) checkDefault(where string, def *apiextensionsv1.JSON, cell string) {
	if def == nil {
		if cell != "" {
			c.problem("%s: default %s, the CRD has none", where, cell)
		}
		return
	}
	var want, got any
	if err := json.Unmarshal(def.Raw, &want); err != nil {
		c.problem("%s: CRD default %s: %v", where, def.Raw, err)
		return
	}
	text := strings.Trim(cell, "`")
	if s, ok := want.(string); ok {
		if text != s {
			c.problem("%s: default %s, the CRD's is %q", where, cell, s)
		}
		return
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil || !cmp.Equal(want, got) {
		c.problem("%s: default %s, the CRD's is %s", where, cell, def.Raw)
	}
}

func TestReferenceDocumentsWhatTheCRDsAccept(t *testing.T) {
	c := checkReference(freshReference(t), loadCRDs(t))
	t.Logf("checked %d fields in %d sections against the CRDs", c.checked, len(c.walked))
	if len(c.problems) > 0 {
		t.Errorf("the reference differs from the CRDs (run make generate, which rebuilds both; then fix the templates in hack/apidocs/templates or the Go markers):\n%s", strings.Join(c.problems, "\n"))
	}
	if c.checked < 150 {
		t.Fatalf("checked only %d fields; the CRDs or the reference did not parse as expected", c.checked)
	}
}

// TestCRDCheckFindsDefects damages a correct reference and expects the check
// to name each defect.
func TestCRDCheckFindsDefects(t *testing.T) {
	doc := string(freshReference(t))
	crds := loadCRDs(t)
	baseline := checkReference([]byte(doc), crds).problems
	damage := []struct{ old, new string }{
		// a field dropped: spec.schedule of NginxBackup
		{"| `schedule` | string | Optional |  | Max length: 128 |", "| `dropped` | string | Optional |  | Max length: 128 |"},
		// a required field shown as optional
		{"| `instance` | string | Required |", "| `instance` | string | Optional |"},
		// a bound lost
		{"| `keepLast` | int32 | Optional |  | Minimum: 1<br>Maximum: 1000 |", "| `keepLast` | int32 | Optional |  | Minimum: 1 |"},
		// a default changed
		{"| `interval` | string | Optional | `30s` |", "| `interval` | string | Optional | `1m` |"},
		// a printer column dropped
		{"| Schedule | string | `.spec.schedule` |", "| Cron | string | `.spec.schedule` |"},
		// a type-level rule dropped
		{"- Rule: `has(self.s3) != has(self.pvc)`", "- Note: `has(self.s3) != has(self.pvc)`"},
	}
	for _, d := range damage {
		if strings.Count(doc, d.old) != 1 {
			t.Fatalf("the reference has %d lines like %q; update this test", strings.Count(doc, d.old), d.old)
		}
		doc = strings.Replace(doc, d.old, d.new, 1)
	}
	var got []string
	for _, p := range checkReference([]byte(doc), crds).problems {
		if !slices.Contains(baseline, p) {
			got = append(got, p)
		}
	}
	want := []string{
		`v1beta1 NginxBackup.spec: destination: rule "set exactly one of s3 or pvc" is neither in its row nor in the section of its type`,
		"v1beta1 NginxBackup: printer column \"Schedule\" (.spec.schedule) is not in #v1beta1-nginxbackup",
		"v1beta1 NginxBackup.spec: instance is Required in the CRD, Optional in #v1beta1-nginxbackupspec",
		`v1beta1 NginxBackup.spec.retention: keepLast: "Maximum: 1000" is not among its validations "Minimum: 1"`,
		"v1beta1 NginxBackup.spec: schedule is not in #v1beta1-nginxbackupspec",
		"v1beta1 NginxMonitor.spec.endpoint: interval: default `1m`, the CRD's is \"30s\"",
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems found (-want +got):\n%s", diff)
	}
}

func TestCells(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"| `a` | b |", []string{"`a`", "b"}},
		{"| `a\\|b` | c \\| d |  |", []string{"`a\\|b`", "c \\| d", ""}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, cells(tt.line)); diff != "" {
			t.Errorf("cells(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}
