package agent

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/nginx-operator/nginx-operator/pkg/fsutil"
)

// swapChildren replaces the children of target with those of state/new.
//
// What "atomic" means here: target is usually a mounted volume's root, which
// cannot itself be renamed, and the staging directory lives inside it so
// every step is a rename within one filesystem (no copying, no ENOSPC half
// way). Each child moves with one atomic rename(2): first every current child
// into state/old, then every new child into target. A reader never sees a
// half-written file, and any failure rolls the renames back. A crash between
// the two phases leaves target partly empty, with the old and new trees
// intact under .nginx-operator-restore; re-running the same restore (what
// the restore init container does on its next start) yields the full new
// content, so the restore is atomic from the point of view of nginx, which
// starts only after the init container succeeded.
func swapChildren(target, state string) error {
	newDir, oldDir := filepath.Join(state, "new"), filepath.Join(state, "old")
	if err := os.Mkdir(oldDir, 0o700); err != nil {
		return err
	}
	current, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	var movedOut []string
	rollback := func(movedIn []string, cause error) error {
		var errs []error
		for _, n := range movedIn {
			errs = append(errs, os.Rename(filepath.Join(target, n), filepath.Join(newDir, n)))
		}
		for _, n := range movedOut {
			errs = append(errs, os.Rename(filepath.Join(oldDir, n), filepath.Join(target, n)))
		}
		if err := errors.Join(errs...); err != nil {
			return errors.Join(cause, err) // state dir kept: it holds data
		}
		return errors.Join(cause, os.RemoveAll(state))
	}
	for _, e := range current {
		if notContent(e.Name()) {
			continue
		}
		if err := os.Rename(filepath.Join(target, e.Name()), filepath.Join(oldDir, e.Name())); err != nil {
			return rollback(nil, err)
		}
		movedOut = append(movedOut, e.Name())
	}
	incoming, err := os.ReadDir(newDir)
	if err != nil {
		return rollback(nil, err)
	}
	var movedIn []string
	for _, e := range incoming {
		if err := os.Rename(filepath.Join(newDir, e.Name()), filepath.Join(target, e.Name())); err != nil {
			return rollback(movedIn, err)
		}
		movedIn = append(movedIn, e.Name())
	}
	if err := fsutil.SyncDir(target); err != nil {
		return err
	}
	return os.RemoveAll(state)
}
