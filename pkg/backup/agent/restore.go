package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

var (
	// ErrIncomplete: the run has no manifest (still running, failed or killed).
	ErrIncomplete = errors.New("backup is incomplete")
	// ErrCorrupt: a file differs from what the manifest recorded.
	ErrCorrupt = errors.New("backup is corrupt")
)

// Restore replaces the content of targetDir with the content of backup id.
//
// Order: the manifest and every file it lists are downloaded into a scratch
// directory under os.TempDir() (TMPDIR: give the Job an emptyDir sized for
// the artifact) and every size and sha256 is checked; only then is the
// verified local copy (never a second download) extracted into a staging
// directory inside targetDir and swapped in (see swapChildren for what
// "atomic" means). Any failure before the swap leaves targetDir as it was.
func Restore(ctx context.Context, st storage.Storage, loc Location, id, targetDir string) error {
	if err := loc.validate(); err != nil {
		return err
	}
	if _, err := IDTime(id); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "nginx-operator-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	m, err := fetchManifest(ctx, st, loc, id)
	if err != nil {
		return err
	}
	if _, ok := m.file(ContentFile); !ok {
		return fmt.Errorf("backup %s has no %s (was include.content off?)", id, ContentFile)
	}
	for _, f := range m.Files {
		if err := download(ctx, st, loc.Key(id, f.Name), filepath.Join(work, f.Name), f); err != nil {
			return fmt.Errorf("backup %s: %s: %w", id, f.Name, err)
		}
	}
	return replaceContent(filepath.Join(work, ContentFile), targetDir, id)
}

func fetchManifest(ctx context.Context, st storage.Storage, loc Location, id string) (*Manifest, error) {
	rc, err := st.Get(ctx, loc.Key(id, ManifestFile))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("backup %s: %s not found: %w", id, ManifestFile, ErrIncomplete)
	}
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w", id, err)
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("backup %s: %s: %w", id, ManifestFile, err)
	}
	m, err := parseManifest(body)
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w: %w", id, ErrCorrupt, err)
	}
	if m.ID != id || m.Namespace != loc.Namespace || m.Instance != loc.Instance {
		return nil, fmt.Errorf("backup %s: %s names %s/%s %s: %w", id, ManifestFile, m.Namespace, m.Instance, m.ID, ErrCorrupt)
	}
	return m, nil
}

// download copies key to dst and checks it against want. It reads at most
// one byte more than expected, so an oversized object cannot fill the disk.
func download(ctx context.Context, st storage.Storage, key, dst string, want FileEntry) error {
	rc, err := st.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("missing from storage: %w", ErrIncomplete)
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rc, want.Size+1))
	if err != nil {
		return err
	}
	if n != want.Size {
		return fmt.Errorf("size %d, manifest says %d: %w", n, want.Size, ErrCorrupt)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 {
		return fmt.Errorf("sha256 %s, manifest says %s: %w", got, want.SHA256, ErrCorrupt)
	}
	return f.Close()
}

// replaceContent extracts the verified archive next to the target's children
// and swaps it in.
func replaceContent(archive, targetDir, id string) error {
	if err := os.MkdirAll(targetDir, 0o755); err != nil {
		return err
	}
	state := filepath.Join(targetDir, stateDirName)
	// A leftover from a restore killed mid-way: it only ever holds staging
	// data or the previous content being replaced, so it is dropped.
	if err := os.RemoveAll(state); err != nil {
		return err
	}
	staged := filepath.Join(state, "new")
	if err := os.MkdirAll(staged, 0o700); err != nil {
		return err
	}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := extractTarGz(f, staged); err != nil {
		os.RemoveAll(state)
		return fmt.Errorf("backup %s: %s: %w", id, ContentFile, err)
	}
	if err := swapChildren(targetDir, state); err != nil {
		return fmt.Errorf("backup %s: replacing %s: %w", id, targetDir, err)
	}
	return nil
}
