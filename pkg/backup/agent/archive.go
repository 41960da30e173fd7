package agent

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// stateDirName is Restore's scratch directory inside a target; a backup of
// that tree never includes it.
const stateDirName = ".nginx-operator-restore"

// RestoredMarker is the file, in a target's root, in which `restore --once`
// records the id it restored, so a restore init container restores each
// requested id once and not on every start of its pod.
const RestoredMarker = ".nginx-operator-restored"

// notContent reports whether a name in a content volume's root is the
// agent's or the filesystem's bookkeeping rather than content: Restore's
// scratch directory, the restored-id marker, and lost+found, which ext4
// creates owned by root, so the unprivileged agent can neither read nor move
// it. Backups leave them out and restores leave them in place.
func notContent(rootEntry string) bool {
	return rootEntry == stateDirName || rootEntry == RestoredMarker || rootEntry == "lost+found"
}

// writeTarGz archives the tree at root into w. Owners are not recorded: the
// agent runs as an arbitrary non-root user and could not restore them.
// Compression is gzip's fastest level because content is mostly already
// compressed (images, fonts, minified bundles) and throughput matters more.
func writeTarGz(ctx context.Context, w io.Writer, root string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		if notContent(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return addEntry(tw, realRoot, p, filepath.ToSlash(rel), d)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addEntry(tw *tar.Writer, realRoot, p, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	hdr := &tar.Header{
		Name:    name,
		Mode:    int64(info.Mode().Perm()),
		ModTime: info.ModTime().UTC().Truncate(time.Second),
		Format:  tar.FormatPAX,
	}
	switch t := info.Mode().Type(); {
	case t == 0:
		hdr.Typeflag = tar.TypeReg
		hdr.Size = info.Size()
	case t == fs.ModeDir:
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
	case t == fs.ModeSymlink:
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		if err := symlinkInside(realRoot, p); err != nil {
			return fmt.Errorf("refusing symlink %s -> %s: %w", name, target, err)
		}
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname = target
		// A restore cannot set a symlink's own mtime (os.Chtimes follows the
		// link), so recording it would make a restored tree's archive differ
		// from the original's by when the restore ran: links carry none.
		hdr.ModTime = time.Unix(0, 0).UTC()
	default:
		return fmt.Errorf("refusing %s: unsupported file type %s", name, t)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	// CopyN: a file that grows while being read must not overflow its header.
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("%s: %w (did it shrink while being archived?)", name, err)
	}
	return nil
}

// symlinkInside fails unless the link at p resolves, through every link in
// the chain, to an existing path inside realRoot.
func symlinkInside(realRoot, p string) error {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("does not resolve: %w", err)
	}
	rel, err := filepath.Rel(realRoot, resolved)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return fmt.Errorf("resolves outside the root, to %s", resolved)
	}
	return nil
}

// isTraversal reports whether a tar entry name would leave the root.
func isTraversal(name string) bool {
	clean := strings.TrimSuffix(name, "/")
	return clean == "" || !filepath.IsLocal(filepath.FromSlash(clean)) || strings.Contains(clean, "\\")
}
