// Package fsutil writes files atomically: a reader of the target path sees
// either the previous file or the complete new one, never a partial write,
// and a write that fails leaves neither a partial target nor a temporary file.
package fsutil

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temporary file the writers here create
// next to their target, so that a directory listing can skip writes still in
// progress (or left behind by a process killed mid-write).
const TempPrefix = ".tmp-"

// WriteFile atomically replaces path with data, with permissions perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write atomically replaces path with what write writes, with permissions
// perm (set exactly, the umask does not apply). write's error is returned as
// it is, so a caller can wrap or recognise it.
//
// The content goes to a temporary file in path's directory, which is given
// perm, fsynced, closed and renamed over path; then the directory is fsynced
// so the rename survives a crash. Until the rename, path is untouched; if any
// step before it fails, the temporary file is removed. An error from the
// final directory sync means path already holds the new content.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return err
	}
	if err := fill(tmp, perm, write); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return SyncDir(dir)
}

// fill writes, sets perm and fsyncs f, and always closes it. The fsync comes
// before the rename: otherwise a crash could leave path naming a file whose
// data never reached the disk.
func fill(f *os.File, perm fs.FileMode, write func(io.Writer) error) error {
	err := write(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir fsyncs the directory dir, making a rename (or creation) of one of
// its entries durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
