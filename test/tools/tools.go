// Package tools finds the external programs tests run for real (nginx,
// promtool, prometheus). It imports nothing from Kubernetes on purpose: fuzz
// targets of packages whose tests use it stay fast to instrument.
//
// It is also the gate between the test tiers. Unit tests are pure: no
// external program, no cluster, no root. A test that needs one of those asks
// through Require, Installed or Integration (or framework.Env.Cluster, which
// uses Integration), and `go test -short` (make test-unit) skips it there.
// Integration tests are the rest of the packages outside test/ (a control
// plane, a real nginx, promtool, Prometheus); end-to-end tests live under
// test/ (e2e, realpods, chaos, upgrade, hostile).
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
	Integration(t, name)
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	Missing(t, name+" not found: install it with `"+install+"` (or run `make test-deps`)")
	return ""
}

// Integration skips a test of the integration or end-to-end tier under
// -short: it needs what (a program, a cluster, root), which the unit tier
// never runs.
func Integration(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(NotAUnitTest(what))
	}
}

// NotAUnitTest is the message of a test skipped under -short for want of what.
func NotAUnitTest(what string) string {
	return "needs " + what + ": not a unit test (go test -short runs only the unit tier)"
}

// Missing fails the test when tools are required and skips it otherwise:
// the one way a test says that what it needs (a program, root, IPv6, a
// known architecture) is not there. msg says what is missing and how to
// get it.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
