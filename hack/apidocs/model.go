package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// apiPackage is one API version as parsed from its Go sources.
type apiPackage struct {
	Group   string
	Version string
	Doc     []string
	// Types by Go name; Order keeps source order so the output does not depend
	// on map iteration.
	Types map[string]*typeInfo
	Order []string
}

// typeInfo is one named type of an API package.
type typeInfo struct {
	Name    string
	Doc     []string // comment lines, markers included
	Struct  *ast.StructType
	Under   string // for non-struct types: the underlying identifier (string, int32, ...)
	Consts  []constInfo
	Imports map[string]string // import name -> path of the declaring file
}

// constInfo is a constant declared with a package type, the values of an
// enum-like string type.
type constInfo struct {
	Name  string
	Value string
	Doc   []string
}

// isRoot reports whether the type is a top-level kind: a root object that is
// not a list.
func (t *typeInfo) isRoot() bool {
	if t.Struct == nil || strings.HasSuffix(t.Name, "List") {
		return false
	}
	for _, m := range parseMarkers(t.Doc) {
		if m.Name == "kubebuilder:object:root" && m.Value != "false" {
			return true
		}
	}
	return false
}

// loadDir parses the API package in dir: every non-test, non-generated Go file.
func loadDir(dir string) (*apiPackage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	return loadFiles(files)
}

// loadFiles builds the package model from parsed files (in the order given).
func loadFiles(files []*ast.File) (*apiPackage, error) {
	p := &apiPackage{Types: map[string]*typeInfo{}, Version: files[0].Name.Name}
	type pendingConst struct {
		typ string
		c   constInfo
	}
	var consts []pendingConst
	for _, f := range files {
		if f.Doc != nil {
			lines := commentLines(f.Doc)
			for _, m := range parseMarkers(lines) {
				if m.Name == "groupName" {
					p.Group = m.Value
				}
			}
			if len(p.Doc) == 0 {
				p.Doc = lines
			}
		}
		imports := map[string]string{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = path
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.TYPE:
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					t := &typeInfo{Name: ts.Name.Name, Doc: commentLines(doc), Imports: imports}
					switch u := ts.Type.(type) {
					case *ast.StructType:
						t.Struct = u
					case *ast.Ident:
						t.Under = u.Name
					default:
						continue
					}
					p.Types[t.Name] = t
					p.Order = append(p.Order, t.Name)
				}
			case token.CONST:
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					typ, ok := vs.Type.(*ast.Ident)
					if !ok {
						continue
					}
					for i, n := range vs.Names {
						if i >= len(vs.Values) {
							break
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return nil, err
						}
						consts = append(consts, pendingConst{typ.Name, constInfo{Name: n.Name, Value: v, Doc: commentLines(vs.Doc)}})
					}
				}
			}
		}
	}
	for _, pc := range consts {
		if t, ok := p.Types[pc.typ]; ok {
			t.Consts = append(t.Consts, pc.c)
		}
	}
	return p, nil
}

// commentLines returns the text of a comment group line by line, without the
// comment markers; nil for no comment.
func commentLines(cg *ast.CommentGroup) []string {
	if cg == nil {
		return nil
	}
	var out []string
	for _, c := range cg.List {
		text := c.Text
		switch {
		case strings.HasPrefix(text, "//"):
			text = strings.TrimPrefix(text, "//")
			text = strings.TrimPrefix(text, " ")
			out = append(out, strings.TrimRight(text, " \t"))
		case strings.HasPrefix(text, "/*"):
			text = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
			for _, l := range strings.Split(text, "\n") {
				out = append(out, strings.TrimSpace(l))
			}
		}
	}
	return out
}

// jsonTag is the part of a struct field's json tag the reference needs.
type jsonTag struct {
	Name      string
	Inline    bool
	OmitEmpty bool
	Skip      bool
}

// parseJSONTag reads the json key of a struct tag literal (with or without its
// backquotes). Present reports whether there was a json key at all.
func parseJSONTag(raw string) (tag jsonTag, present bool) {
	raw = strings.Trim(raw, "`")
	value, ok := reflect.StructTag(raw).Lookup("json")
	if !ok {
		return jsonTag{}, false
	}
	if value == "-" {
		return jsonTag{Skip: true}, true
	}
	parts := strings.Split(value, ",")
	tag.Name = parts[0]
	for _, opt := range parts[1:] {
		switch opt {
		case "inline":
			tag.Inline = true
		case "omitempty", "omitzero":
			tag.OmitEmpty = true
		}
	}
	return tag, true
}

