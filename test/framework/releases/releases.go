// Package releases builds earlier releases of the operator from this
// repository's history, for the tests that upgrade from them (test/upgrade
// runs the binary against a control plane; test/realpods/install publishes
// it as an image and upgrades a Helm release from it on a real node).
package releases

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The previous release: the state of main when issue 29 began, tagged
// v0.3.0 (v0.2.0 was 6440406b52a673ee731b64a40f60dd9c3e69851f). Move the
// pin forward when a release is cut; a release that has to roll pods on
// upgrade says so in CHANGELOG.md and moves the pin past itself.
const (
	PreviousVersion = "v0.3.0"
	PreviousCommit  = "d68012ec33b0e6da838c244ad1edf16f64d9f335"
)

// Release is a build of the operator from one commit of this repository.
type Release struct {
	Version string
	// Src is the commit's tree (bundle.yaml, example/, ...).
	Src string
	// Binary is its operator, built with the Makefile's version flags.
	Binary string
}

// Previous extracts PreviousCommit from the repository's history and builds
// its operator, once per machine: both are kept in the user cache
// (NGINX_OPERATOR_CACHE, as the hack/ scripts use) under the commit.
func Previous(t testing.TB) Release {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cacheRoot(t), "releases", PreviousVersion+"-"+PreviousCommit)
	r := Release{Version: PreviousVersion, Src: filepath.Join(dir, "src"), Binary: filepath.Join(dir, "operator")}
	if _, err := os.Stat(r.Binary); err == nil {
		return r
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", PreviousCommit+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("the upgrade tests build the previous release %s from commit %s of this repository's history, which this clone lacks (a shallow clone?): %v %s",
			PreviousVersion, PreviousCommit, err, out)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Built in a directory of its own and renamed into place at the end, so
	// an interrupted build or a concurrent run never leaves half a release.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, root, "bash", "-c", fmt.Sprintf("git archive --format=tar %s | tar -x -C %q", PreviousCommit, src))
	ldflags := fmt.Sprintf("-X github.com/nginx-operator/nginx-operator/pkg/version.Version=%s -X github.com/nginx-operator/nginx-operator/pkg/version.Revision=%s",
		PreviousVersion, PreviousCommit)
	run(t, src, "go", "build", "-ldflags", ldflags, "-o", filepath.Join(tmp, "operator"), "./cmd/operator")
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(r.Binary); statErr != nil {
			t.Fatalf("keeping the build of %s: %v", PreviousVersion, err)
		}
	}
	return r
}

func cacheRoot(t testing.TB) string {
	if dir := os.Getenv("NGINX_OPERATOR_CACHE"); dir != "" {
		return dir
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "nginx-operator")
}

func run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
