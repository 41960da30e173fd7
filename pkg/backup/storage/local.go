package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// tmpPrefix marks files still being written; List never shows them.
const tmpPrefix = ".tmp-"

// Local stores objects as files below a root directory (the `pvc`
// destination). Writes go to a temporary file that is fsynced and renamed
// into place, so a killed write never leaves a visible, truncated object.
type Local struct {
	root string
}

// NewLocal returns a Local storage rooted at dir, creating it if needed.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("local storage: %w", err)
	}
	return &Local{root: dir}, nil
}

func (l *Local) path(key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	if strings.HasPrefix(filepath.Base(key), tmpPrefix) {
		return "", fmt.Errorf("invalid storage key %q: %s is reserved", key, tmpPrefix)
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Put implements Storage.
func (l *Local) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	dst, err := l.path(key)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return 0, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := io.Copy(tmp, ctxReader{ctx, r})
	if err != nil {
		return n, fmt.Errorf("write %s: %w", key, err)
	}
	// fsync before rename: otherwise a crash can leave the new name pointing
	// at a file whose data never reached the disk.
	if err := tmp.Sync(); err != nil {
		return n, err
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return n, err
	}
	done = true
	return n, SyncDir(dir)
}

// SyncDir makes a rename in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Get implements Storage.
func (l *Local) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return f, err
}

// List implements Storage.
func (l *Local) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	// Walk only the directory the prefix names, not the whole destination.
	start := filepath.Join(l.root, filepath.FromSlash(prefix[:strings.LastIndex(prefix, "/")+1]))
	if _, err := os.Stat(start); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

// Delete implements Storage. Directories left empty are removed too, so an
// artifact's directory disappears with its last file.
func (l *Local) Delete(ctx context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := filepath.Dir(p); dir != l.root && strings.HasPrefix(dir, l.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty (or gone): stop
			break
		}
	}
	return nil
}

// ctxReader stops a copy when the context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
