package render

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/clientchecks"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// testPaths lays out what a rendered config of spec needs under dir: a
// document root, a mime.types file, a self-signed certificate per TLS Secret,
// a CA file per CA certificate reference and an htpasswd file per basic auth,
// each with the client checks' user.
func testPaths(t *testing.T, dir string, spec *v1beta1.NginxOperatorSpec) Paths {
	t.Helper()
	p := Paths{Temp: dir, Content: filepath.Join(dir, "html"), Files: filepath.Join(dir, "files"), MimeTypes: filepath.Join(dir, "mime.types")}
	tools.Must(t, os.MkdirAll(p.Content, 0o755))
	tools.Must(t, os.MkdirAll(p.Files, 0o755))
	tools.Must(t, os.WriteFile(p.MimeTypes, []byte("types {\n    text/html html;\n    text/plain txt;\n}\n"), 0o644))
	refs := ReferencesOf(spec)
	for _, ref := range refs.Of(UseCA) {
		ca, err := tools.NewCA("backend CA", time.Hour)
		tools.Must(t, err)
		for _, key := range ref.FileKeys() {
			tools.Must(t, os.WriteFile(p.File(ref, key), ca.CertPEM, 0o644))
		}
	}
	for _, ref := range refs.Of(UseBasicAuth) {
		for _, key := range ref.FileKeys() {
			tools.Must(t, os.WriteFile(p.File(ref, key), []byte(tools.Htpasswd(clientchecks.User, clientchecks.Password)), 0o644))
		}
	}
	for _, ref := range refs.Of(UseTLS) {
		_, certPEM, keyPEM, err := tools.ServingCert("example.com", "127.0.0.1")
		tools.Must(t, err)
		cert, key := p.TLSFiles(ref.Name)
		tools.Must(t, os.WriteFile(cert, certPEM, 0o644))
		tools.Must(t, os.WriteFile(key, keyPEM, 0o600))
	}
	return p
}

// startRendered starts the real nginx on loopback with spec (as
// validation.NginxOperator returns it) rendered with every upstream's
// endpoint at 127.0.0.1 (localEndpoints), after writing content (file name to body) into its document
// root and calling prepare, when set, with its paths (which it may change).
func startRendered(t *testing.T, nginxBin string, spec *v1beta1.NginxOperatorSpec, healthPort int32, content map[string]string, prepare func(*Paths)) *tools.Process {
	t.Helper()
	return startRenderedWith(t, nginxBin, spec, healthPort, content, prepare, localEndpoints(spec))
}

// startRenderedWith is startRendered with the proxied Services resolved as
// services.
func startRenderedWith(t *testing.T, nginxBin string, spec *v1beta1.NginxOperatorSpec, healthPort int32, content map[string]string, prepare func(*Paths), services map[string]Service) *tools.Process {
	t.Helper()
	dir := t.TempDir()
	// Worker processes of an nginx started as root run as "nobody", which
	// must be able to read the test's files.
	tools.Must(t, os.Chmod(dir, 0o755))
	tools.Must(t, os.Chmod(filepath.Dir(dir), 0o755))
	paths := testPaths(t, dir, spec)
	for file, body := range content {
		tools.Must(t, os.MkdirAll(filepath.Dir(filepath.Join(paths.Content, file)), 0o755))
		tools.Must(t, os.WriteFile(filepath.Join(paths.Content, file), []byte(body), 0o644))
	}
	if prepare != nil {
		prepare(&paths)
	}
	opts := renderOptions(spec, paths)
	opts.HealthPort, opts.Services = int(healthPort), services
	cfg, err := Config(spec, opts)
	tools.Must(t, err)
	file := filepath.Join(dir, "nginx.conf")
	tools.Must(t, os.WriteFile(file, cfg, 0o644))
	proc := tools.StartNginx(t, nginxBin, dir, file)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("config:\n%s", cfg)
		}
	})
	return proc
}

// fetch sends req with client, retrying while nginx starts, and returns the
// response with its body.
func fetch(t *testing.T, proc *tools.Process, client *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	var resp *http.Response
	tools.Eventually(t, 5*time.Second, req.Method+" "+req.URL.String(), func() error {
		if err := proc.Exited(); err != nil {
			return &tools.Stop{Err: err}
		}
		var err error
		resp, err = client.Do(req)
		return err
	})
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestRealNginxServesRenderedConfig starts the real nginx on loopback with a
// rendered configuration and checks what it serves: a static file, a
// redirect, a proxied request to a local upstream, TLS, and the health port.
func TestRealNginxServesRenderedConfig(t *testing.T) {
	nginxBin := tools.Nginx(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream saw %s host=%s", r.URL.Path, r.Host)
	}))
	defer upstream.Close()
	upstreamPort, _ := strconv.Atoi(upstream.URL[strings.LastIndex(upstream.URL, ":")+1:])

	httpPort, httpsPort, healthPort := int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t))
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: httpPort}, {Name: "https", ContainerPort: httpsPort}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "http", Locations: []v1beta1.Location{
				{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 301}},
				{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: int32(upstreamPort)}},
				{Path: "/", Static: &v1beta1.StaticLocation{}, Headers: []v1beta1.Header{{Name: "X-Served-By", Value: "nginx-operator; {not a directive}"}}},
			}},
			{Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls"}, Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}},
		}},
	}
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), healthPort, map[string]string{"index.html": "<h1>hello</h1>\n"}, nil)

	client := &http.Client{
		Timeout:       3 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	get := func(url string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		tools.Must(t, err)
		return fetch(t, proc, client, req)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", httpPort)

	resp, body := get(base + "/")
	if resp.StatusCode != 200 || body != "<h1>hello</h1>\n" || resp.Header.Get("X-Served-By") != "nginx-operator; {not a directive}" {
		t.Errorf("static: %d %q X-Served-By=%q", resp.StatusCode, body, resp.Header.Get("X-Served-By"))
	}
	if resp.Header.Get("Server") != "nginx" {
		t.Errorf("Server header %q: server_tokens off should hide the version", resp.Header.Get("Server"))
	}
	if resp, _ := get(base + "/old"); resp.StatusCode != 301 || resp.Header.Get("Location") != "https://example.com/new" {
		t.Errorf("redirect: %d Location=%q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := get(base + "/api/users"); resp.StatusCode != 200 || body != fmt.Sprintf("upstream saw /api/users host=127.0.0.1:%d", httpPort) {
		t.Errorf("proxy: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(base + "/missing"); resp.StatusCode != 404 {
		t.Errorf("missing file: %d, want 404", resp.StatusCode)
	}
	resp, body = get(fmt.Sprintf("https://127.0.0.1:%d/", httpsPort))
	if resp.StatusCode != 200 || body != "<h1>hello</h1>\n" || resp.TLS == nil {
		t.Errorf("TLS: %d %q tls=%v", resp.StatusCode, body, resp.TLS != nil)
	}
	if resp, body := get(fmt.Sprintf("http://127.0.0.1:%d/healthz", healthPort)); resp.StatusCode != 200 || body != "ok\n" {
		t.Errorf("health: %d %q", resp.StatusCode, body)
	}
}
