package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The nginx image stands in for the official nginx image in tests that run
// real pods without pulling from the internet. It holds the nginx the
// project's tests already run, which hack/install-nginx.sh builds from
// source (1.26, not Debian bookworm's 1.22: the official nginx:1.27 the
// operator deploys, and nginx from 1.25.1 on, serve HTTP/1.1 and HTTP/2
// with prior knowledge on one plain-text `listen ... http2` port, which
// gRPC without TLS and Gateway API's GRPCRoute rely on), with the official
// image's modules (all built in) and compiled-in paths, and the paths the
// official image has, and it runs the pod the operator builds (pkg/nginx's
// StatefulSet) as the official image would:
//   - the container command is plain "nginx" (found through PATH) with
//     -c /etc/nginx/operator/nginx.conf -g "daemon off;", as user 101 with a
//     read-only root filesystem;
//   - the rendered configuration includes /etc/nginx/mime.types (nginx's
//     own, from the same source), writes its pid file and temp paths in
//     /tmp and logs to stderr and /dev/stdout, and /tmp, /var/cache/nginx
//     and the document root /usr/share/nginx/html are volumes;
//   - no dynamic module is copied or loaded, as in the official image's
//     default configuration: the build has none.
const (
	nginxBinary  = "/usr/sbin/nginx"
	nginxMime    = "/etc/nginx/mime.types"
	nginxUID     = 101
	nginxHTMLDir = "/usr/share/nginx/html"
	nginxCache   = "/var/cache/nginx"
)

// nginxInstaller builds the nginx the image holds into a cache directory
// outside the clone; --print-dir says which.
const nginxInstaller = "hack/install-nginx.sh"

// nginxBuild is where the build machine's copy of the image's nginx and its
// mime.types are: the installer's directory.
type nginxBuild struct{ binary, mimeTypes string }

// findNginxBuild locates the nginx hack/install-nginx.sh built, or says
// how to build it.
func findNginxBuild() (nginxBuild, error) {
	root, err := moduleRoot()
	if err != nil {
		return nginxBuild{}, err
	}
	out, err := exec.Command("bash", filepath.Join(root, nginxInstaller), "--print-dir").Output()
	if err != nil {
		return nginxBuild{}, fmt.Errorf("bash %s --print-dir: %w", nginxInstaller, err)
	}
	dir := strings.TrimSpace(string(out))
	b := nginxBuild{binary: filepath.Join(dir, "sbin", "nginx"), mimeTypes: filepath.Join(dir, "conf", "mime.types")}
	for _, p := range []string{b.binary, b.mimeTypes} {
		if _, err := os.Stat(p); err != nil {
			return nginxBuild{}, fmt.Errorf("%s is missing: build it with `bash %s` (or `make test-deps`)", p, nginxInstaller)
		}
	}
	return b, nil
}

// nginxVersion is what `nginx -v` says of binary: "1.26.3".
func nginxVersion(binary string) (string, error) {
	out, err := exec.Command(binary, "-v").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s -v: %w: %s", binary, err, out)
	}
	_, version, ok := strings.Cut(strings.TrimSpace(string(out)), "nginx version: nginx/")
	if !ok || version == "" {
		return "", fmt.Errorf("%s -v: %q names no version", binary, out)
	}
	return version, nil
}

var nginxAccount = Account{Name: "nginx", ID: nginxUID, Home: "/nonexistent"}

// nginxDefaultConf is the configuration of the image's own command (no -c):
// the official image's layout, for `ctr run` or a pod that keeps the image's
// command. It runs as root and lets the workers drop to nginx; temp paths
// are under /var/cache/nginx, as the build's compiled-in ones (and the
// official build's) are.
const nginxDefaultConf = `user nginx;
worker_processes auto;
error_log /var/log/nginx/error.log notice;
pid /run/nginx.pid;

events {
    worker_connections 1024;
}

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /var/log/nginx/access.log;
    sendfile on;
    keepalive_timeout 65;
    client_body_temp_path /var/cache/nginx/client_temp;
    proxy_temp_path /var/cache/nginx/proxy_temp;
    fastcgi_temp_path /var/cache/nginx/fastcgi_temp;
    uwsgi_temp_path /var/cache/nginx/uwsgi_temp;
    scgi_temp_path /var/cache/nginx/scgi_temp;
    include /etc/nginx/conf.d/*.conf;
}
`

