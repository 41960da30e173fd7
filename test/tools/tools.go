// Package tools finds the external programs tests run for real (nginx,
// promtool, prometheus). It imports nothing from Kubernetes on purpose: fuzz
// targets of packages whose tests use it stay fast to instrument.
package tools

import (
	"os"
	"os/exec"
	"testing"
)

// Required is true when a missing tool must fail the tests rather than skip
// them: in CI, or when a developer asks for it.
func Required() bool {
	return os.Getenv("CI") != "" || os.Getenv("NGINX_OPERATOR_REQUIRE_TOOLS") != ""
}

// Require returns the path of the executable name. When it is missing the
// test fails if tools are required and is skipped otherwise; either way the
// message says how to install it.
func Require(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	missing(t, name+" not found: install it with `"+install+"` (or run `make test-deps`)")
	return ""
}

// missing fails the test when tools are required and skips it otherwise.
func missing(t testing.TB, msg string) {
	t.Helper()
	if Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
