package gatewayapi

// The stand-in for the nginx pod's filesystem, the nginx controller's
// render step, and the real `nginx -t` on what it rendered.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// nginxEnv is one directory that plays the pod's paths for every file,
// readable by nginx's unprivileged user.
type nginxEnv struct {
	t         *testing.T
	dir       string
	paths     render.Paths
	namespace string // the Gateway's: its instance's
	cert, key []byte

	mu      sync.Mutex
	mounted map[string]bool // the files mountCertificates wrote
}

func newNginxEnv(t *testing.T, namespace string, cert, key []byte) *nginxEnv {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		tools.Must(t, os.Chmod(d, 0o755))
	}
	h := &nginxEnv{t: t, dir: dir, namespace: namespace, cert: cert, key: key, mounted: map[string]bool{}, paths: render.Paths{
		Temp: filepath.Join(dir, "tmp"), Content: filepath.Join(dir, "html"), Files: filepath.Join(dir, "files"),
		MimeTypes: filepath.Join(dir, "mime.types"),
	}}
	for _, d := range []string{h.paths.Temp, h.paths.Content, h.paths.Files, filepath.Join(dir, "conf")} {
		tools.Must(t, os.MkdirAll(d, 0o755))
	}
	// nginx -t creates its temp directories as the unprivileged user.
	tools.Must(t, os.Chmod(h.paths.Temp, 0o777))
	tools.Must(t, os.WriteFile(h.paths.MimeTypes, []byte("types {\n  text/html html;\n}\n"), 0o644))
	return h
}

// render is nginx.conf of spec as the nginx controller's plan renders it:
// the render options resolve would make for an instance whose Service does
// not exist yet (serviceport's Standard rule), proxied Services at the
// loopback address.
func (h *nginxEnv) render(spec *v1beta1.NginxOperatorSpec) ([]byte, error) {
	ports := serviceport.Resolve(spec, serviceport.RuleOf(nil))
	opts := render.Options{Paths: h.paths, Namespace: h.namespace, FallbackHost: "127.0.0.1",
		HTTPSPort: ports.HTTPSRedirect, ServicePorts: ports.Moved(spec)}
	config, err := render.Config(spec, opts)
	if err != nil {
		return nil, fmt.Errorf("render.Config (InvalidConfig): %w", err)
	}
	if len(config) > layout.MaxConfigSize {
		return nil, fmt.Errorf("the rendered nginx.conf is %d bytes, more than the %d a Secret carries (InvalidConfig)", len(config), layout.MaxConfigSize)
	}
	return config, nil
}

// mountCertificates writes the Gateway's certificate and key where the
// parsed file tree reads a certificate and a key (ssl_certificate,
// ssl_certificate_key), as the pod mounts the Secrets its instance names:
// the Gateway's is the only certificate there is, and the files are
// written whatever the renderer names them.
func (h *nginxEnv) mountCertificates(tree []conf.Directive) {
	for _, d := range tree {
		h.mountCertificates(d.Block)
		if len(d.Args) != 1 || d.Name != "ssl_certificate" && d.Name != "ssl_certificate_key" {
			continue
		}
		file := d.Args[0]
		if !strings.HasPrefix(file, h.paths.Files+"/") || strings.Contains(file, "$") {
			continue
		}
		data := h.cert
		if d.Name == "ssl_certificate_key" {
			data = h.key
		}
		h.mu.Lock()
		if !h.mounted[file] {
			h.mounted[file] = true
			if os.MkdirAll(filepath.Dir(file), 0o755) == nil {
				_ = os.WriteFile(file, data, 0o644)
			}
		}
		h.mu.Unlock()
	}
}

// nginxFor is the nginx binary bin as nginxTest runs it
// (tools.NginxForNobody).
func (h *nginxEnv) nginxFor(bin string) string { return tools.NginxForNobody(h.t, bin, h.dir) }

// nginxTest runs the real `nginx -t` on config as the pod's user
// (tools.NginxTestAsNobody): "" when nginx accepts it, what it said
// otherwise.
func (h *nginxEnv) nginxTest(bin string, config []byte) string {
	return tools.NginxTestAsNobody(bin, h.dir, config)
}
