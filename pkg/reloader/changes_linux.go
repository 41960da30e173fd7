//go:build linux

package reloader

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// changeEvents are the inotify events that can mean new content: the
// kubelet updates a mounted Secret or ConfigMap by renaming a symlink
// (..data) in the volume's directory; other writers create, write, delete
// or rename files.
const changeEvents = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM | syscall.IN_DELETE |
	syscall.IN_CLOSE_WRITE | syscall.IN_ATTRIB

// changes wakes the reloader soon after something changes under paths, so
// a new configuration is looked at at once rather than at the next poll
// (half an Interval later, on average). It is a wake-up only: what changed
// is still found by the digest, and the poll stays, for what inotify does
// not see. It watches each directory of paths and the directories under
// them but the kubelet's versioned ones (..<timestamp>), and the directory
// of a file; nil, with a line in the log, when inotify is not available.
func changes(ctx context.Context, paths []string, logf func(string, ...any)) <-chan struct{} {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		logf("watching for changes (inotify): %v; looking every interval only", err)
		return nil
	}
	// A non-blocking descriptor goes to Go's poller: Read waits without a
	// thread, and Close ends it.
	f := os.NewFile(uintptr(fd), "inotify")
	watch := func(dir string) {
		if _, err := syscall.InotifyAddWatch(fd, dir, changeEvents); err != nil {
			logf("watching %s for changes (inotify): %v; looking every interval only", dir, err)
		}
	}
	for _, root := range paths {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil // gone or unreadable: the digest reports it
			case !d.IsDir():
				if path == root {
					watch(filepath.Dir(path))
				}
				return nil
			case path != root && strings.HasPrefix(d.Name(), ".."):
				return filepath.SkipDir
			}
			watch(path)
			return nil
		})
	}
	out := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case out <- struct{}{}:
			default: // one wake-up pending is enough
			}
		}
	}()
	go func() {
		<-ctx.Done()
		_ = f.Close()
	}()
	return out
}
