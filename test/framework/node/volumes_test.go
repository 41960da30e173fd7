package node

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOpenablePathIsOnlyAProvisionedDirectory(t *testing.T) {
	for path, want := range map[string]string{
		"/tmp/hostpath_pv/0c5f-11":  "/tmp/hostpath_pv/0c5f-11",
		"/tmp/hostpath_pv/0c5f-11/": "/tmp/hostpath_pv/0c5f-11",
		"/tmp/hostpath_pv/":         "",
		"/tmp/hostpath_pv/a/b":      "",
		"/tmp/hostpath_pv/../etc":   "",
		"/var/lib/data":             "",
		"/tmp/hostpath_pvx/0c5f":    "",
	} {
		if got := openablePath(path); got != want {
			t.Errorf("openablePath(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestProvisionedVolumesRemoveDeletesWhatItOpened(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept")
	opened := filepath.Join(dir, "opened")
	for _, d := range []string{kept, filepath.Join(opened, "sub")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	v := &provisionedVolumes{stop: make(chan struct{}), paths: map[string]bool{opened: true}}
	v.halt()
	if err := v.remove(); err != nil {
		t.Fatal(err)
	}
	if err := v.remove(); err != nil {
		t.Fatalf("a second remove: %v", err)
	}
	if _, err := os.Stat(opened); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", opened, err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("%s, which it did not open, is gone: %v", kept, err)
	}
}
