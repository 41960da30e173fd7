package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/fsutil"
)

// tmpPrefix marks files still being written; List never shows them.
const tmpPrefix = fsutil.TempPrefix

// Local stores objects as files below a root directory (the `pvc`
// destination). Writes go through fsutil.Write (a temporary file, fsynced and
// renamed into place), so a killed write never leaves a visible, truncated
// object.
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

// Put implements Storage. Objects are created with mode 0600.
func (l *Local) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	dst, err := l.path(key)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	var n int64
	err = fsutil.Write(dst, 0o600, func(w io.Writer) error {
		var err error
		if n, err = io.Copy(w, ctxReader{ctx, r}); err != nil {
			return fmt.Errorf("write %s: %w", key, err)
		}
		return nil
	})
	return n, err
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
	slices.Sort(keys)
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
