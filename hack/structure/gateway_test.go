package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The Gateway wing's statuses are decided in one place: every Gateway API
// condition it writes is made by a constructor of pkg/gateway/conditions,
// the catalog; no other production file of pkg/gateway builds a
// metav1.Condition of its own. And no regular expression reads the
// instance's field paths to find which route an error is of: each route
// is judged as it is translated.
func TestGatewayConditionsAreMadeOnlyInTheCatalog(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("../../pkg/gateway", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.Contains(filepath.ToSlash(path), "pkg/gateway/conditions/") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Condition" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "metav1" {
						t.Errorf("%s: a metav1.Condition made outside pkg/gateway/conditions", fset.Position(n.Pos()))
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && (strings.Contains(n.Value, `spec\.config`) || strings.Contains(n.Value, `spec\\.config`)) {
					t.Errorf("%s: a regular expression over the instance's field paths", fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked %d files of pkg/gateway", checked)
	}
}

// A Gateway's translation runs once per reconcile: Translate is called at
// one place of the wing's production code, the Gateway reconcile, outside
// any loop (each route is judged as it is placed, so no round translates
// again without the routes a check refused).
func TestAGatewayIsTranslatedOncePerReconcile(t *testing.T) {
	fset := token.NewFileSet()
	var calls []string
	err := filepath.WalkDir("../../pkg/gateway", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var loops []ast.Node
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ForStmt, *ast.RangeStmt:
					loops = append(loops, n)
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "Translate" {
						where := fn.Name.Name
						for _, l := range loops {
							if l.Pos() <= n.Pos() && n.End() <= l.End() {
								where += " (in a loop)"
							}
						}
						calls = append(calls, where)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != "reconcile" {
		t.Errorf("Translate is called in %v, want once, in the Gateway reconcile and outside any loop", calls)
	}
}
