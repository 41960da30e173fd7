package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

func nginxImageForTest(t *testing.T) v1.Image {
	t.Helper()
	tools.Nginx(t)
	spec, err := nginxSpec()
	if err != nil {
		t.Fatal(err)
	}
	return mustAssemble(t, spec)
}

// TestNginxImageHoldsEveryLibrary: every file ldd lists for the nginx
// hack/install-nginx.sh built is in the image, and the ELF headers of the
// image's nginx and libraries find all they need inside the image.
func TestNginxImageHoldsEveryLibrary(t *testing.T) {
	img := nginxImageForTest(t)
	root := t.TempDir()
	extract(t, img, root)
	checkLddDependencies(t, root, tools.Nginx(t))
	if diff := cmp.Diff([]string(nil), missingLibraries(t, root, nginxBinary)); diff != "" {
		t.Errorf("libraries missing from the image (-want +got):\n%s", diff)
	}
}

// operatorSpecForTest is an NginxOperator spec that uses every part of the
// rendered configuration that needs something from the image: TLS
// (OpenSSL), a proxied location, a redirect, headers, stub_status.
func operatorSpecForTest(httpPort, httpsPort int32, upstreamPort int32) v1beta1.NginxOperatorSpec {
	return v1beta1.NginxOperatorSpec{
		Ports:   []v1beta1.Port{{Name: "http", ContainerPort: httpPort}, {Name: "https", ContainerPort: httpsPort}},
		Metrics: v1beta1.MetricsSpec{Enabled: true},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "http", Locations: []v1beta1.Location{
				{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 301}},
				{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: upstreamPort}},
				{Path: "/", Static: &v1beta1.StaticLocation{}, Headers: []v1beta1.Header{{Name: "X-Served-By", Value: "nginx-operator"}}},
			}},
			{Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls"}, Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}},
		}},
	}
}

