package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

var testLoc = Location{Prefix: "backups", Namespace: "team-a", Instance: "web"}

// newRequest backs up a config dir and the given content dir.
func newRequest(t testing.TB, content string) Request {
	t.Helper()
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "nginx.conf"), []byte("events {}\nhttp {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Request{
		Location:        testLoc,
		OperatorVersion: "v0.0.0-test",
		Image:           "nginx:1.27",
		Spec:            json.RawMessage(`{"replicas":2}`),
		ConfigDir:       conf,
		ContentDir:      content,
	}
}

func mustBackup(t testing.TB, st storage.Storage, req Request) Record {
	t.Helper()
	rec, err := Backup(context.Background(), st, req)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	return rec
}

func mibPerSec(bytes int64, d time.Duration) string {
	return fmt.Sprintf("%.1f MiB/s", float64(bytes)/(1<<20)/d.Seconds())
}

func TestBackupThenRestoreIntoEmptyDirIsByteIdentical(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st storage.Storage) {
		src := t.TempDir()
		writeTree(t, src, 20)
		ctx := context.Background()

		start := time.Now()
		rec := mustBackup(t, st, newRequest(t, src))
		backupTook := time.Since(start)

		target := filepath.Join(t.TempDir(), "restored")
		start = time.Now()
		if err := Restore(ctx, st, testLoc, rec.ID, target); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		restoreTook := time.Since(start)
		t.Logf("20 MiB tree: artifact %d bytes; backup %v (%s), restore %v (%s)",
			rec.SizeBytes, backupTook.Round(time.Millisecond), mibPerSec(20<<20, backupTook),
			restoreTook.Round(time.Millisecond), mibPerSec(20<<20, restoreTook))

		if diff := cmp.Diff(snapshot(t, src), snapshot(t, target)); diff != "" {
			t.Errorf("restored tree differs (-source +restored):\n%s", diff)
		}
		runs, err := List(ctx, st, testLoc)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || !runs[0].Complete || runs[0].ID != rec.ID {
			t.Errorf("List = %+v, want one complete run %s", runs, rec.ID)
		}
		wantFiles := []string{ConfigFile, ContentFile}
		var gotFiles []string
		for _, f := range rec.Manifest.Files {
			gotFiles = append(gotFiles, f.Name)
		}
		if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
			t.Errorf("manifest files (-want +got):\n%s", diff)
		}
	})
}

func TestRestoreRefusesBadArtifactAndLeavesTargetUntouched(t *testing.T) {
	cases := []struct {
		name     string
		damage   func(t *testing.T, st storage.Storage, id string)
		wantErr  error
		wantText string // the error names the file
	}{
		{"one flipped byte in content.tar.gz", func(t *testing.T, st storage.Storage, id string) {
			flipByte(t, st, testLoc.Key(id, ContentFile))
		}, ErrCorrupt, ContentFile},
		{"one flipped byte in config.tar.gz", func(t *testing.T, st storage.Storage, id string) {
			flipByte(t, st, testLoc.Key(id, ConfigFile))
		}, ErrCorrupt, ConfigFile},
		{"content.tar.gz truncated", func(t *testing.T, st storage.Storage, id string) {
			key := testLoc.Key(id, ContentFile)
			rc, err := st.Get(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			if _, err := st.Put(context.Background(), key, strings.NewReader(string(data[:len(data)-1]))); err != nil {
				t.Fatal(err)
			}
		}, ErrCorrupt, ContentFile},
		{"content.tar.gz missing", func(t *testing.T, st storage.Storage, id string) {
			if err := st.Delete(context.Background(), testLoc.Key(id, ContentFile)); err != nil {
				t.Fatal(err)
			}
		}, ErrIncomplete, ContentFile},
		{"manifest missing (incomplete run)", func(t *testing.T, st storage.Storage, id string) {
			if err := st.Delete(context.Background(), testLoc.Key(id, ManifestFile)); err != nil {
				t.Fatal(err)
			}
		}, ErrIncomplete, ManifestFile},
		{"manifest corrupt", func(t *testing.T, st storage.Storage, id string) {
			flipByte(t, st, testLoc.Key(id, ManifestFile))
		}, ErrCorrupt, ManifestFile},
	}
	forEachBackend(t, func(t *testing.T, st storage.Storage) {
		src := t.TempDir()
		writeTree(t, src, 1)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := mustBackup(t, st, newRequest(t, src))
				tc.damage(t, st, rec.ID)

				target := t.TempDir()
				if err := os.WriteFile(filepath.Join(target, "sentinel.html"), []byte("live site"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(target, "assets"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(target, "assets", "app.js"), []byte("js"), 0o600); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, target)

				err := Restore(context.Background(), st, testLoc, rec.ID, target)
				if !errors.Is(err, tc.wantErr) || !strings.Contains(fmt.Sprint(err), tc.wantText) {
					t.Fatalf("Restore error = %v, want %v naming %s", err, tc.wantErr, tc.wantText)
				}
				t.Logf("refused with: %v", err)
				if diff := cmp.Diff(before, snapshot(t, target)); diff != "" {
					t.Errorf("target changed (-before +after):\n%s", diff)
				}
			})
		}
	})
}

