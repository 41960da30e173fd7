package agent

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"
)

// ErrUnsafeArchive is wrapped by errors about archive entries that would
// write outside the target (path traversal, escaping symlinks).
var ErrUnsafeArchive = errors.New("unsafe archive entry")

// extractTarGz unpacks r into the existing, empty directory dir. Every write
// goes through an os.Root, so even a crafted archive (a symlink followed by a
// file beneath it) cannot write outside dir; names that would leave dir are
// refused outright, and symlinks are checked after extraction with the same
// rule Backup uses.
func extractTarGz(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	x := extraction{root: root}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if err := x.checkLinks(dir); err != nil {
		return err
	}
	return x.finishDirs()
}

// extraction is one extractTarGz under way: the root every write goes
// through, and what can only be finished once every entry is written.
type extraction struct {
	root *os.Root
	// dirs are the directories in archive order, with the mode and time
	// finishDirs gives them.
	dirs []dirMeta
	// links are the symlinks written, which checkLinks verifies.
	links []string
}

type dirMeta struct {
	name  string
	mode  os.FileMode
	mtime time.Time
}

// entry writes one archive entry (a directory, a regular file read from r,
// or a symlink) below the root, creating its parents; it refuses names that
// leave the target and every other type.
func (x *extraction) entry(hdr *tar.Header, r io.Reader) error {
	if isTraversal(hdr.Name) {
		return fmt.Errorf("tar entry %q: path leaves the target: %w", hdr.Name, ErrUnsafeArchive)
	}
	name := path.Clean(hdr.Name)
	mode := os.FileMode(hdr.Mode).Perm()
	if parent := path.Dir(name); parent != "." {
		if err := x.root.MkdirAll(parent, 0o700); err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		// Owner-writable while extracting; the real mode is set at the end
		// so a read-only directory can still receive its children.
		if err := x.root.Mkdir(name, 0o700); err != nil && !isDir(x.root, name) {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
		x.dirs = append(x.dirs, dirMeta{name, mode, hdr.ModTime})
	case tar.TypeReg:
		if err := writeFile(x.root, name, r, mode, hdr.ModTime); err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
	case tar.TypeSymlink:
		if err := x.root.Symlink(hdr.Linkname, name); err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
		x.links = append(x.links, name)
	default:
		return fmt.Errorf("tar entry %q: unsupported type %q: %w", hdr.Name, hdr.Typeflag, ErrUnsafeArchive)
	}
	return nil
}

// checkLinks refuses the archive when a symlink written into dir points
// outside it, by the rule Backup applies to the content it archives.
func (x *extraction) checkLinks(dir string) error {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for _, l := range x.links {
		if err := symlinkInside(realDir, filepath.Join(realDir, filepath.FromSlash(l))); err != nil {
			return fmt.Errorf("tar entry %q: symlink %w: %w", l, err, ErrUnsafeArchive)
		}
	}
	return nil
}

// finishDirs gives the directories their archived mode and time, deepest
// first, so a read-only parent is locked after its children.
func (x *extraction) finishDirs() error {
	for _, d := range slices.Backward(x.dirs) {
		if err := x.root.Chmod(d.name, d.mode); err != nil {
			return err
		}
		if err := x.root.Chtimes(d.name, d.mtime, d.mtime); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(root *os.Root, name string, r io.Reader, mode os.FileMode, mtime time.Time) error {
	// O_EXCL: a duplicate entry, or one replacing a symlink, is an error.
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := root.Chmod(name, mode); err != nil {
		return err
	}
	return root.Chtimes(name, mtime, mtime)
}

// isDir: a directory entry may follow an entry beneath it (other tar writers).
func isDir(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.IsDir()
}
