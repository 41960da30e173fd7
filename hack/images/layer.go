package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Kind is what a layer entry is. Hard links, devices and FIFOs are left out
// on purpose: none of the images needs them, and the container runtime
// provides /dev.
type Kind int

const (
	Dir Kind = iota
	File
	Symlink
)

func (k Kind) String() string {
	switch k {
	case Dir:
		return "directory"
	case File:
		return "file"
	case Symlink:
		return "symlink"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Entry is one path of an image's file tree. Entries are plain values so
// that each image is a list anyone can read and a test can compare.
type Entry struct {
	// Path is absolute and clean, as seen inside the container.
	Path string
	Kind Kind
	// Mode holds the permission bits and fs.ModeSticky, fs.ModeSetuid or
	// fs.ModeSetgid; the type bits come from Kind.
	Mode     fs.FileMode
	UID, GID int
	// Data is a File's content.
	Data []byte
	// Target is a Symlink's target, written as given.
	Target string
}

// DirEntry, FileEntry and SymlinkEntry build entries owned by root unless
// the caller sets UID and GID.
func DirEntry(p string, mode fs.FileMode) Entry { return Entry{Path: p, Kind: Dir, Mode: mode} }

func FileEntry(p string, mode fs.FileMode, data []byte) Entry {
	return Entry{Path: p, Kind: File, Mode: mode, Data: data}
}

func SymlinkEntry(p, target string) Entry {
	return Entry{Path: p, Kind: Symlink, Mode: 0o777, Target: target}
}

// Owned returns e owned by uid:gid.
func (e Entry) Owned(uid, gid int) Entry {
	e.UID, e.GID = uid, gid
	return e
}

func (e Entry) equal(o Entry) bool {
	return e.Path == o.Path && e.Kind == o.Kind && e.Mode == o.Mode && e.UID == o.UID &&
		e.GID == o.GID && bytes.Equal(e.Data, o.Data) && e.Target == o.Target
}

// layerSet normalises the entries of one image's layers: it refuses
// conflicting duplicates and paths written through a symlink, and adds the
// parent directories that no layer declares (0755, root), so a layer never
// depends on the order its entries were listed in.
type layerSet struct {
	// seen holds every path of the layers normalised so far.
	seen map[string]Entry
}

func newLayerSet() *layerSet { return &layerSet{seen: map[string]Entry{}} }

// normalise returns entries sorted by path with the missing parents added.
// Sorting by path puts a directory before everything under it, which is
// what tar extractors expect.
func (s *layerSet) normalise(entries []Entry) ([]Entry, error) {
	layer := map[string]Entry{}
	for _, e := range entries {
		if err := checkEntry(e); err != nil {
			return nil, err
		}
		if prev, ok := layer[e.Path]; ok && !prev.equal(e) {
			return nil, fmt.Errorf("%s: conflicting entries (%s and %s)", e.Path, prev.Kind, e.Kind)
		}
		layer[e.Path] = e
	}
	for _, e := range entries {
		for dir := path.Dir(e.Path); dir != "/"; dir = path.Dir(dir) {
			parent, ok := layer[dir]
			if !ok {
				parent, ok = s.seen[dir]
			}
			if !ok {
				layer[dir] = DirEntry(dir, 0o755)
				continue
			}
			if parent.Kind != Dir {
				// The runtime would follow the symlink (or fail on a file):
				// the entry would land somewhere else than it says.
				return nil, fmt.Errorf("%s: parent %s is a %s, not a directory", e.Path, dir, parent.Kind)
			}
		}
	}
	out := make([]Entry, 0, len(layer))
	for p, e := range layer {
		out = append(out, e)
		s.seen[p] = e
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func checkEntry(e Entry) error {
	if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path || e.Path == "/" {
		return fmt.Errorf("entry path %q: want an absolute, clean path below /", e.Path)
	}
	if e.Mode&^(fs.ModePerm|fs.ModeSticky|fs.ModeSetuid|fs.ModeSetgid) != 0 {
		return fmt.Errorf("%s: mode %v has type bits; the type comes from Kind", e.Path, e.Mode)
	}
	switch {
	case e.Kind == Symlink && e.Target == "":
		return fmt.Errorf("%s: symlink without a target", e.Path)
	case e.Kind != Symlink && e.Target != "":
		return fmt.Errorf("%s: a %s has no target", e.Path, e.Kind)
	case e.Kind != File && len(e.Data) > 0:
		return fmt.Errorf("%s: a %s has no content", e.Path, e.Kind)
	}
	return nil
}

// writeTar writes normalised entries as an uncompressed layer. Every header
// field that could vary between machines or runs is fixed: one modification
// time, numeric owners without user or group names (the build machine's
// names mean nothing in the image), so the same entries always give the
// same bytes.
func writeTar(w io.Writer, entries []Entry, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		hdr := &tar.Header{
			Name:    strings.TrimPrefix(e.Path, "/"),
			Mode:    tarMode(e.Mode),
			Uid:     e.UID,
			Gid:     e.GID,
			ModTime: mtime,
		}
		switch e.Kind {
		case Dir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case File:
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.Data))
		case Symlink:
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.Target
		default:
			return fmt.Errorf("%s: unknown kind %v", e.Path, e.Kind)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("%s: %w", e.Path, err)
		}
		if e.Kind == File {
			if _, err := tw.Write(e.Data); err != nil {
				return fmt.Errorf("%s: %w", e.Path, err)
			}
		}
	}
	return tw.Close()
}

// tarMode is the mode field of a tar header: permission bits plus the
// set-user-ID, set-group-ID and sticky bits in their Unix positions.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// newLayer turns normalised entries into a gzip-compressed OCI layer. The
// tar is built once in memory (the largest image is one Go binary) and the
// compressed bytes are cached, so writing a tarball and pushing compress
// only once. Go's gzip writer sets no name or time in its header: the same
// tar always gives the same digest.
func newLayer(entries []Entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := writeTar(&buf, entries, mtime); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.DefaultCompression),
		tarball.WithCompressedCaching,
	)
}
