package structure

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/nginx-operator/nginx-operator/"

// layers rank the packages under pkg/ and cmd/: a package imports only
// packages of lower layers, so no controller depends on another's
// internals and the leaves stay leaves. A new package must be given a
// layer here.
var layers = map[string]int{
	// Leaves: no import of the project.
	"pkg/apis/nginx/v1alpha1": 0, "pkg/apis/nginx/v1beta1": 0, "pkg/fsutil": 0, "pkg/naming": 0,
	"pkg/logging": 0, "pkg/version": 0, "pkg/storageversion": 0, "pkg/nginx/conf": 0, "pkg/nginx/regex": 0, "pkg/certmanager": 0,
	// Facts and rules every controller shares.
	"pkg/k8sutil": 1, "pkg/layout": 1, "pkg/routetable": 1, "pkg/metrics": 1, "pkg/validation": 1, "pkg/reloader": 1, "pkg/backup/storage": 1,
	// Pure builders, and the Gateway wing's first pure stage (the graph).
	"pkg/nginx/render": 2, "pkg/nginx/serviceport": 2, "pkg/gateway/conditions": 2, "pkg/gateway/graph": 2, "pkg/nginx/prober": 2,
	"pkg/backup/jobs": 2, "pkg/backup/agent": 2, "pkg/validation/validationtest": 2,
	// The Gateway wing's stages built on its graph: the instance and the
	// statuses.
	"pkg/gateway/instance": 3, "pkg/gateway/status": 3,
	// The controllers and the webhook: none imports another.
	"pkg/nginx": 4, "pkg/monitor": 4, "pkg/backup": 4, "pkg/conversion": 4, "pkg/gateway": 4,
	// The manager that runs them, and the binaries.
	"pkg/operator": 5,
	"cmd/operator": 6, "cmd/nginx-reloader": 6,
}

// only lists, for the packages that promise it, every import beyond the
// standard library they may have: the renderer is a pure function of the
// API types, and the reloader runs in every nginx pod on the standard
// library alone. The test libraries (testLibraries) are imported by the
// renderer's tests and the end-to-end suites alike: they import no
// controller, so a renderer test links no operator, and test/echo is built
// into the node's test server image.
var only = map[string][]string{
	"pkg/nginx/render": {"pkg/apis/nginx/v1beta1", "pkg/nginx/conf", "pkg/layout",
		"k8s.io/api/core/v1", "k8s.io/apimachinery/pkg/api/resource", "k8s.io/utils/ptr"},
	"pkg/reloader": {"pkg/fsutil"},
	// Names and labels need no client, and neither does the layout built
	// on them, which every pure builder imports.
	"pkg/naming": {"k8s.io/apimachinery/pkg/labels"},
	"pkg/layout": {"pkg/naming", "k8s.io/api/core/v1", "k8s.io/utils/ptr"},
	// The Gateway wing's catalog of conditions: Gateway API's and
	// Kubernetes' condition types, and nothing that reads or writes.
	"pkg/gateway/conditions": {"k8s.io/apimachinery/pkg/apis/meta/v1", "sigs.k8s.io/gateway-api/apis/v1"},
	// The Gateway wing's pure stages read no cluster and write nothing: no
	// client, no controller-runtime, no controller (pkg/nginx/regex is the
	// regular expressions' leaf, not the nginx controller). The graph
	// judges with typed verdicts and makes no condition: only the status
	// stage turns verdicts into the catalog's conditions.
	"pkg/gateway/graph": {"pkg/apis/nginx/v1beta1", "pkg/layout", "pkg/naming", "pkg/validation", "pkg/nginx/regex",
		"k8s.io/api/core/v1", "k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/labels", "k8s.io/apimachinery/pkg/runtime",
		"k8s.io/apimachinery/pkg/types", "k8s.io/apimachinery/pkg/util/validation/field", "k8s.io/utils/ptr", "sigs.k8s.io/gateway-api/apis/v1"},
	"pkg/gateway/instance": {"pkg/apis/nginx/v1beta1", "pkg/gateway/graph", "k8s.io/utils/ptr", "sigs.k8s.io/gateway-api/apis/v1"},
	"pkg/gateway/status": {"pkg/apis/nginx/v1beta1", "pkg/gateway/conditions", "pkg/gateway/graph",
		"k8s.io/apimachinery/pkg/api/meta", "k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/types", "k8s.io/utils/ptr",
		"sigs.k8s.io/gateway-api/apis/v1"},
	"pkg/fsutil": {},
	"test/echo":  {"golang.org/x/net/websocket"},
	"test/clientchecks": {"pkg/apis/nginx/v1beta1", "test/echo", "test/tools", "golang.org/x/net/websocket",
		"k8s.io/api/core/v1", "k8s.io/apimachinery/pkg/api/resource", "k8s.io/utils/ptr"},
}

