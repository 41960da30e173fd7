package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// entry is what "byte-identical" compares for one path: type and mode,
// size and sha256 of the content (not the bytes: a 20 MiB diff helps no one),
// symlink target.
type entry struct {
	Mode   string
	Size   int64
	SHA256 string
	Link   string
}

// snapshot describes every path below dir.
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{Mode: info.Mode().String()}
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			e.Size, e.SHA256 = int64(len(b)), hex.EncodeToString(sum[:])
		case info.Mode()&fs.ModeSymlink != 0:
			e.Link, _ = os.Readlink(p)
		}
		out[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeTree creates a content tree: nested directories, binary files with
// every byte value, empty files and directories, various modes, a relative
// symlink that stays inside, and (when bigMiB > 0) one large random file.
func writeTree(t testing.TB, dir string, bigMiB int) {
	t.Helper()
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{"index.html", []byte("<h1>hello</h1>\n"), 0o644},
		{"empty.txt", nil, 0o644},
		{"bin/all-bytes.bin", allBytes, 0o600},
		{"bin/random.bin", random(300_000), 0o640},
		{"bin/run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755},
		{"a/b/c/d/deep.txt", []byte("deep\n"), 0o644},
		{"a/b/empty-too", nil, 0o600},
		{"sp ace/ünïcode file.txt", []byte("names survive\n"), 0o644},
		{"cm/..2026_01_01_00_00_00.1/site.conf", []byte("server {}\n"), 0o644},
	}
	if bigMiB > 0 {
		files = append(files, struct {
			path string
			data []byte
			mode os.FileMode
		}{"big/large.bin", random(bigMiB << 20), 0o644})
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil { // umask-proof
			t.Fatal(err)
		}
	}
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{"empty-dir", 0o755}, {"a/b", 0o750}} {
		p := filepath.Join(dir, d.path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	// Relative links that stay inside, including the symlink farm a mounted
	// ConfigMap volume is (..data -> timestamped dir, file -> ..data/file).
	for _, l := range []struct{ at, to string }{
		{"a/home.html", "../index.html"},
		{"cm/..data", "..2026_01_01_00_00_00.1"},
		{"cm/site.conf", "..data/site.conf"},
	} {
		if err := os.Symlink(l.to, filepath.Join(dir, filepath.FromSlash(l.at))); err != nil {
			t.Fatal(err)
		}
	}
}
