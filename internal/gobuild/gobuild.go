// Package gobuild builds the module's main packages for the tests and for
// hack/images into the user's cache, where they outlive the process that
// built them: `go build -o` leaves a binary alone when its build ID says it
// was linked from the same sources and flags, so every test package after
// the first that needs the operator (and every later run of make test in
// the same clone) takes the binary in about a second instead of linking it
// again (8 to 10 s of CPU for the operator, the pause and reloader programs
// a few each).
//
// A binary's place is named by the package, the flags and the environment
// added, and by the directory it is built in unless the flags hold
// -trimpath: only then is the binary the same from every clone (so a make
// test in a fresh clone, as CI runs, links the images' programs only when
// the sources changed), and without it two clones never share a binary. A
// build holds a lock on its place, so two test processes asking at once
// link it once. Places unused for a few days are removed.
package gobuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// unusedFor is how long a place may go unused before a build removes it.
const unusedFor = 72 * time.Hour

// Build runs `go build flags... -o <place>/<name> pkg` in dir with env added
// to the process's environment, and returns the binary's path. pkg is what
// go build accepts (./cmd/operator, an import path); name is the binary's
// file name, the last element of pkg when empty.
func Build(ctx context.Context, dir, pkg, name string, flags, env []string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if name == "" {
		name = filepath.Base(strings.TrimSuffix(pkg, "/"))
	}
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	sweep(root)
	from := abs
	if slices.Contains(flags, "-trimpath") {
		from = ""
	}
	place := filepath.Join(root, placeName(from, pkg, name, flags, env))
	if err := os.MkdirAll(place, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(place, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	now := time.Now()
	_ = os.Chtimes(place, now, now) // used: kept by the sweep
	bin := filepath.Join(place, name)
	cmd := exec.CommandContext(ctx, GoTool(), append(append([]string{"build"}, flags...), "-o", bin, pkg)...)
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// cacheRoot is the directory of the places: NGINX_OPERATOR_GOBUILD_CACHE,
// else nginx-operator/gobuild in the user's cache directory.
func cacheRoot() (string, error) {
	if dir := os.Getenv("NGINX_OPERATOR_GOBUILD_CACHE"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "nginx-operator", "gobuild"), nil
}

// placeName names a binary's place by everything that makes it differ.
func placeName(dir, pkg, name string, flags, env []string) string {
	h := sha256.New()
	for _, part := range append(append([]string{dir, pkg, name, runtime.Version()}, flags...), env...) {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return name + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// sweep removes the places under root unused for unusedFor.
func sweep(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() || time.Since(info.ModTime()) < unusedFor {
			continue
		}
		_ = os.RemoveAll(filepath.Join(root, e.Name()))
	}
}

// lock takes an exclusive lock on the file path, waiting for it.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// GoTool is the go command: the one on PATH, else the toolchain's own (go
// test and go run may not put it on PATH).
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
