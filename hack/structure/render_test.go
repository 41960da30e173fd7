package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The renderer is a pure function of the spec and plain values: it takes
// no function from its caller (a callback could reach a client, a cache or
// the controller's state, and nginx.conf would no longer follow from its
// inputs). No parameter of an exported function and no field of any of
// its types is a function; its imports are held to `only` by
// TestImportsFollowTheLayers (no client, no controller package).
func TestRendererTakesNoFunctionsFromItsCaller(t *testing.T) {
	files, err := filepath.Glob("../../pkg/nginx/render/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.IsExported() {
					checked++
					for _, p := range n.Type.Params.List {
						if hasFunc(p.Type) {
							t.Errorf("%s: %s takes a function (%s)", fset.Position(p.Pos()), n.Name.Name, names(p.Names))
						}
					}
				}
				return false // bodies may use closures of their own
			case *ast.StructType:
				for _, field := range n.Fields.List {
					checked++
					if hasFunc(field.Type) {
						t.Errorf("%s: field %s is a function", fset.Position(field.Pos()), names(field.Names))
					}
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked only %d parameters and fields: did the renderer move?", checked)
	}
}

// hasFunc tells whether a type expression is or holds a function type (a
// map or slice of them, a pointer to one).
func hasFunc(expr ast.Expr) bool {
	found := false
	ast.Inspect(expr, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncType); ok {
			found = true
		}
		return !found
	})
	return found
}

func names(idents []*ast.Ident) string {
	var out []string
	for _, id := range idents {
		out = append(out, id.Name)
	}
	return strings.Join(out, ", ")
}
