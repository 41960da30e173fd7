package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"go.yaml.in/yaml/v2"
)

func TestParseFlags(t *testing.T) {
	all := imageNames()
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	both := []v1.Platform{amd64, arm64}
	for _, tc := range []struct {
		name string
		args []string
		want options
		err  string
	}{
		{name: "out only", args: []string{"-out", "bin/images"}, want: options{out: "bin/images", only: all, platforms: both}},
		{name: "push to a registry", args: []string{"-registry", "r.example/team", "-tag", "dev", "-push", "-only", "operator, pause"},
			want: options{registry: "r.example/team", tag: "dev", push: true, only: []string{"operator", "pause"}, platforms: both}},
		{name: "one platform", args: []string{"-out", "x", "-platforms", "linux/arm64"}, want: options{out: "x", only: all, platforms: []v1.Platform{arm64}}},
		{name: "platforms in the order given, variant optional", args: []string{"-out", "x", "-platforms", "linux/arm64/v8, linux/amd64,linux/s390x"},
			want: options{out: "x", only: all, platforms: []v1.Platform{arm64, amd64, {OS: "linux", Architecture: "s390x"}}}},
		{name: "nothing to do", args: []string{"-registry", "r.example/team"}, err: "nothing to do"},
		{name: "unknown image", args: []string{"-out", "x", "-only", "operator,busybox"}, err: `unknown image "busybox"`},
		{name: "stray argument", args: []string{"-out", "x", "push"}, err: "unexpected arguments"},
		{name: "not linux", args: []string{"-out", "x", "-platforms", "windows/amd64"}, err: "linux only"},
		{name: "unsupported architecture", args: []string{"-out", "x", "-platforms", "linux/386"}, err: "architecture not supported"},
		{name: "wrong variant", args: []string{"-out", "x", "-platforms", "linux/arm64/v7"}, err: "variant v8 only"},
		{name: "variant where there is none", args: []string{"-out", "x", "-platforms", "linux/amd64/v2"}, err: "no variant"},
		{name: "twice", args: []string{"-out", "x", "-platforms", "linux/arm64,linux/arm64/v8"}, err: "given twice"},
		{name: "empty", args: []string{"-out", "x", "-platforms", ""}, err: "want os/arch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultOperatorReferenceIsBundles: `make images` without REGISTRY
// and TAG builds the image bundle.yaml deploys.
func TestDefaultOperatorReferenceIsBundles(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	registryPath, repo, tag, err := bundleImage(root)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := reference(registryPath, repo, tag, false)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bundleImages []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var obj struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name  string `yaml:"name"`
							Image string `yaml:"image"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if obj.Kind != "Deployment" {
			continue
		}
		for _, c := range obj.Spec.Template.Spec.Containers {
			bundleImages = append(bundleImages, c.Image)
		}
	}
	if diff := cmp.Diff([]string{ref.String()}, bundleImages); diff != "" {
		t.Errorf("default operator reference (-) and bundle.yaml's Deployment images (+):\n%s", diff)
	}
}

// TestRunWritesTarballAndPushes runs the command as `make images PUSH=1`
// does, against a registry served in the test, and reads both results back.
func TestRunWritesTarballAndPushes(t *testing.T) {
	server := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer server.Close()
	reg := strings.TrimPrefix(server.URL, "http://") + "/test"
	out := t.TempDir()

	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"-out", out, "-registry", reg, "-tag", "dev", "-push", "-only", "pause"}, &stdout); err != nil {
		t.Fatal(err)
	}
	// pause  REF@DIGEST  id CONFIG-DIGEST  SIZE MB  WHERE
	fields := strings.Fields(stdout.String())
	if len(fields) < 4 || fields[0] != "pause" || fields[2] != "id" {
		t.Fatalf("output %q: want a line for pause", stdout.String())
	}
	id := fields[3]
	refName, digest, _ := strings.Cut(fields[1], "@")
	if refName != reg+"/pause:dev" {
		t.Errorf("reference %s, want %s/pause:dev", refName, reg)
	}
	tag, err := name.NewTag(refName)
	if err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(out, "pause.tar")
	fromTar, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	// A push keeps the manifest, so the registry has the printed digest. A
	// docker-archive keeps the config and the layers only: its importer
	// writes a manifest of its own, and the image ID (config digest) is
	// what stays the same.
	configName := func(img interface{ ConfigName() (v1.Hash, error) }) string {
		h, err := img.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	got := map[string]string{
		"registry manifest": mustDigest(t, pulled).String(), "registry image ID": configName(pulled),
		"tarball image ID": configName(fromTar), "tarball layers": layerDigests(t, fromTar),
	}
	want := map[string]string{
		"registry manifest": digest, "registry image ID": id,
		"tarball image ID": id, "tarball layers": layerDigests(t, pulled),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("digests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{refName}, repoTags(t, file)); diff != "" {
		t.Errorf("manifest.json RepoTags (-want +got), what `ctr images import` names the image:\n%s", diff)
	}
}

func layerDigests(t *testing.T, img v1.Image) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var ds []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d.String())
	}
	return strings.Join(ds, ",")
}

// repoTags reads the docker-archive's manifest.json.
func repoTags(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("manifest.json not found in %s: %v", file, err)
		}
		if hdr.Name != "manifest.json" {
			continue
		}
		var m []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			t.Fatal(err)
		}
		var tags []string
		for _, e := range m {
			tags = append(tags, e.RepoTags...)
		}
		return tags
	}
}
