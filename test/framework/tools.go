package framework

import (
	"os/exec"
	"testing"
)

// RequireTool returns the path of the executable name. When it is missing the
// test fails if tools are required (CI, NGINX_OPERATOR_REQUIRE_TOOLS) and is
// skipped otherwise; either way the message says how to install it.
func RequireTool(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " not found: install it with `" + install + "` (or run `make test-deps`)"
	if ToolsRequired() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
