package main

import (
	"io/fs"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The nginx image stands in for the official nginx image in tests that run
// real pods without pulling from the internet. It holds Debian's nginx (the
// one the project's tests already run) and the paths the official image has,
// and it runs the pod the operator builds (pkg/nginx's StatefulSet) as the
// official image would:
//   - the container command is plain "nginx" (found through PATH) with
//     -c /etc/nginx/operator/nginx.conf -g "daemon off;", as user 101 with a
//     read-only root filesystem;
//   - the rendered configuration includes /etc/nginx/mime.types, writes its
//     pid file and temp paths in /tmp and logs to stderr and /dev/stdout, and
//     /tmp, /var/cache/nginx and the document root /usr/share/nginx/html are
//     volumes;
//   - it uses only modules built into Debian's nginx (http core, ssl,
//     stub_status): no dynamic module is copied or loaded, as in the official
//     image's default configuration.
const (
	nginxBinary  = "/usr/sbin/nginx"
	nginxMime    = "/etc/nginx/mime.types"
	nginxUID     = 101
	nginxHTMLDir = "/usr/share/nginx/html"
	nginxCache   = "/var/cache/nginx"
)

var nginxAccount = Account{Name: "nginx", ID: nginxUID, Home: "/nonexistent"}

// nginxDefaultConf is the configuration of the image's own command (no -c):
// the official image's layout, for `ctr run` or a pod that keeps the image's
// command. It runs as root and lets the workers drop to nginx; temp paths
// are under /var/cache/nginx like the official build's, not the Debian
// build's /var/lib/nginx.
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

// nginxSpec is the nginx image from the build machine's Debian packages
// nginx and nginx-common.
func nginxSpec() (Spec, error) {
	if err := requireHostFile(nginxBinary, "nginx"); err != nil {
		return Spec{}, err
	}
	version, err := debianVersion("nginx")
	if err != nil {
		return Spec{}, err
	}
	host := newHostFiles()
	if err := host.CopyLibraries(nginxBinary); err != nil {
		return Spec{}, err
	}
	libs := host.Entries()

	host = newHostFiles()
	for _, p := range []string{nginxBinary, nginxMime} {
		if _, err := host.Copy(p); err != nil {
			return Spec{}, err
		}
	}
	entries := append(host.Entries(),
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
	)
	entries = append(entries, accountFiles(rootAccount, nginxAccount, nobodyAccount)...)

	return Spec{
		Layers: []Layer{
			{CreatedBy: "hack/images: shared libraries of " + nginxBinary + " (Debian)", Entries: libs},
			{CreatedBy: "hack/images: Debian nginx " + version, Entries: entries},
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
				"org.opencontainers.image.description": "Debian's nginx for nginx-operator's tests",
			},
		},
	}, nil
}