// testLibraries are the packages under test/ that the tiers share.
var testLibraries = []string{"test/echo", "test/clientchecks"}

type listed struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// packages lists the module's packages under pkg/ and cmd/, or those of
// paths, with go list.
func packages(t *testing.T, paths ...string) []listed {
	t.Helper()
	patterns := []string{module + "pkg/...", module + "cmd/..."}
	if len(paths) > 0 {
		patterns = nil
		for _, p := range paths {
			patterns = append(patterns, module+p)
		}
	}
	out, err := exec.Command("go", append([]string{"list", "-json"}, patterns...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// standard tells whether path is in Go's standard library (no dot in its
// first element).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestImportsFollowTheLayers(t *testing.T) {
	for _, p := range packages(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		layer, ok := layers[name]
		if !ok {
			t.Errorf("%s has no layer: add it to hack/structure's layers", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if ours {
				switch depLayer, ok := layers[dep]; {
				case strings.HasPrefix(dep, "test/") || strings.HasPrefix(dep, "hack/"):
					t.Errorf("%s imports %s: production code never imports tests or tools", name, dep)
				case ok && depLayer >= layer:
					t.Errorf("%s (layer %d) imports %s (layer %d): against the layers", name, layer, dep, depLayer)
				}
			}
			keepsItsPromise(t, name, imp)
		}
	}
}

func TestTestLibrariesImportOnlyWhatTheyPromise(t *testing.T) {
	for _, p := range packages(t, testLibraries...) {
		name := strings.TrimPrefix(p.ImportPath, module)
		if _, promised := only[name]; !promised {
			t.Errorf("%s promises nothing: list its imports in hack/structure's only", name)
		}
		for _, imp := range p.Imports {
			keepsItsPromise(t, name, imp)
		}
	}
}

// keepsItsPromise fails t when package name promised (only) not to import imp.
func keepsItsPromise(t *testing.T, name, imp string) {
	t.Helper()
	dep := strings.TrimPrefix(imp, module)
	if allowed, promised := only[name]; promised && !standard(imp) && !slices.Contains(allowed, dep) {
		t.Errorf("%s imports %s; it may import only %v beside the standard library", name, imp, allowed)
	}
}

// maxFunctionLines bounds a production function anywhere in the module:
// one a reader can hold in mind.
const maxFunctionLines = 70

// generatedHeader is the line Go's convention (go help generate) puts in a
// generated file; such files are exempt, as nobody reads them to change them.
var generatedHeader = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// productionFiles lists the module's Go files that are not tests and not
// generated: pkg/, cmd/, hack/, config/ and the helper packages under test/
// alike. It skips what the go tool skips (testdata, directories starting
// with "." or "_") and any nested module.
func productionFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !generatedHeader.Match(src) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestEveryProductionFunctionOfTheModuleIsAtMost70Lines(t *testing.T) {
	files := productionFiles(t, "../..")
	if len(files) == 0 {
		t.Fatal("no production Go file found under ../..: the walk is broken")
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFunctionLines {
				t.Errorf("%s: %s is %d lines, more than %d", fset.Position(fn.Pos()), fn.Name.Name, lines, maxFunctionLines)
			}
		}
	}
}

// The unit tier (make test-unit, -tags unit) must not link the whole
// operator into its test binaries, or touching a test helper relinks
// minutes of them: a test file outside test/'s end-to-end suites that runs
// the operator in-process carries //go:build !unit.
func TestInProcessOperatorTestsStayOutOfTheUnitTier(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{$d := .Dir}}{{range .TestGoFiles}}{{$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$d}}/{{.}} {{end}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	e2e := regexp.MustCompile(`/test/(e2e|chaos|upgrade|realpods|bench|hostile)(/|$)`)
	for _, file := range strings.Fields(string(out)) {
		if e2e.MatchString(filepath.Dir(file)) {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), `"`+module+`test/framework/inprocess"`) && !strings.HasPrefix(string(src), "//go:build !unit\n") {
			t.Errorf("%s runs the operator in-process but lacks //go:build !unit", file)
		}
	}
}