// failingReader fails (or cancels the context) once n bytes were read.
type failingReader struct {
	r      io.Reader
	n      int64
	cancel context.CancelFunc // nil: return an error instead
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		if f.cancel != nil {
			f.cancel()
			return 0, context.Canceled
		}
		return 0, errors.New("connection reset (injected)")
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= int64(n)
	return n, err
}

// killingStorage cuts every Put of content.tar.gz after n bytes.
type killingStorage struct {
	storage.Storage
	n      int64
	cancel context.CancelFunc
}

func (k *killingStorage) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if strings.HasSuffix(key, "/"+ContentFile) {
		r = &failingReader{r: r, n: k.n, cancel: k.cancel}
	}
	return k.Storage.Put(ctx, key, r)
}

// noCleanupStorage ignores Delete, to prove that even the leftovers of a
// killed run (whose cleanup never ran) do not look complete.
type noCleanupStorage struct{ storage.Storage }

func (noCleanupStorage) Delete(context.Context, string) error { return nil }

func TestKilledUploadNeverLooksComplete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st storage.Storage) {
		src := t.TempDir()
		writeTree(t, src, 20)
		for _, tc := range []struct {
			name   string
			cancel bool
		}{{"stream fails after 18 MiB", false}, {"context cancelled after 18 MiB", true}} {
			t.Run(tc.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				// 18 MiB: past the first 16 MiB S3 part, so a multipart upload is
				// really in progress when it is cut.
				k := &killingStorage{Storage: noCleanupStorage{st}, n: 18 << 20}
				if tc.cancel {
					k.cancel = cancel
				}
				_, err := Backup(ctx, k, newRequest(t, src))
				if err == nil {
					t.Fatal("Backup succeeded, want an error")
				}
				t.Logf("Backup failed as expected: %v", err)
				keys, err := st.List(context.Background(), testLoc.dir())
				if err != nil {
					t.Fatal(err)
				}
				for _, key := range keys {
					if strings.HasSuffix(key, "/"+ManifestFile) || strings.HasSuffix(key, "/"+ContentFile) {
						t.Errorf("visible after a killed upload: %s (all keys %v)", key, keys)
					}
				}
				runs, err := List(context.Background(), st, testLoc)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range runs {
					if r.Complete {
						t.Errorf("run %s listed as complete after a killed upload", r.ID)
					}
				}
			})
		}
	})
}

func TestPruneKeepsExactlyTheNewestNComplete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st storage.Storage) {
		src := t.TempDir()
		writeTree(t, src, 0)
		ctx := context.Background()
		const keep = 3
		clock := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
		req := newRequest(t, src)
		req.Now = func() time.Time { return clock }
		var ids []string
		for range keep + 3 {
			ids = append(ids, mustBackup(t, st, req).ID)
			clock = clock.Add(24 * time.Hour)
		}
		// An incomplete run older than the grace (a killed upload) is cleaned;
		// a recent one may still be uploading and stays.
		oldPartial := NewID(clock.Add(-48 * time.Hour).Add(time.Minute))
		newPartial := NewID(clock.Add(-time.Hour))
		for _, id := range []string{oldPartial, newPartial} {
			if _, err := st.Put(ctx, testLoc.Key(id, ContentFile), strings.NewReader("partial")); err != nil {
				t.Fatal(err)
			}
		}

		deleted, err := PruneAt(ctx, st, testLoc, keep, clock)
		if err != nil {
			t.Fatalf("Prune: %v", err)
		}
		if diff := cmp.Diff([]string{oldPartial, ids[2], ids[1], ids[0]}, deleted); diff != "" {
			t.Errorf("deleted (-want +got):\n%s", diff)
		}
		runs, err := List(ctx, st, testLoc)
		if err != nil {
			t.Fatal(err)
		}
		var complete, incomplete []string
		for _, r := range runs {
			if r.Complete {
				complete = append(complete, r.ID)
			} else {
				incomplete = append(incomplete, r.ID)
			}
		}
		if diff := cmp.Diff(ids[len(ids)-keep:], complete); diff != "" {
			t.Errorf("remaining complete backups (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{newPartial}, incomplete); diff != "" {
			t.Errorf("remaining incomplete runs (-want +got):\n%s", diff)
		}

		// keepLast 0 still keeps the newest complete backup.
		if _, err := PruneAt(ctx, st, testLoc, 0, clock); err != nil {
			t.Fatal(err)
		}
		runs, _ = List(ctx, st, testLoc)
		if len(runs) == 0 || runs[len(runs)-2].ID != ids[len(ids)-1] || !runs[len(runs)-2].Complete {
			t.Errorf("keepLast 0 left %+v, want the newest complete %s kept", runs, ids[len(ids)-1])
		}
	})
}

// BenchmarkBackupAndRestore reports the agent's throughput per destination
// on the tree of writeTree with a 20 MiB file (MB/s counts those 20 MiB):
//
//	go test ./pkg/backup/agent -run '^$' -bench . -benchtime 3x
func BenchmarkBackupAndRestore(b *testing.B) {
	const size = 20 << 20
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			st := be.new(b)
			src := b.TempDir()
			writeTree(b, src, size>>20)
			req := newRequest(b, src)
			b.Run("backup", func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					mustBackup(b, st, req)
				}
			})
			rec := mustBackup(b, st, req)
			b.Run("restore", func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					if err := Restore(context.Background(), st, testLoc, rec.ID, b.TempDir()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
