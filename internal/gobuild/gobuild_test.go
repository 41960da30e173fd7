package gobuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

func writeModule(t *testing.T, dir, message string) {
	t.Helper()
	for name, content := range map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Print(" + message + ") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func output(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestABinaryBuiltFromTheSameSourcesIsNotLinkedAgain(t *testing.T) {
	tools.Integration(t, "the go command")
	t.Setenv("NGINX_OPERATOR_GOBUILD_CACHE", t.TempDir())
	src := t.TempDir()
	writeModule(t, src, `"one"`)
	ctx := context.Background()
	bin, err := Build(ctx, src, ".", "hello", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(ctx, src, ".", "hello", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again != bin {
		t.Errorf("the same build has two places: %s and %s", bin, again)
	}
	// go build writes a new file when it links (and only touches one it
	// keeps).
	if info, _ := os.Stat(again); !os.SameFile(first, info) {
		t.Errorf("the binary was linked again, though nothing changed")
	}
	if got := output(t, again); got != "one" {
		t.Errorf("the binary prints %q, want one", got)
	}

	writeModule(t, src, `"two"`)
	changed, err := Build(ctx, src, ".", "hello", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(changed); os.SameFile(first, info) {
		t.Errorf("the same file after a change of its source")
	}
	if got := output(t, changed); got != "two" {
		t.Errorf("after a change of its source the binary prints %q, want two", got)
	}

	stripped, err := Build(ctx, src, ".", "hello", []string{"-ldflags=-s -w"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stripped == changed {
		t.Errorf("builds with other flags share the place %s", stripped)
	}
}

func TestATrimmedBinaryIsOneForEveryClone(t *testing.T) {
	tools.Integration(t, "the go command")
	t.Setenv("NGINX_OPERATOR_GOBUILD_CACHE", t.TempDir())
	ctx := context.Background()
	one, two := t.TempDir(), t.TempDir()
	writeModule(t, one, `"same"`)
	writeModule(t, two, `"same"`)
	trimmed := []string{"-trimpath"}
	first, err := Build(ctx, one, ".", "hello", trimmed, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(first)
	second, err := Build(ctx, two, ".", "hello", trimmed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(second); second != first || !os.SameFile(before, after) {
		t.Errorf("two clones of the same sources built with -trimpath link twice (%s, %s)", first, second)
	}
	if untrimmed, err := Build(ctx, two, ".", "hello", nil, nil); err != nil || untrimmed == first {
		t.Errorf("an untrimmed build shares the trimmed one's place (%s, %v)", untrimmed, err)
	}
}

func TestPlacesUnusedForDaysAreSwept(t *testing.T) {
	root := t.TempDir()
	old, recent := filepath.Join(root, "old-1"), filepath.Join(root, "recent-1")
	for _, d := range []string{old, recent} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-unusedFor - time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	sweep(root)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a place unused for %s is still there (%v)", unusedFor+time.Hour, err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a place just used was swept: %v", err)
	}
}
