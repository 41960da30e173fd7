package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot is the directory of the module's go.mod, found from the working
// directory upwards (go test runs each package in its own directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// InstallPrometheus builds Prometheus and promtool with Kubernetes discovery,
// which Debian's prometheus package lacks.
const InstallPrometheus = "hack/install-prometheus.sh"

// Installed returns the path of binary in the cache directory that the
// project's installer (a script under hack/ that builds it once) prints with
// --print-dir. When it is missing the test fails if tools are required and is
// skipped otherwise, saying which installer to run.
func Installed(t testing.TB, installer, binary string) string {
	t.Helper()
	Integration(t, binary)
	if p, ok := installed(installer, binary); ok {
		return p
	}
	Missing(t, binary+" not found: run `bash "+installer+"` (or `make test-deps`)")
	return ""
}

func installed(installer, binary string) (string, bool) {
	dir, err := InstallerDir(installer)
	if err != nil {
		return "", false
	}
	p := filepath.Join(dir, binary)
	_, err = os.Stat(p)
	return p, err == nil
}

// InstallerDir is the cache directory an installer script under hack/
// builds its binaries into, as it prints it with --print-dir (keyed by the
// pinned versions, outside the clone); an installer that fills several
// directories names the others after --print-dir (which).
func InstallerDir(installer string, which ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	args := append([]string{filepath.Join(root, installer), "--print-dir"}, which...)
	out, err := exec.Command("bash", args...).Output()
	if err != nil {
		return "", fmt.Errorf("bash %s: %w", strings.Join(append([]string{installer}, args[1:]...), " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
