package main

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestOperatorImageIsDistrolessStaticNonroot checks the operator image's
// file tree and configuration against what distroless/static:nonroot plus
// the Dockerfile give: no shell, the machine's CA bundle, the accounts, a
// sticky /tmp, nonroot's home, and the labels.
func TestOperatorImageIsDistrolessStaticNonroot(t *testing.T) {
	requireHostFiles(t, map[string]string{caCertificates: "ca-certificates", zoneinfo: "tzdata"})
	img := operatorImageForTest(t)
	tree := fileTree(t, img)

	for _, shell := range []string{"/bin/sh", "/bin/bash", "/usr/bin/sh", "/bin/busybox", "/bin"} {
		if _, ok := tree[shell]; ok {
			t.Errorf("%s exists: the image must have no shell", shell)
		}
	}
	hostCA, err := os.ReadFile(caCertificates)
	if err != nil {
		t.Fatal(err)
	}
	if n := tree[caCertificates]; !bytes.Equal(n.Data, hostCA) {
		t.Errorf("%s: %d bytes, want the build machine's %d", caCertificates, len(n.Data), len(hostCA))
	}
	if _, ok := tree[zoneinfo+"/Europe/Berlin"]; !ok {
		t.Errorf("%s/Europe/Berlin missing: cron schedules with CRON_TZ need time zones", zoneinfo)
	}

	type meta struct {
		Type     byte
		Mode     int64
		UID, GID int
	}
	for _, tc := range []struct {
		path string
		want meta
	}{
		{operatorBinary, meta{tar.TypeReg, 0o755, 0, 0}},
		{"/tmp", meta{tar.TypeDir, 0o1777, 0, 0}},
		{nonrootHome, meta{tar.TypeDir, 0o700, nonrootUID, nonrootUID}},
		{"/etc/passwd", meta{tar.TypeReg, 0o644, 0, 0}},
		{"/etc/group", meta{tar.TypeReg, 0o644, 0, 0}},
		{caCertificates, meta{tar.TypeReg, 0o644, 0, 0}},
	} {
		n, ok := tree[tc.path]
		if !ok {
			t.Errorf("%s missing", tc.path)
			continue
		}
		if diff := cmp.Diff(tc.want, meta{n.Type, n.Mode, n.UID, n.GID}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
	for file, want := range map[string][]string{
		"/etc/passwd": {"root:x:0:0:", "nonroot:x:65532:65532:nonroot:/home/nonroot:"},
		"/etc/group":  {"root:x:0:", "nonroot:x:65532:"},
	} {
		for _, line := range want {
			if !strings.Contains(string(tree[file].Data), "\n"+line) && !strings.HasPrefix(string(tree[file].Data), line) {
				t.Errorf("%s lacks %q:\n%s", file, line, tree[file].Data)
			}
		}
	}

	cfg := mustConfig(t, img)
	got := struct {
		OS, Architecture string
		Config           v1.Config
	}{cfg.OS, cfg.Architecture, cfg.Config}
	want := got
	want.OS, want.Architecture = "linux", runtime.GOARCH
	want.Config = v1.Config{
		Entrypoint: []string{"/operator"},
		User:       "65532:65532",
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		WorkingDir: "/home/nonroot",
		Labels: map[string]string{
			"org.opencontainers.image.version":  testVersion,
			"org.opencontainers.image.revision": testRevision,
			"org.opencontainers.image.source":   "https://github.com/nginx-operator/nginx-operator",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}
}

// TestOperatorImageIsReproducible: two builds from the same binary have the
// same digest, so a rebuild pushes nothing new and a digest identifies the
// source. SOURCE_DATE_EPOCH changes the times, and so the digest.
func TestOperatorImageIsReproducible(t *testing.T) {
	requireHostFiles(t, map[string]string{caCertificates: "ca-certificates", zoneinfo: "tzdata"})
	first, second := mustDigest(t, operatorImageForTest(t)), mustDigest(t, operatorImageForTest(t))
	if first != second {
		t.Errorf("two builds of the same binary: digests %s and %s", first, second)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	if dated := mustDigest(t, operatorImageForTest(t)); dated == first {
		t.Errorf("SOURCE_DATE_EPOCH did not change the digest %s", first)
	}
}

// TestOperatorImageRuns runs the image's entrypoint from the extracted tree:
// the binary is static and carries the version it was stamped with. As root
// it also runs chrooted as the image's user in its working directory, as a
// container would.
func TestOperatorImageRuns(t *testing.T) {
	requireHostFiles(t, map[string]string{caCertificates: "ca-certificates", zoneinfo: "tzdata"})
	img := operatorImageForTest(t)
	cfg := mustConfig(t, img).Config
	root := t.TempDir()
	extract(t, img, root)

	out, err := exec.Command(filepath.Join(root, cfg.Entrypoint[0]), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), testVersion) {
		t.Fatalf("operator version: %v: %s (want %s)", err, out, testVersion)
	}

	t.Run("chroot as the image's user", func(t *testing.T) {
		requireRoot(t, "runs the entrypoint chrooted as 65532")
		cmd := &exec.Cmd{
			Path: cfg.Entrypoint[0], Args: append(cfg.Entrypoint, "version"), Env: cfg.Env, Dir: cfg.WorkingDir,
			SysProcAttr: &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: nonrootUID, Gid: nonrootUID}},
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), testVersion) {
			t.Fatalf("operator version in the image: %v: %s", err, out)
		}
	})
}

// An earlier release's tree (-src) may have no nginx-reloader: its image
// holds the operator alone, and no empty file where the reloader would be.
func TestOperatorImageOfAReleaseWithoutReloader(t *testing.T) {
	requireHostFiles(t, map[string]string{caCertificates: "ca-certificates", zoneinfo: "tzdata"})
	spec, err := operatorSpec([]byte("operator"), nil, testVersion, testRevision)
	if err != nil {
		t.Fatal(err)
	}
	tree := fileTree(t, mustAssemble(t, spec))
	if n, ok := tree[operatorBinary]; !ok || string(n.Data) != "operator" {
		t.Errorf("%s: %v, want the operator", operatorBinary, ok)
	}
	if _, ok := tree[reloaderBinary]; ok {
		t.Errorf("%s exists in an image built without a reloader", reloaderBinary)
	}
}
