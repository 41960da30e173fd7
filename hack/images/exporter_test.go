package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func exporterImageForTest(t *testing.T) v1.Image {
	t.Helper()
	requireHostFiles(t, map[string]string{exporterHostBinary: "prometheus-nginx-exporter"})
	spec, err := exporterSpec()
	if err != nil {
		t.Fatal(err)
	}
	return mustAssemble(t, spec)
}

// TestExporterImage: the official image's entrypoint path and user, the
// libraries of Debian's (dynamically linked) build, and a binary that runs
// with only what the image holds.
func TestExporterImage(t *testing.T) {
	img := exporterImageForTest(t)
	cfg := mustConfig(t, img).Config
	got := v1.Config{Entrypoint: cfg.Entrypoint, User: cfg.User, ExposedPorts: cfg.ExposedPorts}
	want := v1.Config{Entrypoint: []string{"/usr/bin/nginx-prometheus-exporter"}, User: "65534:65534", ExposedPorts: map[string]struct{}{"9113/tcp": {}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}

	root := t.TempDir()
	extract(t, img, root)
	checkLddDependencies(t, root, exporterHostBinary)
	if diff := cmp.Diff([]string(nil), missingLibraries(t, root, exporterBinary)); diff != "" {
		t.Errorf("libraries missing from the image (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(fileTree(t, img)["/etc/passwd"].Data), "\nnobody:x:65534:65534:") {
		t.Errorf("/etc/passwd lacks nobody (65534), the image's user")
	}

	out, err := imageLoaderCommand(t, root, exporterBinary, "-version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "NGINX Prometheus Exporter") {
		t.Fatalf("%s -version: %v\n%s", exporterBinary, err, out)
	}
	if diff := cmp.Diff([]string(nil), loadedOutside(t, root, string(out))); diff != "" {
		t.Errorf("libraries loaded from outside the image (-want +got):\n%s", diff)
	}
}
