package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// shared holds what several tests build once: the operator binary takes a
// while to link, and the tests only read it.
var shared struct {
	operatorOnce sync.Once
	operatorBin  []byte
	operatorErr  error

	reloaderOnce sync.Once
	reloaderBin  []byte
	reloaderErr  error
}

const (
	testVersion  = "v9.8.7-test"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
)

// operatorBinaryForTest builds ./cmd/operator once, as `make images` does.
func operatorBinaryForTest(t *testing.T) []byte {
	t.Helper()
	tools.Integration(t, "the operator binary built (minutes on a cold cache)")
	shared.operatorOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			shared.operatorErr = err
			return
		}
		var out string
		if out, shared.operatorErr = goBuild(context.Background(), root, "./cmd/operator", operatorLDFlags(testVersion, testRevision), runtime.GOARCH); shared.operatorErr != nil {
			return
		}
		shared.operatorBin, shared.operatorErr = os.ReadFile(out)
	})
	if shared.operatorErr != nil {
		t.Fatalf("building the operator: %v", shared.operatorErr)
	}
	return shared.operatorBin
}

// reloaderBinaryForTest builds ./cmd/nginx-reloader once, as `make images` does.
func reloaderBinaryForTest(t *testing.T) []byte {
	t.Helper()
	shared.reloaderOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			shared.reloaderErr = err
			return
		}
		var out string
		if out, shared.reloaderErr = goBuild(context.Background(), root, reloaderPackage, reloaderLDFlags, runtime.GOARCH); shared.reloaderErr != nil {
			return
		}
		shared.reloaderBin, shared.reloaderErr = os.ReadFile(out)
	})
	if shared.reloaderErr != nil {
		t.Fatalf("building the reloader: %v", shared.reloaderErr)
	}
	return shared.reloaderBin
}

// operatorImageForTest is the operator image as `make images` builds it.
func operatorImageForTest(t *testing.T) v1.Image {
	t.Helper()
	spec, err := operatorSpec(operatorBinaryForTest(t), reloaderBinaryForTest(t), testVersion, testRevision)
	if err != nil {
		t.Fatal(err)
	}
	return mustAssemble(t, spec)
}

func mustAssemble(t *testing.T, spec Spec) v1.Image {
	t.Helper()
	created, err := creationTime()
	if err != nil {
		t.Fatal(err)
	}
	img, err := assemble(spec, hostPlatform(), created)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// requireHostFiles skips the test when a Debian package it assembles an
// image from is missing, or fails it when tools are required (CI, make
// test), as test/tools does for executables.
func requireHostFiles(t *testing.T, pkgByPath map[string]string) {
	t.Helper()
	tools.Integration(t, "files of Debian packages on the host")
	for p, pkg := range pkgByPath {
		if err := requireHostFile(p, pkg); err != nil {
			tools.Missing(t, err.Error())
		}
	}
}

func requireRoot(t *testing.T, why string) {
	t.Helper()
	tools.Integration(t, "root")
	if os.Geteuid() != 0 {
		tools.Missing(t, "needs root (chroot and changing users): "+why)
	}
}

func mustConfig(t *testing.T, img v1.Image) *v1.ConfigFile {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// node is one path of an image's flattened file tree, as a container sees it.
type node struct {
	Type     byte
	Mode     int64
	UID, GID int
	Target   string
	Data     []byte
}

// fileTree reads the image's flattened file system (later layers win), keyed
// by absolute path.
func fileTree(t *testing.T, img v1.Image) map[string]node {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tree := map[string]node{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tree
		}
		if err != nil {
			t.Fatal(err)
		}
		n := node{Type: hdr.Typeflag, Mode: hdr.Mode, UID: hdr.Uid, GID: hdr.Gid, Target: hdr.Linkname}
		if hdr.Typeflag == tar.TypeReg {
			if n.Data, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		tree["/"+strings.TrimSuffix(path.Clean(hdr.Name), "/")] = n
	}
}

// extract writes the image's flattened file system under dir, with modes
// and, when running as root, owners, as a container runtime would.
func extract(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	tree := fileTree(t, img)
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	// Parents first; modes are applied after the files are written, so a
	// read-only directory does not stop its own extraction.
	sort.Strings(paths)
	for _, p := range paths {
		n := tree[p]
		dst := filepath.Join(dir, filepath.FromSlash(p))
		var err error
		switch n.Type {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o700)
		case tar.TypeReg:
			err = os.WriteFile(dst, n.Data, 0o600)
		case tar.TypeSymlink:
			err = os.Symlink(n.Target, dst)
		default:
			err = fmt.Errorf("unexpected tar type %q", n.Type)
		}
		if err != nil {
			t.Fatalf("extracting %s: %v", p, err)
		}
	}
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		n := tree[p]
		if n.Type == tar.TypeSymlink {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if os.Geteuid() == 0 {
			if err := os.Lchown(dst, n.UID, n.GID); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dst, modeOf(n.Mode)); err != nil {
			t.Fatal(err)
		}
	}
}

func modeOf(tarMode int64) fs.FileMode {
	m := fs.FileMode(tarMode & 0o777)
	if tarMode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if tarMode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if tarMode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// resolveIn resolves p inside root as the kernel would after chroot(root):
// absolute symlink targets start again at root, and ".." never leaves it.
// It returns the path on this machine.
func resolveIn(root, p string) (string, error) {
	cur := "/"
	rest := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for links := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		next := path.Join(cur, part) // Join cleans "..", and "/.." is "/"
		host := filepath.Join(root, filepath.FromSlash(next))
		fi, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many symlinks", p)
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), rest...)
	}
	return filepath.Join(root, filepath.FromSlash(cur)), nil
}
