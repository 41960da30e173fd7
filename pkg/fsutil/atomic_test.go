package fsutil

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries lists dir's names, to spot temporary files left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileCreatesAndReplacesWholeFilesWithExactPermissions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	big := strings.Repeat("0123456789", 100_000)
	for _, tc := range []struct {
		data string
		perm fs.FileMode
	}{
		{"first", 0o644},
		{big, 0o600},      // replaces, with other permissions
		{"", 0o640},       // an empty file is a file
		{"last\n", 0o666}, // set exactly: the umask does not apply
	} {
		if err := WriteFile(p, []byte(tc.data), tc.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != tc.data {
			t.Errorf("content %d bytes (%v), want %d bytes", len(got), err, len(tc.data))
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != tc.perm {
			t.Errorf("mode %v (%v), want %v", fi.Mode().Perm(), err, tc.perm)
		}
		if names := entries(t, dir); len(names) != 1 || names[0] != "f" {
			t.Errorf("directory holds %v, want only f", names)
		}
	}
}

func TestWriteStreamsAndReturnsTheWritersError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	var n int64
	err := Write(p, 0o600, func(w io.Writer) error {
		var err error
		n, err = io.Copy(w, strings.NewReader("streamed"))
		return err
	})
	if got, _ := os.ReadFile(p); err != nil || n != 8 || string(got) != "streamed" {
		t.Errorf("Write = %v, %d bytes, file %q", err, n, got)
	}

	boom := errors.New("connection reset")
	err = Write(p, 0o600, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if err != boom {
		t.Errorf("Write = %v, want the writer's error itself", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "streamed" {
		t.Errorf("a failed write changed the target to %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v after a failed write, want only f", names)
	}
}

func TestFailedWritesLeaveNoTargetAndNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new")
	if err := Write(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("stop")
	}); err == nil {
		t.Fatal("Write succeeded")
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("target after a failed first write: %v, want not there", err)
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}

	// The rename fails: the target is a non-empty directory.
	busy := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(busy, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(busy, []byte("x"), 0o644); err == nil {
		t.Fatal("WriteFile replaced a directory")
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "busy" {
		t.Errorf("after a failed rename the directory holds %v, want only busy", names)
	}

	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteFile into a missing directory = %v, want ErrNotExist", err)
	}
}

func TestTemporaryFilesStartWithTempPrefix(t *testing.T) {
	dir := t.TempDir()
	var seen []string
	err := Write(filepath.Join(dir, "f"), 0o644, func(io.Writer) error {
		seen = entries(t, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !strings.HasPrefix(seen[0], TempPrefix) {
		t.Errorf("while writing, the directory held %v, want one %s* file", seen, TempPrefix)
	}
}
