package agent

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

func newLocal(t *testing.T) storage.Storage {
	t.Helper()
	st, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// noDeleteStorage fails every Delete, so retention fails.
type noDeleteStorage struct{ storage.Storage }

func (noDeleteStorage) Delete(context.Context, string) error { return errors.New("delete refused") }

func TestRunBackupReportsTheRunAndWhatRetentionDeleted(t *testing.T) {
	ctx := context.Background()
	content := t.TempDir()
	if err := os.WriteFile(filepath.Join(content, "index.html"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	backupAt := func(st storage.Storage, i int, keepLast int) BackupResult {
		t.Helper()
		req := newRequest(t, content)
		req.Now = func() time.Time { return t0.Add(time.Duration(i) * time.Hour) }
		res, err := RunBackup(ctx, st, req, keepLast)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.ID == "" || res.SizeBytes <= 0 || len(res.SHA256) != 64 || !strings.HasPrefix(res.Location, "backups/team-a/web/"+res.ID) {
			t.Errorf("run %d: result %+v", i, res)
		}
		return res
	}

	st := newLocal(t)
	var ids []string
	for i := range 3 {
		res := backupAt(st, i, 2)
		ids = append(ids, res.ID)
		wantPruned := []string(nil)
		if i == 2 {
			wantPruned = ids[:1]
		}
		if !slices.Equal(res.Pruned, wantPruned) || res.PruneError != "" {
			t.Errorf("run %d pruned %v (%q), want %v", i, res.Pruned, res.PruneError, wantPruned)
		}
	}

	t.Run("keepLast 0 prunes nothing", func(t *testing.T) {
		if res := backupAt(st, 3, 0); res.Pruned != nil || res.PruneError != "" {
			t.Errorf("pruned %v (%q)", res.Pruned, res.PruneError)
		}
	})
	t.Run("a retention failure does not fail the run", func(t *testing.T) {
		res := backupAt(noDeleteStorage{st}, 4, 1)
		if !strings.Contains(res.PruneError, "delete refused") || len(res.Pruned) != 0 {
			t.Errorf("pruned %v, error %q; want the deletion error and nothing pruned", res.Pruned, res.PruneError)
		}
		if _, err := fetchManifest(ctx, st, testLoc, res.ID); err != nil {
			t.Errorf("the run itself is not stored: %v", err)
		}
	})
	t.Run("a failed backup has no result", func(t *testing.T) {
		req := newRequest(t, filepath.Join(t.TempDir(), "missing"))
		if res, err := RunBackup(ctx, st, req, 1); err == nil || res.ID != "" {
			t.Errorf("RunBackup = %+v, %v; want an error", res, err)
		}
	})
}

func TestRestoredMarkerRecordsOneIDAtomically(t *testing.T) {
	target := t.TempDir()
	if got := RestoredID(target); got != "" {
		t.Errorf("RestoredID of a fresh target = %q", got)
	}
	for _, id := range []string{"20260101T000000.000000000Z-00000001", "20260102T000000.000000000Z-00000002"} {
		if err := MarkRestored(target, id); err != nil {
			t.Fatal(err)
		}
		if got := RestoredID(target); got != id {
			t.Errorf("RestoredID = %q, want %q", got, id)
		}
		b, _ := os.ReadFile(filepath.Join(target, RestoredMarker))
		fi, err := os.Stat(filepath.Join(target, RestoredMarker))
		if string(b) != id+"\n" || err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("marker %q mode %v (%v), want %q mode 0644", b, fi.Mode().Perm(), err, id+"\n")
		}
		if es, _ := os.ReadDir(target); len(es) != 1 {
			t.Errorf("target holds %d entries, want only the marker", len(es))
		}
	}
}

func TestRunRestoreOnceRestoresEachIDOnce(t *testing.T) {
	ctx := context.Background()
	st := newLocal(t)
	content, target := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(content, "index.html"), []byte("backed up"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := mustBackup(t, st, newRequest(t, content))
	opened := 0
	open := func() (storage.Storage, error) { opened++; return st, nil }
	req := RestoreRequest{Location: testLoc, ID: rec.ID, Target: target, Once: true}

	res, err := RunRestore(ctx, open, req)
	if err != nil || res.Skipped || res.ID != rec.ID || res.Target != target || res.CompletionTime.IsZero() || opened != 1 {
		t.Fatalf("first run: %+v, %v, storage opened %d times", res, err, opened)
	}
	if got := RestoredID(target); got != rec.ID {
		t.Errorf("marker = %q, want %s", got, rec.ID)
	}
	if err := os.WriteFile(filepath.Join(target, "index.html"), []byte("edited since"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = RunRestore(ctx, open, req)
	if err != nil || !res.Skipped || res.ID != rec.ID || opened != 1 {
		t.Errorf("second run: %+v, %v, storage opened %d times; want skipped without opening it", res, err, opened)
	}
	if b, _ := os.ReadFile(filepath.Join(target, "index.html")); string(b) != "edited since" {
		t.Errorf("a skipped restore changed the content: %q", b)
	}

	// Without Once the marker is neither read nor written.
	req.Once = false
	if res, err := RunRestore(ctx, open, req); err != nil || res.Skipped || opened != 2 {
		t.Errorf("run without Once: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(target, "index.html")); string(b) != "backed up" {
		t.Errorf("content after a restore without Once: %q", b)
	}
}

func TestRunRestoreSaysWhatFailedAndWhatWasLeft(t *testing.T) {
	ctx := context.Background()
	st := newLocal(t)
	content := t.TempDir()
	if err := os.WriteFile(filepath.Join(content, "index.html"), []byte("backed up"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := mustBackup(t, st, newRequest(t, content))
	open := func() (storage.Storage, error) { return st, nil }

	t.Run("storage cannot be opened", func(t *testing.T) {
		want := errors.New("S3 credentials missing")
		_, err := RunRestore(ctx, func() (storage.Storage, error) { return nil, want }, RestoreRequest{Location: testLoc, ID: rec.ID, Target: t.TempDir()})
		if err != want {
			t.Errorf("err = %v, want the opener's error itself", err)
		}
	})
	t.Run("restore refused", func(t *testing.T) {
		_, err := RunRestore(ctx, open, RestoreRequest{Location: testLoc, ID: NewID(time.Now()), Target: t.TempDir(), Once: true})
		if !errors.Is(err, ErrIncomplete) || !strings.HasSuffix(err.Error(), "(the target was left as it was)") {
			t.Errorf("err = %v, want ErrIncomplete saying the target was left as it was", err)
		}
	})
	t.Run("restored but not recorded", func(t *testing.T) {
		target := t.TempDir()
		// A directory where the marker goes: the restore leaves it in place
		// (bookkeeping, not content) and the marker cannot replace it.
		if err := os.MkdirAll(filepath.Join(target, RestoredMarker, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := RunRestore(ctx, open, RestoreRequest{Location: testLoc, ID: rec.ID, Target: target, Once: true})
		if err == nil || !strings.HasPrefix(err.Error(), "backup "+rec.ID+" restored, but recording it failed: ") {
			t.Errorf("err = %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(target, "index.html")); string(b) != "backed up" {
			t.Errorf("content %q, want the restored content", b)
		}
	})
}

func TestWriteResultPrintsOneLineAndFillsTheTerminationLog(t *testing.T) {
	res := RestoreResult{ID: "id", Target: "/content", CompletionTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Skipped: true}
	want := `{"id":"id","target":"/content","completionTime":"2026-01-01T00:00:00Z","skipped":true}` + "\n"

	log := filepath.Join(t.TempDir(), "termination-log")
	var out bytes.Buffer
	if err := WriteResult(&out, log, res); err != nil || out.String() != want {
		t.Errorf("WriteResult = %v, printed %q, want %q", err, out.String(), want)
	}
	if b, err := os.ReadFile(log); err != nil || string(b) != want {
		t.Errorf("termination log %q (%v), want %q", b, err, want)
	}
	// A later, shorter result replaces the whole message.
	out.Reset()
	if err := WriteResult(&out, log, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(log); string(b) != "{\"a\":1}\n" {
		t.Errorf("termination log after a second result: %q", b)
	}

	if err := WriteResult(&out, "", res); err != nil {
		t.Errorf(`WriteResult with the log disabled = %v`, err)
	}
	// An unwritable log is skipped, not an error.
	if err := WriteResult(&out, filepath.Join(t.TempDir(), "missing", "log"), res); err != nil {
		t.Errorf("WriteResult with an unwritable log = %v", err)
	}
	// The default path exists in a pod and is never created outside one.
	if _, err := os.Stat(DefaultTerminationLog); errors.Is(err, fs.ErrNotExist) {
		if err := WriteResult(&out, DefaultTerminationLog, res); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(DefaultTerminationLog); !errors.Is(err, fs.ErrNotExist) {
			os.Remove(DefaultTerminationLog)
			t.Errorf("WriteResult created %s", DefaultTerminationLog)
		}
	}
	if err := WriteResult(&out, log, func() {}); err == nil {
		t.Error("WriteResult of a value JSON cannot encode succeeded")
	}
}
