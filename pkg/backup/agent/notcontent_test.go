package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

// A content volume's root holds lost+found (ext4, owned by root in a real
// volume) and the restored-id marker next to the content. Neither is
// content: a backup must leave them out, and a restore must neither move
// lost+found (the agent could not, unprivileged) nor drop the volume's own.
func TestBookkeepingEntriesAreNeitherBackedUpNorSwapped(t *testing.T) {
	st, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, body string) {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	src := t.TempDir()
	write(filepath.Join(src, "index.html"), "hello")
	mkdir(filepath.Join(src, "lost+found"))
	write(filepath.Join(src, "lost+found", "#1234"), "fsck leftovers")
	write(filepath.Join(src, RestoredMarker), "20260101T000000.000000000Z-00000000")
	rec := mustBackup(t, st, newRequest(t, src))

	target := t.TempDir()
	mkdir(filepath.Join(target, "lost+found"))
	write(filepath.Join(target, "lost+found", "#99"), "the target's own")
	write(filepath.Join(target, "old.html"), "old")
	if err := Restore(context.Background(), st, testLoc, rec.ID, target); err != nil {
		t.Fatal(err)
	}

	got := map[string]bool{}
	for p := range snapshot(t, target) {
		got[p] = true
	}
	want := map[string]bool{"index.html": true, "lost+found": true, "lost+found/#99": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored target (-want +got):\n%s", diff)
	}
}