// fieldInfo is one documented JSON field of a struct.
type fieldInfo struct {
	JSONName string
	Type     ast.Expr
	Imports  map[string]string // resolves Type's package names
	Doc      []string
	Tag      jsonTag
	// External is set for an inline embedded type of another package (such as
	// metav1.TypeMeta), which the generator expands itself.
	External string
}

// fields flattens a struct's fields in declaration order: inline embedded
// structs of the same package contribute their own fields in place, and
// fields tagged "-" are dropped.
func (p *apiPackage) fields(t *typeInfo) ([]fieldInfo, error) {
	return p.flatten(t, map[string]bool{})
}

func (p *apiPackage) flatten(t *typeInfo, seen map[string]bool) ([]fieldInfo, error) {
	if seen[t.Name] {
		return nil, fmt.Errorf("inline embedding cycle through %s", t.Name)
	}
	seen[t.Name] = true
	defer delete(seen, t.Name)
	var out []fieldInfo
	for _, f := range t.Struct.Fields.List {
		var tag jsonTag
		present := false
		if f.Tag != nil {
			tag, present = parseJSONTag(f.Tag.Value)
		}
		if tag.Skip {
			continue
		}
		embedded := len(f.Names) == 0
		if embedded && (tag.Inline || !present || tag.Name == "") {
			typ := f.Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			switch e := typ.(type) {
			case *ast.Ident:
				inner, ok := p.Types[e.Name]
				if !ok || inner.Struct == nil {
					return nil, fmt.Errorf("%s embeds %s, which is not a struct of this package", t.Name, e.Name)
				}
				sub, err := p.flatten(inner, seen)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
			case *ast.SelectorExpr:
				out = append(out, fieldInfo{External: exprString(e), Type: e, Imports: t.Imports, Tag: tag})
			default:
				return nil, fmt.Errorf("%s: unsupported embedded field %s", t.Name, exprString(f.Type))
			}
			continue
		}
		if embedded {
			// An embedded struct with a json name is an ordinary field,
			// like metadata of metav1.ObjectMeta.
			out = append(out, fieldInfo{JSONName: tag.Name, Type: f.Type, Imports: t.Imports, Doc: commentLines(f.Doc), Tag: tag})
			continue
		}
		for _, n := range f.Names {
			if !n.IsExported() {
				continue
			}
			name := tag.Name
			if name == "" {
				name = n.Name
			}
			out = append(out, fieldInfo{JSONName: name, Type: f.Type, Imports: t.Imports, Doc: commentLines(f.Doc), Tag: tag})
		}
	}
	return out, nil
}

// exprString renders a type expression as Go source.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.ArrayType:
		return "[]" + exprString(e.Elt)
	case *ast.MapType:
		return "map[" + exprString(e.Key) + "]" + exprString(e.Value)
	default:
		return fmt.Sprintf("%T", e)
	}
}

// reachable lists the package types the roots refer to (roots excluded):
// breadth-first in field order from each root in turn, so the types of one
// kind stay together and a type shared by several kinds comes with the first.
func (p *apiPackage) reachable(roots []string) ([]string, error) {
	seen := map[string]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	var out []string
	for _, r := range roots {
		more, err := p.breadthFirst(r, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

func (p *apiPackage) breadthFirst(root string, seen map[string]bool) ([]string, error) {
	queue := []string{root}
	var out []string
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		t := p.Types[name]
		if t.Struct == nil {
			continue
		}
		fs, err := p.fields(t)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if f.External != "" {
				continue
			}
			local := localTypeName(f.Type)
			if local == "" || seen[local] {
				continue
			}
			if _, ok := p.Types[local]; !ok {
				continue
			}
			seen[local] = true
			out = append(out, local)
			queue = append(queue, local)
		}
	}
	return out, nil
}

// localTypeName is the identifier a field type names after removing pointers,
// slices and map values, or "" for a type of another package.
func localTypeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ArrayType:
			e = x.Elt
		case *ast.MapType:
			e = x.Value
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// roots lists the top-level kinds in name order.
func (p *apiPackage) roots() []string {
	var out []string
	for _, n := range p.Order {
		if p.Types[n].isRoot() {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