const nginxDefaultServer = `server {
    listen 80;
    server_name localhost;
    location / {
        root /usr/share/nginx/html;
        index index.html;
    }
    error_page 500 502 503 504 /50x.html;
    location = /50x.html {
        root /usr/share/nginx/html;
    }
}
`

func htmlPage(title, body string) []byte {
	return []byte(strings.Join([]string{
		"<!DOCTYPE html>", "<html>", "<head><title>" + title + "</title></head>",
		"<body>", "<h1>" + title + "</h1>", "<p>" + body + "</p>", "</body>", "</html>", "",
	}, "\n"))
}

// nginxSpec is the nginx image from the nginx hack/install-nginx.sh built
// on the build machine, with the shared libraries it loads there.
func nginxSpec() (Spec, error) {
	build, err := findNginxBuild()
	if err != nil {
		return Spec{}, err
	}
	version, err := nginxVersion(build.binary)
	if err != nil {
		return Spec{}, err
	}
	host := newHostFiles()
	if err := host.CopyLibraries(build.binary); err != nil {
		return Spec{}, err
	}
	libs := host.Entries()

	files := map[string][]byte{}
	for _, p := range []string{build.binary, build.mimeTypes} {
		data, err := os.ReadFile(p)
		if err != nil {
			return Spec{}, err
		}
		files[p] = data
	}
	entries := []Entry{
		FileEntry(nginxBinary, 0o755, files[build.binary]),
		FileEntry(nginxMime, 0o644, files[build.mimeTypes]),
		FileEntry("/etc/nginx/nginx.conf", 0o644, []byte(nginxDefaultConf)),
		DirEntry("/etc/nginx/conf.d", 0o755),
		FileEntry("/etc/nginx/conf.d/default.conf", 0o644, []byte(nginxDefaultServer)),
		FileEntry(nginxHTMLDir+"/index.html", 0o644, htmlPage("nginx", "Served by the nginx test image of nginx-operator.")),
		FileEntry(nginxHTMLDir+"/50x.html", 0o644, htmlPage("Error", "The server could not answer this request.")),
		// The official image's log files are the container's output.
		DirEntry("/var/log/nginx", 0o755),
		SymlinkEntry("/var/log/nginx/access.log", "/dev/stdout"),
		SymlinkEntry("/var/log/nginx/error.log", "/dev/stderr"),
		// Writable by nginx's user, for an nginx not started as root; the
		// operator's pods mount an emptyDir here.
		DirEntry(nginxCache, 0o755).Owned(nginxUID, nginxUID),
		DirEntry("/run", 0o755),
		SymlinkEntry("/var/run", "../run"),
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		DirEntry("/root", 0o700),
		nsswitch(),
	}
	entries = append(entries, accountFiles(rootAccount, nginxAccount, nobodyAccount)...)

	return Spec{
		Layers: []Layer{
			{CreatedBy: "hack/images: shared libraries of nginx " + version + " (Debian's)", Entries: libs},
			{CreatedBy: "hack/images: nginx " + version + " (" + nginxInstaller + ")", Entries: entries},
		},
		Config: v1.Config{
			Cmd:          []string{"nginx", "-g", "daemon off;"},
			Env:          []string{defaultPath},
			ExposedPorts: map[string]struct{}{"80/tcp": {}},
			// nginx finishes the requests in flight on SIGQUIT.
			StopSignal: "SIGQUIT",
			Labels: map[string]string{
				"org.opencontainers.image.version":     version,
				"org.opencontainers.image.source":      sourceURL,
				"org.opencontainers.image.description": "nginx " + version + " built from source for nginx-operator's tests",
			},
		},
	}, nil
}
