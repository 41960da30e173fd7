// Package storage holds the destinations a backup artifact is written to: a
// local directory (the `pvc` destination, a mounted path) and any
// S3-compatible endpoint. Both give the same guarantee the agent relies on: an
// object becomes visible only once it was written completely, so a write
// killed midway never leaves something that looks finished.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// ErrNotFound is returned (wrapped) by Get for a key that does not exist.
var ErrNotFound = errors.New("object not found")

// Storage is a flat key/value store of byte streams; keys use "/" separators.
type Storage interface {
	// Put stores r under key, streaming (the size is not known in advance).
	// It returns the number of bytes stored. When it fails, nothing new is
	// visible under key.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Get opens the object at key; a missing key gives an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns every key under prefix (recursively), sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes the object at key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// CheckKey refuses keys that could escape a local root or be read two ways:
// absolute, empty segments, "." or "..", or a trailing slash.
func CheckKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") ||
		path.Clean(key) != key || strings.Contains(key, "\\") {
		return fmt.Errorf("invalid storage key %q", key)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("invalid storage key %q", key)
		}
	}
	return nil
}
