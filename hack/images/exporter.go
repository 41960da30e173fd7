package main

import (
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The exporter image stands in for nginx/nginx-prometheus-exporter, the
// sidecar of instances with spec.metrics.enabled. pkg/nginx gives that
// container arguments only (--nginx.scrape-uri, --web.listen-address), so
// the binary must be the image's entrypoint, at the official image's path
// and user. Debian's build (prometheus-nginx-exporter) parses Go flags,
// which accept the double-dash spelling of those arguments.
const (
	exporterHostBinary = "/usr/bin/prometheus-nginx-exporter"
	exporterBinary     = "/usr/bin/nginx-prometheus-exporter"
	exporterPort       = "9113/tcp"
)

// exporterSpec is the exporter image from the build machine's Debian
// package prometheus-nginx-exporter, with the C library it links against.
func exporterSpec() (Spec, error) {
	if err := requireHostFile(exporterHostBinary, "prometheus-nginx-exporter"); err != nil {
		return Spec{}, err
	}
	version, err := debianVersion("prometheus-nginx-exporter")
	if err != nil {
		return Spec{}, err
	}
	host := newHostFiles()
	if err := host.CopyLibraries(exporterHostBinary); err != nil {
		return Spec{}, err
	}
	binary, err := os.ReadFile(exporterHostBinary)
	if err != nil {
		return Spec{}, err
	}
	entries := append([]Entry{FileEntry(exporterBinary, 0o755, binary), nsswitch()},
		accountFiles(rootAccount, nobodyAccount)...)
	return Spec{
		Layers: []Layer{
			{CreatedBy: "hack/images: shared libraries of " + exporterHostBinary + " (Debian)", Entries: host.Entries()},
			{CreatedBy: "hack/images: Debian prometheus-nginx-exporter " + version, Entries: entries},
		},
		Config: v1.Config{
			Entrypoint:   []string{exporterBinary},
			User:         "65534:65534",
			Env:          []string{defaultPath},
			ExposedPorts: map[string]struct{}{exporterPort: {}},
			Labels: map[string]string{
				"org.opencontainers.image.version":     version,
				"org.opencontainers.image.source":      sourceURL,
				"org.opencontainers.image.description": "Debian's prometheus-nginx-exporter for nginx-operator's tests",
			},
		},
	}, nil
}
