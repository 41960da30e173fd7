package tools

import "testing"

// InstallHelm builds the pinned helm v3 the chart tests run.
const InstallHelm = "hack/install-helm.sh"

// Helm is the path of the cached helm binary; missing, the test skips (fails
// when tools are required).
func Helm(t testing.TB) string {
	t.Helper()
	return Installed(t, InstallHelm, "helm")
}
