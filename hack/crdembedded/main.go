// Command crdembedded completes the generated CRD schema of the Kubernetes
// types the NginxOperator spec embeds (tolerations, affinity, topology
// spread constraints, label selectors, NetworkPolicy peers): it adds the
// rules the apiserver applies to those types in the children the operator
// builds (a StatefulSet, a NetworkPolicy), so admission refuses what the
// child's API would refuse, and names the field.
//
//	go run ./hack/crdembedded config/crd/bases/nginx.operator.dev_nginxoperators.yaml
//
// `make generate` runs it after controller-gen, in place. controller-gen
// takes a field's schema from the embedded type's Go declaration, where no
// marker of ours can go; the rules for those types are therefore stated
// here, once, keyed by Go type (rules.go), and land in the CRD wherever the
// type appears. The CEL rules a schema node's own fields need are affordable
// only with bounds on the lists and strings under them (the apiserver
// estimates an unbounded string at the size of a whole request), so each
// type also gets the bounds its rules need, documented in
// Documentation/nginxoperator.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// roots are the kinds and versions whose schema embeds Kubernetes types
// that get rules, and the Go type of each.
var roots = map[string]reflect.Type{
	"NginxOperator/v1beta1":          reflect.TypeFor[v1beta1.NginxOperator](),
	"NginxGatewayParameters/v1beta1": reflect.TypeFor[v1beta1.NginxGatewayParameters](),
}

func main() {
	apidocs := flag.String("apidocs", "", "instead of completing the CRD files, add the rules they hold for the embedded types to the rows of this API reference (Documentation/api.md), which crd-ref-docs builds from the Go markers alone")
	flag.Parse()
	rows := map[string][]apiextensionsv1.ValidationRule{}
	for _, file := range flag.Args() {
		if err := process(file, *apidocs == "", rows); err != nil {
			fmt.Fprintf(os.Stderr, "crdembedded: %s: %v\n", file, err)
			os.Exit(1)
		}
	}
	// A type in rules that no schema embeds any more is a stale rule.
	for t := range rules {
		if !applied[t] && *apidocs == "" {
			fmt.Fprintf(os.Stderr, "crdembedded: no schema embeds %s: remove its rules\n", t)
			os.Exit(1)
		}
	}
	if *apidocs != "" {
		if err := document(*apidocs, rows); err != nil {
			fmt.Fprintf(os.Stderr, "crdembedded: %s: %v\n", *apidocs, err)
			os.Exit(1)
		}
	}
}

// process completes one CRD file and, when write is set, rewrites it in
// place, keeping controller-gen's layout (a leading document marker, keys in
// order) so that the file changes only where a rule is added. When write is
// not set, the file is taken as completed already, and only read: rows gets
// the rules of the embedded types' elements, by the API reference's row
// (rowKey).
func process(file string, write bool, rows map[string][]apiextensionsv1.ValidationRule) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(in, &crd); err != nil {
		return err
	}
	kind, _ := dig(crd, "spec", "names", "kind").(string)
	versions, _ := dig(crd, "spec", "versions").([]any)
	for _, v := range versions {
		version, _ := v.(map[string]any)
		t, ok := roots[kind+"/"+fmt.Sprint(version["name"])]
		if !ok {
			continue
		}
		schema, _ := dig(version, "schema").(map[string]any)
		if schema == nil {
			return fmt.Errorf("version %v has no schema", version["name"])
		}
		props, err := toProps(schema["openAPIV3Schema"])
		if err != nil {
			return err
		}
		w := &walker{complete: write, rows: rows}
		if err := w.walk(t, props, "."); err != nil {
			return err
		}
		if schema["openAPIV3Schema"], err = fromProps(props); err != nil {
			return err
		}
	}
	if !write {
		return nil
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		next, _ := cur.(map[string]any)
		if next == nil {
			return nil
		}
		cur = next[k]
	}
	return cur
}

func toProps(v any) (*apiextensionsv1.JSONSchemaProps, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var p apiextensionsv1.JSONSchemaProps
	return &p, json.Unmarshal(b, &p)
}

func fromProps(p *apiextensionsv1.JSONSchemaProps) (any, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// applied are the types whose rules went into a schema.
var applied = map[reflect.Type]bool{}

// A walker goes through a schema and its Go types together.
type walker struct {
	// complete applies the rules; otherwise the schema is read as it is.
	complete bool
	// rows collects the rules on the element of each field of ours whose
	// type (or list element type) is an embedded type with rules.
	rows map[string][]apiextensionsv1.ValidationRule
}

// walk visits the schema s of Go type t and everything under it, children
// first, and applies the rules of each type it meets: a type's rules may
// tighten what the rules of the types under it set (a node selector term
// says what its requirements' values are).
func (w *walker) walk(t reflect.Type, s *apiextensionsv1.JSONSchemaProps, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if err := w.walkFields(t, s, at); err != nil {
			return err
		}
	case reflect.Slice:
		if s.Items != nil && s.Items.Schema != nil && t.Elem().Kind() != reflect.Uint8 {
			if err := w.walk(t.Elem(), s.Items.Schema, at+"[]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			if err := w.walk(t.Elem(), s.AdditionalProperties.Schema, at+"{}"); err != nil {
				return err
			}
		}
	}
	if r, ok := rules[t]; ok && w.complete {
		if err := r(s); err != nil {
			return fmt.Errorf("%s (%s): %w", at, t, err)
		}
		applied[t] = true
	}
	return nil
}

func (w *walker) walkFields(t reflect.Type, s *apiextensionsv1.JSONSchemaProps, at string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && strings.Contains(opts, "inline") {
			if err := w.walk(f.Type, s, at); err != nil {
				return err
			}
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		child, ok := s.Properties[name]
		if !ok {
			continue
		}
		if err := w.walk(f.Type, &child, at+"."+name); err != nil {
			return err
		}
		s.Properties[name] = child
		w.collect(t, f, name, &child)
	}
	return nil
}

// collect records the rules on the element of field f (of our struct t)
// when the element is an embedded type with rules.
func (w *walker) collect(t reflect.Type, f reflect.StructField, name string, s *apiextensionsv1.JSONSchemaProps) {
	elem := f.Type
	for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
		elem = elem.Elem()
	}
	if _, ok := rules[elem]; !ok || t.PkgPath() != reflect.TypeFor[v1beta1.NginxOperator]().PkgPath() {
		return
	}
	if s.Items != nil && s.Items.Schema != nil {
		s = s.Items.Schema
	}
	if len(s.XValidations) > 0 {
		w.rows[rowKey(t.Name(), name)] = s.XValidations
	}
}
