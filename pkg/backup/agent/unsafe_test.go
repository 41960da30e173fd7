package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

// putCrafted stores a complete artifact (valid manifest, matching
// checksums) whose content.tar.gz holds the given entries, as an attacker
// with write access to the bucket could.
func putCrafted(t *testing.T, st storage.Storage, entries []tar.Header) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range entries {
		body := "x"
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		h.Mode = 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	gz.Close()
	id := NewID(time.Now())
	sum := sha256.Sum256(buf.Bytes())
	m := Manifest{FormatVersion: FormatVersion, ID: id, Namespace: testLoc.Namespace, Instance: testLoc.Instance,
		Files: []FileEntry{{Name: ContentFile, Size: int64(buf.Len()), SHA256: hex.EncodeToString(sum[:])}}}
	mb, _ := json.Marshal(m)
	ctx := context.Background()
	if _, err := st.Put(ctx, testLoc.Key(id, ContentFile), bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, testLoc.Key(id, ManifestFile), bytes.NewReader(mb)); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestRestoreRefusesEntriesThatLeaveTheTarget(t *testing.T) {
	reg := func(name string) tar.Header { return tar.Header{Name: name, Typeflag: tar.TypeReg} }
	link := func(name, to string) tar.Header {
		return tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: to}
	}
	cases := []struct {
		name    string
		entries []tar.Header
		naming  string // the error names this entry
	}{
		{"dot-dot path", []tar.Header{reg("ok.txt"), reg("../escape.txt")}, "../escape.txt"},
		{"absolute path", []tar.Header{reg("/tmp/abs.txt")}, "/tmp/abs.txt"},
		{"dot-dot inside path", []tar.Header{reg("a/../../escape.txt")}, "a/../../escape.txt"},
		{"symlink pointing outside", []tar.Header{link("out", "../../outside")}, "out"},
		{"absolute symlink", []tar.Header{link("passwd", "/etc/passwd")}, "passwd"},
		{"symlink chain escaping", []tar.Header{link("a", "."), link("b", "a/..")}, "b"},
		{"file written through a symlink to the parent", []tar.Header{link("up", ".."), reg("up/x.txt")}, "up/x.txt"},
		{"hard link", []tar.Header{reg("f"), {Name: "h", Typeflag: tar.TypeLink, Linkname: "f"}}, "h"},
	}
	st, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := putCrafted(t, st, tc.entries)
			parent := t.TempDir()
			target := filepath.Join(parent, "target")
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(target, "sentinel"), []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, parent)
			err := Restore(context.Background(), st, testLoc, id, target)
			if err == nil || !strings.Contains(err.Error(), `"`+tc.naming+`"`) {
				t.Fatalf("Restore error = %v, want a refusal naming %q", err, tc.naming)
			}
			t.Logf("refused with: %v", err)
			if diff := cmp.Diff(before, snapshot(t, parent)); diff != "" {
				t.Errorf("target or its parent changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBackupRefusesSymlinksThatLeaveTheRoot(t *testing.T) {
	for _, tc := range []struct{ name, target string }{
		{"relative escape", "../../etc/passwd"},
		{"absolute", "/etc/passwd"},
		{"dangling", "missing.html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			if err := os.Symlink(tc.target, filepath.Join(src, "bad")); err != nil {
				t.Fatal(err)
			}
			st, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			_, err = Backup(context.Background(), st, newRequest(t, src))
			if err == nil || !strings.Contains(err.Error(), "refusing symlink bad") {
				t.Fatalf("Backup error = %v, want a refusal naming the symlink", err)
			}
			if runs, _ := List(context.Background(), st, testLoc); len(runs) != 0 {
				t.Errorf("runs left after a refused backup: %+v", runs)
			}
		})
	}
}

func TestRestoreReplacesExistingContentCompletely(t *testing.T) {
	st, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	writeTree(t, src, 0)
	rec := mustBackup(t, st, newRequest(t, src))
	target := t.TempDir()
	for _, name := range []string{"stale.html", "index.html"} {
		if err := os.WriteFile(filepath.Join(target, name), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A leftover of a restore killed mid-swap is dropped, not restored.
	if err := os.MkdirAll(filepath.Join(target, stateDirName, "old"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Restore(context.Background(), st, testLoc, rec.ID, target); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snapshot(t, src), snapshot(t, target)); diff != "" {
		t.Errorf("target differs from the backup (-backup +target):\n%s", diff)
	}
	// Modes and mtimes came back too: backing the restored tree up again
	// gives a byte-identical content archive.
	again := mustBackup(t, st, newRequest(t, target))
	if diff := cmp.Diff(rec.Manifest.Files[1], again.Manifest.Files[1]); diff != "" {
		t.Errorf("content archive of the restored tree differs (-original +again):\n%s", diff)
	}
}

// A symlink's own mtime cannot be restored (os.Chtimes follows the link), so
// archives carry none: otherwise the archive of a restored tree would depend
// on the second the restore ran.
func TestArchivesRecordNoSymlinkMtime(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, 0)
	var buf bytes.Buffer
	if err := writeTarGz(context.Background(), &buf, src); err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	links := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeSymlink {
			links++
			if !hdr.ModTime.Equal(time.Unix(0, 0)) {
				t.Errorf("symlink %s carries mtime %v", hdr.Name, hdr.ModTime)
			}
		}
	}
	if links == 0 {
		t.Fatal("the test tree has no symlink")
	}
}
