package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormaliseAddsMissingParentsAndSortsByPath(t *testing.T) {
	got, err := newLayerSet().normalise([]Entry{
		FileEntry("/usr/bin/tool", 0o755, []byte("x")),
		SymlinkEntry("/lib", "usr/lib"),
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		DirEntry("/home/nonroot", 0o700).Owned(65532, 65532),
		FileEntry("/usr/bin/tool", 0o755, []byte("x")), // an identical duplicate is harmless
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		DirEntry("/home", 0o755),
		DirEntry("/home/nonroot", 0o700).Owned(65532, 65532),
		SymlinkEntry("/lib", "usr/lib"),
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		DirEntry("/usr", 0o755),
		DirEntry("/usr/bin", 0o755),
		FileEntry("/usr/bin/tool", 0o755, []byte("x")),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("normalised entries (-want +got):\n%s", diff)
	}
}

// A later layer must not redeclare a directory an earlier one set: an
// implicit 0755 /tmp would override the base layer's 1777 /tmp.
func TestNormaliseKeepsParentsOfEarlierLayers(t *testing.T) {
	set := newLayerSet()
	if _, err := set.normalise([]Entry{DirEntry("/tmp", 0o777|fs.ModeSticky)}); err != nil {
		t.Fatal(err)
	}
	got, err := set.normalise([]Entry{FileEntry("/tmp/file", 0o644, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Entry{FileEntry("/tmp/file", 0o644, nil)}, got); diff != "" {
		t.Errorf("second layer (-want +got):\n%s", diff)
	}
}

func TestNormaliseRefusesEntriesAnImageCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		earlier []Entry
		entries []Entry
		want    string
	}{
		{name: "conflicting duplicates", entries: []Entry{FileEntry("/a", 0o644, []byte("1")), FileEntry("/a", 0o644, []byte("2"))}, want: "conflicting entries"},
		{name: "file below a symlink", entries: []Entry{SymlinkEntry("/lib", "usr/lib"), FileEntry("/lib/libc.so.6", 0o755, nil)}, want: "parent /lib is a symlink"},
		{name: "file below an earlier layer's symlink", earlier: []Entry{SymlinkEntry("/lib", "usr/lib")}, entries: []Entry{FileEntry("/lib/libc.so.6", 0o755, nil)}, want: "parent /lib is a symlink"},
		{name: "file below a file", entries: []Entry{FileEntry("/a", 0o644, nil), FileEntry("/a/b", 0o644, nil)}, want: "parent /a is a file"},
		{name: "relative path", entries: []Entry{FileEntry("etc/passwd", 0o644, nil)}, want: "absolute, clean path"},
		{name: "unclean path", entries: []Entry{FileEntry("/etc/../passwd", 0o644, nil)}, want: "absolute, clean path"},
		{name: "the root", entries: []Entry{DirEntry("/", 0o755)}, want: "absolute, clean path"},
		{name: "type bits in the mode", entries: []Entry{FileEntry("/a", fs.ModeDir|0o755, nil)}, want: "type bits"},
		{name: "symlink without target", entries: []Entry{{Path: "/a", Kind: Symlink}}, want: "without a target"},
		{name: "directory with content", entries: []Entry{{Path: "/a", Kind: Dir, Data: []byte("x")}}, want: "has no content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := newLayerSet()
			if _, err := set.normalise(tc.earlier); err != nil {
				t.Fatal(err)
			}
			_, err := set.normalise(tc.entries)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// header is what a container runtime reads from a layer's tar header.
type header struct {
	Name, Linkname string
	Type           byte
	Mode           int64
	UID, GID       int
	Uname, Gname   string
	ModTime        time.Time
	Size           int64
}

func TestWriteTarFixesEveryHeaderField(t *testing.T) {
	mtime := time.Unix(1700000000, 0).UTC()
	entries := []Entry{
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		FileEntry("/usr/bin/su", 0o755|fs.ModeSetuid, []byte("binary")),
		SymlinkEntry("/var/run", "../run"),
		DirEntry("/home/nonroot", 0o700).Owned(65532, 65532),
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, entries, mtime); err != nil {
		t.Fatal(err)
	}
	var got []header
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, header{Name: h.Name, Linkname: h.Linkname, Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid,
			Uname: h.Uname, Gname: h.Gname, ModTime: h.ModTime.UTC(), Size: h.Size})
	}
	want := []header{
		{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777, ModTime: mtime},
		{Name: "usr/bin/su", Type: tar.TypeReg, Mode: 0o4755, ModTime: mtime, Size: 6},
		{Name: "var/run", Linkname: "../run", Type: tar.TypeSymlink, Mode: 0o777, ModTime: mtime},
		{Name: "home/nonroot/", Type: tar.TypeDir, Mode: 0o700, UID: 65532, GID: 65532, ModTime: mtime},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tar headers (-want +got):\n%s", diff)
	}
}

// The order entries are listed in does not change the layer: the images
// list entries in whatever order their builders collect them.
func TestLayerDigestDependsOnContentOnly(t *testing.T) {
	entries := []Entry{
		FileEntry("/etc/passwd", 0o644, []byte("root:x:0:0::/root:/sbin/nologin\n")),
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		SymlinkEntry("/lib", "usr/lib"),
	}
	reversed := []Entry{entries[2], entries[1], entries[0]}
	changed := append([]Entry{FileEntry("/etc/group", 0o644, []byte("root:x:0:\n"))}, entries...)
	digest := func(es []Entry) string {
		img := mustAssemble(t, Spec{Layers: []Layer{{CreatedBy: "test", Entries: es}}})
		return mustDigest(t, img).String()
	}
	if a, b := digest(entries), digest(reversed); a != b {
		t.Errorf("same entries in another order: digest %s, then %s", a, b)
	}
	if a, b := digest(entries), digest(changed); a == b {
		t.Errorf("a file more did not change the digest %s", a)
	}
}

func TestParseLdd(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []string
		err       string
	}{
		{
			name: "glibc",
			out: "\tlinux-vdso.so.1 (0x00007ffd)\n" +
				"\tlibpcre2-8.so.0 => /lib/x86_64-linux-gnu/libpcre2-8.so.0 (0x00007f44)\n" +
				"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f44)\n" +
				"\t/lib64/ld-linux-x86-64.so.2 (0x00007f44)\n",
			want: []string{"/lib/x86_64-linux-gnu/libpcre2-8.so.0", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"},
		},
		{name: "arm64 vdso", out: "\tlinux-vdso.so.1 (0x0000ffff)\n\tlibc.so.6 => /lib/aarch64-linux-gnu/libc.so.6 (0x0000ffff)\n\t/lib/ld-linux-aarch64.so.1 (0x0000ffff)\n",
			want: []string{"/lib/aarch64-linux-gnu/libc.so.6", "/lib/ld-linux-aarch64.so.1"}},
		{name: "missing library", out: "\tlibssl.so.3 => not found\n", err: "libssl.so.3 not found"},
		{name: "static", out: "\tstatically linked\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLdd(tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("libraries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRelativeTarget(t *testing.T) {
	for _, tc := range []struct{ link, target, want string }{
		{"/usr/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "../../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
		{"/lib", "usr/lib", "usr/lib"},
		{"/usr/lib/x86_64-linux-gnu/libz.so.1", "libz.so.1.2.13", "libz.so.1.2.13"},
		{"/var/run", "/run", "../run"},
	} {
		if got := relativeTarget(tc.link, tc.target); got != tc.want {
			t.Errorf("relativeTarget(%q, %q) = %q, want %q", tc.link, tc.target, got, tc.want)
		}
	}
}

// Copy reproduces a merged-/usr layout: a directory symlink, a versioned
// library behind a link, and an absolute link, which becomes relative.
func TestHostFilesCopyKeepsSymlinksAndTheirTargets(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "usr/lib/gnu"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "usr/lib64"), 0o755))
	must(os.WriteFile(filepath.Join(root, "usr/lib/gnu/libz.so.1.2"), []byte("libz"), 0o644))
	must(os.WriteFile(filepath.Join(root, "usr/lib/gnu/ld.so"), []byte("loader"), 0o755))
	must(os.Symlink("libz.so.1.2", filepath.Join(root, "usr/lib/gnu/libz.so.1")))
	must(os.Symlink("usr/lib", filepath.Join(root, "lib")))
	must(os.Symlink(filepath.Join(root, "lib/gnu/ld.so"), filepath.Join(root, "usr/lib64/ld.so")))

	h := newHostFiles()
	for _, p := range []string{"lib/gnu/libz.so.1", "usr/lib64/ld.so", "lib/gnu/libz.so.1"} {
		if _, err := h.Copy(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	var got []Entry
	for _, e := range h.Entries() {
		if rel, ok := strings.CutPrefix(e.Path, root+"/"); ok {
			e.Path = "/" + rel
			got = append(got, e)
		}
	}
	want := []Entry{
		SymlinkEntry("/lib", "usr/lib"),
		DirEntry("/usr", 0o755),
		DirEntry("/usr/lib", 0o755),
		DirEntry("/usr/lib/gnu", 0o755),
		SymlinkEntry("/usr/lib/gnu/libz.so.1", "libz.so.1.2"),
		FileEntry("/usr/lib/gnu/libz.so.1.2", 0o644, []byte("libz")),
		DirEntry("/usr/lib64", 0o755),
		SymlinkEntry("/usr/lib64/ld.so", "../../lib/gnu/ld.so"),
		FileEntry("/usr/lib/gnu/ld.so", 0o755, []byte("loader")),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("copied entries (-want +got):\n%s", diff)
	}
}
