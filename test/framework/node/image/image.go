// Package image writes small container images as archives that the real test
// node imports (`ctr images import`): one layer of files, typically a single
// static Go binary, in the format `docker save` writes. It needs no registry
// and no image tool, so tests can build the exact program they run in a pod.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/nginx-operator/nginx-operator/internal/gobuild"
)

// File is one file of an image's layer.
type File struct {
	// Path inside the image, without a leading slash: "bin/server".
	Path string
	// Mode is the permission bits; 0 means 0o644.
	Mode int64
	Data []byte
}

// Config is what a container of the image runs, as in an OCI image config.
type Config struct {
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	WorkingDir string
}

// epoch is the modification time of every file, so that the same input
// writes the same archive.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteArchive writes to the file out an image archive named ref (such as
// "nginx-operator.local/pause:1") with one layer holding files.
func WriteArchive(out, ref string, files []File, cfg Config) error {
	layer, err := layerTar(files)
	if err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer)
	layerDigest := hex.EncodeToString(layerSum[:])

	type runConfig struct {
		Entrypoint []string `json:"Entrypoint,omitempty"`
		Cmd        []string `json:"Cmd,omitempty"`
		Env        []string `json:"Env,omitempty"`
		User       string   `json:"User,omitempty"`
		WorkingDir string   `json:"WorkingDir,omitempty"`
	}
	env := cfg.Env
	if !hasEnv(env, "PATH") {
		env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config": runConfig{
			Entrypoint: cfg.Entrypoint, Cmd: cfg.Cmd, Env: env,
			User: cfg.User, WorkingDir: cfg.WorkingDir,
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerDigest}},
		"history": []map[string]string{{
			"created": epoch.Format(time.RFC3339), "created_by": "nginx-operator test/framework/node/image",
		}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := layerDigest + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{ref}, "Layers": []string{layerName},
	}})
	if err != nil {
		return err
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerName, layer}, {"manifest.json", manifest}} {
		if dir := path.Dir(f.name); dir != "." {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// layerTar is the uncompressed layer: files and the directories above them.
func layerTar(files []File) ([]byte, error) {
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(strings.TrimPrefix(f.Path, "/")); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		name := strings.TrimPrefix(f.Path, "/")
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(f.Data)), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func hasEnv(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}

// BuildGo compiles the main package pkg (anything `go build` accepts, run in
// dir: an import path of the module there, or ./relative) as a static Linux
// binary, and writes to path an image archive named ref that holds only that
// binary, as /<name>, and runs it. cfg.Entrypoint, when empty, is the binary.
func BuildGo(ctx context.Context, dir, pkg, ref, path string, cfg Config) error {
	name := filepath.Base(strings.TrimSuffix(pkg, "/"))
	bin, err := gobuild.Build(ctx, dir, pkg, name, []string{"-trimpath", "-ldflags=-s -w"},
		[]string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + runtime.GOARCH})
	if err != nil {
		return err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	if len(cfg.Entrypoint) == 0 {
		cfg.Entrypoint = []string{"/" + name}
	}
	return WriteArchive(path, ref, []File{{Path: name, Mode: 0o755, Data: data}}, cfg)
}
