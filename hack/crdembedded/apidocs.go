package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/nginx-operator/nginx-operator/hack/internal/mdtable"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// rowKey names a row of the API reference: the anchor of the section of
// the Go type (v1beta1-podsettings) and the field's JSON name.
func rowKey(typeName, field string) string {
	return "v1beta1-" + strings.ToLower(typeName) + " " + field
}

// document adds to the Validation cell of each row in rows its rules, as the
// reference shows a marker's rule ("Rule: `…` — message"): crd-ref-docs
// reads the Go markers, which cannot describe an embedded Kubernetes type.
func document(file string, rows map[string][]apiextensionsv1.ValidationRule) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	lines := strings.Split(string(in), "\n")
	anchor, done := "", map[string]bool{}
	for i, line := range lines {
		if a, ok := strings.CutPrefix(line, `<a id="`); ok {
			anchor, _, _ = strings.Cut(a, `"`)
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := mdtable.Cells(line)
		if len(cells) != 6 {
			continue
		}
		key := rowKey(strings.TrimPrefix(anchor, "v1beta1-"), strings.Trim(cells[0], "`"))
		rs, ok := rows[key]
		if !ok {
			continue
		}
		var shown []string
		if cells[4] != "" {
			shown = append(shown, cells[4])
		}
		for _, r := range rs {
			shown = append(shown, "Rule: "+code(r.Rule)+" — "+escape(r.Message))
		}
		cells[4] = strings.Join(shown, "<br>")
		lines[i] = "| " + strings.Join(cells, " | ") + " |"
		done[key] = true
	}
	for key := range rows {
		if !done[key] {
			return fmt.Errorf("no row %s", key)
		}
	}
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644)
}

func code(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }

func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`).Replace(s)
}
