package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckKeyRefusesKeysThatCouldEscapeOrAlias(t *testing.T) {
	for key, wantOK := range map[string]bool{
		"a/b/c.txt": true,
		"a":         true,
		"":          false,
		"/abs":      false,
		"a/../b":    false,
		"../a":      false,
		"a//b":      false,
		"a/./b":     false,
		"a/":        false,
		`a\..\b`:    false,
	} {
		if err := CheckKey(key); (err == nil) != wantOK {
			t.Errorf("CheckKey(%q) = %v, want ok=%v", key, err, wantOK)
		}
	}
}

// brokenReader yields some bytes and then fails, like a dropped connection.
type brokenReader struct{ sent bool }

func (b *brokenReader) Read(p []byte) (int, error) {
	if b.sent {
		return 0, errors.New("connection reset")
	}
	b.sent = true
	return copy(p, strings.Repeat("x", 1000)), nil
}

func TestLocalFailedPutLeavesNothingVisibleNorBehind(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Put(ctx, "ns/web/id/content.tar.gz", &brokenReader{}); err == nil {
		t.Fatal("Put succeeded on a broken stream")
	}
	if _, err := l.Get(ctx, "ns/web/id/content.tar.gz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after failed Put = %v, want ErrNotFound", err)
	}
	keys, err := l.List(ctx, "")
	if err != nil || len(keys) != 0 {
		t.Errorf("List = %v, %v; want nothing", keys, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "ns", "web", "id"))
	if len(entries) != 0 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestLocalPutGetListDelete(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"p/ns/web/2/m.json", "p/ns/web/1/m.json", "p/ns/other/1/m.json"} {
		if n, err := l.Put(ctx, k, strings.NewReader("body of "+k)); err != nil || n != int64(len("body of "+k)) {
			t.Fatalf("Put(%s) = %d, %v", k, n, err)
		}
	}
	keys, err := l.List(ctx, "p/ns/web/")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p/ns/web/1/m.json", "p/ns/web/2/m.json"}, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	rc, err := l.Get(ctx, "p/ns/web/1/m.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if string(body) != "body of p/ns/web/1/m.json" {
		t.Errorf("Get = %q", body)
	}
	if err := l.Delete(ctx, "p/ns/web/1/m.json"); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, "p/ns/web/1/m.json"); err != nil {
		t.Errorf("second Delete = %v, want nil (missing is fine)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "ns", "web", "1")); !os.IsNotExist(err) {
		t.Errorf("empty run directory not removed: %v", err)
	}
	if _, err := l.Put(ctx, "../escape", strings.NewReader("x")); err == nil {
		t.Error("Put accepted a key leaving the root")
	}
}
