package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

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

// NginxForNobody is the nginx binary bin as NginxTestAsNobody runs it. As
// root, that runs nginx as nobody, as in the pod, who may not reach bin:
// the tests' nginx is built into the user's cache (hack/install-nginx.sh),
// and root's home is 0700. A copy in dir, which nobody must be able to
// enter, runs instead; any user but root runs bin as it is.
func NginxForNobody(t testing.TB, bin, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return bin
	}
	data, err := os.ReadFile(bin)
	Must(t, err)
	copied := filepath.Join(dir, "nginx")
	Must(t, os.WriteFile(copied, data, 0o755))
	return copied
}

// NginxTestAsNobody runs the real `nginx -t` on config with prefix dir
// (which has a conf directory) and returns what nginx said when it refused
// the file, its [emerg] lines before its warnings, with dir written <dir>;
// "" when it accepted it. As root it runs as nobody, as in the pod: an
// unprivileged user cannot bind ports below 1024. bin is what
// NginxForNobody returned.
func NginxTestAsNobody(bin, dir string, config []byte) string {
	sum := sha256.Sum256(config)
	file := filepath.Join(dir, "conf", hex.EncodeToString(sum[:8])+".conf")
	if err := os.WriteFile(file, config, 0o644); err != nil {
		return "writing the file: " + err.Error()
	}
	cmd := exec.Command(bin, NginxArgs(dir, file, "-t", "-q")...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	// The rendered access_log is /dev/stdout, which nginx opens by name: as
	// nobody it can open /dev/null, not a pipe the test owns. What nginx
	// says goes to stderr.
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err.Error()
	}
	defer devNull.Close()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	if err = cmd.Run(); err == nil {
		return ""
	}
	var said []string
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.Contains(line, "test failed") {
			line = nginxPreamble.ReplaceAllString(strings.TrimPrefix(line, "nginx: "), "$1 ")
			line = strings.ReplaceAll(line, " in "+file+":", " at line ")
			said = append(said, strings.ReplaceAll(line, dir, "<dir>"))
		}
	}
	// nginx's warnings (a deprecated directive of the renderer's) come
	// first; what made it refuse the file is its [emerg].
	if errs := slices.DeleteFunc(slices.Clone(said), func(l string) bool { return strings.HasPrefix(l, "[warn]") }); len(errs) > 0 {
		said = errs
	}
	if len(said) == 0 {
		return err.Error()
	}
	return strings.Join(said, " | ")
}

// nginx's "2026/11/23 15:37:04 [emerg] 13250#13250: " before each message.
var nginxPreamble = regexp.MustCompile(`^[0-9/]+ [0-9:]+ (\[[a-z]+\]) [0-9]+#[0-9]+: `)
