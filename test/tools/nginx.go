package tools

import "testing"

// InstallNginx builds the pinned nginx (1.26) the tests run, with the
// official nginx image's modules and paths. Debian bookworm's nginx (1.22)
// is not used: it serves only HTTP/2 on a plain-text `listen ... http2` port,
// where nginx 1.25.1 and later (and the nginx:1.27 the operator deploys)
// tell HTTP/1.1 from HTTP/2 with prior knowledge.
const InstallNginx = "hack/install-nginx.sh"

// Nginx is the path of the cached nginx binary; missing, the test skips
// (fails when tools are required). Every test that runs nginx asks here, so
// none runs another nginx that happens to be on PATH.
func Nginx(t testing.TB) string {
	t.Helper()
	return Installed(t, InstallNginx, "sbin/nginx")
}
