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

// Pin is a release: its version and the commit it was cut from.
type Pin struct{ Version, Commit string }

// Previous is the last release, v0.3.0: the state of main when issue 29
// began. The Helm upgrade test (test/realpods/install) upgrades from it.
// Move it forward when a release is cut; a release that has to roll pods on
// upgrade says so in CHANGELOG.md and moves the pin past itself.
var Previous = Pin{Version: "v0.3.0", Commit: "d68012ec33b0e6da838c244ad1edf16f64d9f335"}

// BookEraUpgrade is the release test/upgrade starts from, v0.2.0: the last
// one that starts on a cluster of the book's operator. v0.3.0 does not: its
// caches list the v1alpha1-stored objects through the conversion webhook
// before its injector, which waits for those caches, makes the CRD trust
// the webhook. This release configures the CRD before its caches start
// (pkg/conversion, trustAtStart), so the next release can be pinned here.
var BookEraUpgrade = Pin{Version: "v0.2.0", Commit: "6440406b52a673ee731b64a40f60dd9c3e69851f"}

// Release is a build of the operator from one commit of this repository.
type Release struct {
	Version string
	// Commit is the commit it was built from.
	Commit string
	// Src is the commit's tree (bundle.yaml, example/, ...).
	Src string
	// Binary is its operator, built with the Makefile's version flags.
	Binary string
}

// Build extracts p's commit from the repository's history and builds its
// operator, once per machine: both are kept in the user cache
// (NGINX_OPERATOR_CACHE, as the hack/ scripts use) under the commit.
func Build(t testing.TB, p Pin) Release {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cacheRoot(t), "releases", p.Version+"-"+p.Commit)
	r := Release{Version: p.Version, Commit: p.Commit, Src: filepath.Join(dir, "src"), Binary: filepath.Join(dir, "operator")}
	if _, err := os.Stat(r.Binary); err == nil {
		return r
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", p.Commit+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("the upgrade tests build release %s from commit %s of this repository's history, which this clone lacks (a shallow clone?): %v %s",
			p.Version, p.Commit, err, out)
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
	run(t, root, "bash", "-c", fmt.Sprintf("git archive --format=tar %s | tar -x -C %q", p.Commit, src))
	ldflags := fmt.Sprintf("-X github.com/nginx-operator/nginx-operator/pkg/version.Version=%s -X github.com/nginx-operator/nginx-operator/pkg/version.Revision=%s",
		p.Version, p.Commit)
	run(t, src, "go", "build", "-ldflags", ldflags, "-o", filepath.Join(tmp, "operator"), "./cmd/operator")
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(r.Binary); statErr != nil {
			t.Fatalf("keeping the build of %s: %v", p.Version, err)
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
