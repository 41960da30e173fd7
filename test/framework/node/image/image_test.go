package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteArchiveIsADockerSaveArchiveWhoseDigestsMatch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "image.tar")
	files := []File{{Path: "bin/hello", Mode: 0o755, Data: []byte("#!/bin/true\n")}}
	if err := WriteArchive(out, "example.local/hello:1", files, Config{Entrypoint: []string{"/bin/hello"}, User: "65532"}); err != nil {
		t.Fatal(err)
	}
	entries := readTar(t, out)
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].Layers) != 1 || manifest[0].RepoTags[0] != "example.local/hello:1" {
		t.Fatalf("manifest: %+v", manifest)
	}
	config, layer := entries[manifest[0].Config], entries[manifest[0].Layers[0]]
	if sum := sha256.Sum256(config); hex.EncodeToString(sum[:])+".json" != manifest[0].Config {
		t.Errorf("the config is not named by its digest")
	}
	var cfg struct {
		OS, Architecture string
		Config           struct {
			Entrypoint []string
			User       string
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(layer)
	if want := "sha256:" + hex.EncodeToString(sum[:]); len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != want {
		t.Errorf("diff_ids %v, want [%s]", cfg.RootFS.DiffIDs, want)
	}
	if cfg.OS != "linux" || cfg.Config.Entrypoint[0] != "/bin/hello" || cfg.Config.User != "65532" {
		t.Errorf("config: %+v", cfg)
	}
	layerFiles := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		layerFiles[h.Name] = h
	}
	if h := layerFiles["bin/hello"]; h == nil || h.Mode != 0o755 {
		t.Errorf("bin/hello in the layer: %+v", h)
	}
	if h := layerFiles["bin/"]; h == nil || h.Typeflag != tar.TypeDir {
		t.Errorf("bin/ is not a directory of the layer: %+v", h)
	}

	// The same input writes the same bytes.
	again := filepath.Join(t.TempDir(), "again.tar")
	if err := WriteArchive(again, "example.local/hello:1", files, Config{Entrypoint: []string{"/bin/hello"}, User: "65532"}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("two archives of the same input differ")
	}
}

func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			entries[h.Name] = data
		}
	}
}