// writeTLSSecret writes a certificate and key for localhost where paths
// has nginx read those of the TLS Secret secret, as the operator copies
// them into the pods' files.
func writeTLSSecret(t *testing.T, paths render.Paths, secret string) {
	t.Helper()
	_, certPEM, keyPEM := framework.ServingCert(t, "localhost")
	if err := os.MkdirAll(paths.Files, 0o755); err != nil {
		t.Fatal(err)
	}
	cert, key := paths.TLSFiles(secret)
	for name, data := range map[string][]byte{cert: certPEM, key: keyPEM} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNginxImageChecksOperatorConfig runs the image's nginx through the
// image's own loader and libraries (no chroot, no root needed) with `nginx
// -t` on a configuration the operator renders, and checks that every
// library the loader initialised came from the image.
func TestNginxImageChecksOperatorConfig(t *testing.T) {
	img := nginxImageForTest(t)
	root := t.TempDir()
	extract(t, img, root)

	work := t.TempDir()
	// An nginx started as root runs its workers as nobody, who must read
	// the configuration.
	for _, d := range []string{work, filepath.Dir(work)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	paths := render.Paths{
		Temp: filepath.Join(work, "tmp"), Content: filepath.Join(work, "html"), Files: filepath.Join(work, "files"),
		// The image's mime.types, at the path the pod's configuration names.
		MimeTypes: filepath.Join(root, render.PodPaths().MimeTypes),
	}
	for _, d := range []string{paths.Temp, paths.Content} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := operatorSpecForTest(18443, 18444, 18445)
	writeTLSSecret(t, paths, "web-tls")
	conf, err := render.Config(validationtest.Spec(t, spec), render.Options{Paths: paths, Namespace: "team-a",
		FallbackHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	confFile := filepath.Join(work, "nginx.conf")
	if err := os.WriteFile(confFile, conf, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := imageLoaderCommand(t, root, nginxBinary, "-t", "-p", work+"/", "-c", confFile)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Fatalf("nginx -t with the image's nginx: %v\n%s\n%s", err, out, conf)
	}
	if diff := cmp.Diff([]string(nil), loadedOutside(t, root, string(out))); diff != "" {
		t.Errorf("libraries loaded from outside the image (-want +got):\n%s", diff)
	}
}

// TestNginxImageConfig: the official image's command, PATH (the operator's
// pod runs plain "nginx"), and the paths and user the operator's pods and
// the default configuration rely on.
func TestNginxImageConfig(t *testing.T) {
	img := nginxImageForTest(t)
	cfg := mustConfig(t, img).Config
	if diff := cmp.Diff([]string{"nginx", "-g", "daemon off;"}, cfg.Cmd); diff != "" {
		t.Errorf("Cmd (-want +got):\n%s", diff)
	}
	if cfg.Entrypoint != nil || cfg.User != "" || cfg.StopSignal != "SIGQUIT" {
		t.Errorf("Entrypoint %q, User %q, StopSignal %q: want none, none (root, as the official image) and SIGQUIT", cfg.Entrypoint, cfg.User, cfg.StopSignal)
	}
	root := t.TempDir()
	extract(t, img, root)
	if p, err := lookPathIn(root, cfg.Env, "nginx"); err != nil || p != nginxBinary {
		t.Errorf("nginx in the image's PATH: %q, %v; want %s", p, err, nginxBinary)
	}
	tree := fileTree(t, img)
	for _, tc := range []struct {
		path     string
		uid      int
		mode     int64
		contains string
	}{
		{path: "/etc/nginx/nginx.conf", mode: 0o644, contains: "include /etc/nginx/conf.d/*.conf;"},
		{path: "/etc/nginx/conf.d/default.conf", mode: 0o644, contains: "listen 80;"},
		{path: nginxMime, mode: 0o644, contains: "text/html"},
		{path: nginxHTMLDir + "/index.html", mode: 0o644, contains: "<h1>nginx</h1>"},
		{path: nginxCache, uid: nginxUID, mode: 0o755},
		{path: "/var/log/nginx", mode: 0o755},
		{path: "/tmp", mode: 0o1777},
		{path: "/etc/passwd", mode: 0o644, contains: "\nnginx:x:101:101:"},
		{path: "/etc/group", mode: 0o644, contains: "\nnginx:x:101:"},
	} {
		n, ok := tree[tc.path]
		if !ok {
			t.Errorf("%s missing", tc.path)
			continue
		}
		if n.UID != tc.uid || n.Mode != tc.mode || !strings.Contains(string(n.Data), tc.contains) {
			t.Errorf("%s: uid %d mode %o, content %q; want uid %d mode %o containing %q", tc.path, n.UID, n.Mode, n.Data, tc.uid, tc.mode, tc.contains)
		}
	}
	for link, target := range map[string]string{"/var/log/nginx/access.log": "/dev/stdout", "/var/log/nginx/error.log": "/dev/stderr", "/var/run": "../run"} {
		if n := tree[link]; n.Target != target {
			t.Errorf("%s -> %q, want %q", link, n.Target, target)
		}
	}
	// The binary and mime.types are hack/install-nginx.sh's, and the label
	// says which nginx that is.
	build, err := findNginxBuild()
	if err != nil {
		t.Fatal(err)
	}
	for image, host := range map[string]string{nginxBinary: build.binary, nginxMime: build.mimeTypes} {
		want, err := os.ReadFile(host)
		if err != nil {
			t.Fatal(err)
		}
		if string(tree[image].Data) != string(want) {
			t.Errorf("%s differs from %s", image, host)
		}
	}
	if version, err := nginxVersion(build.binary); err != nil || cfg.Labels["org.opencontainers.image.version"] != version {
		t.Errorf("label org.opencontainers.image.version %q; want %q (%v)", cfg.Labels["org.opencontainers.image.version"], version, err)
	}
	for p := range tree {
		if strings.HasPrefix(p, "/usr/lib/nginx/modules") || strings.HasPrefix(p, "/etc/nginx/modules-enabled") {
			t.Errorf("%s: the image loads no dynamic module", p)
		}
	}
}
