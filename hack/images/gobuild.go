package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nginx-operator/nginx-operator/internal/gobuild"
)

// modulePath is the project's module; the version package's variables are
// set under it.
const modulePath = "github.com/nginx-operator/nginx-operator"

// operatorLDFlags are the linker flags of the Dockerfile's and the
// Makefile's builds: stripped, with the version and revision stamped in. A
// test compares them with the Dockerfile's, so the two cannot drift.
func operatorLDFlags(version, revision string) string {
	return "-s -w -X " + modulePath + "/pkg/version.Version=" + version +
		" -X " + modulePath + "/pkg/version.Revision=" + revision
}

// goBuild builds the main package pkg of the module at root as a static
// binary for linux on the architecture goarch and returns its path: without
// cgo, Go cross-compiles with no other toolchain. -trimpath keeps the build
// directory out of the binary, so every clone builds the same bytes. The
// binary is kept in the user's cache (internal/gobuild): the test packages
// that each build the images link it once.
func goBuild(ctx context.Context, root, pkg, ldflags, goarch string) (string, error) {
	bin, err := gobuild.Build(ctx, root, pkg, "", []string{"-trimpath", "-ldflags", ldflags},
		[]string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + goarch})
	if err != nil {
		return "", fmt.Errorf("for linux/%s: %w", goarch, err)
	}
	return bin, nil
}

// moduleRoot is the directory of the project's go.mod, found from the
// working directory as the go command finds it.
func moduleRoot() (string, error) {
	out, err := exec.Command(gobuild.GoTool(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside the %s module: run from the repository", modulePath)
	}
	return filepath.Dir(gomod), nil
}

// gitVersion returns what the Makefile's VERSION and REVISION default to,
// with the same fallbacks when git or tags are missing.
func gitVersion(root string) (version, revision string) {
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	version, revision = git("describe", "--tags", "--always", "--dirty"), git("rev-parse", "HEAD")
	if version == "" {
		version = "v0.0.0-dev"
	}
	if revision == "" {
		revision = "unknown"
	}
	return version, revision
}
