package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// hostFiles collects entries that reproduce paths of the build machine in an
// image: the test images are assembled from Debian packages installed here,
// and every image takes the machine's CA certificates and time zones.
//
// Paths are copied component by component. A symlink on the way (Debian's
// merged /usr makes /lib a link to usr/lib, and libraries are links to
// versioned files) becomes a symlink in the image and its target is copied
// too, so the image has the same layout as the machine. Absolute link
// targets are rewritten as relative ones: inside the container they resolve
// to the same file, and a tree extracted anywhere (the tests run it without
// chroot) resolves inside itself instead of on the build machine.
type hostFiles struct {
	entries []Entry
	seen    map[string]bool
}

func newHostFiles() *hostFiles { return &hostFiles{seen: map[string]bool{}} }

// Entries are the collected entries, in the order they were copied.
func (h *hostFiles) Entries() []Entry { return h.entries }

func (h *hostFiles) add(e Entry) {
	if !h.seen[e.Path] {
		h.seen[e.Path] = true
		h.entries = append(h.entries, e)
	}
}

// maxLinks bounds symlink resolution, as the kernel's ELOOP does.
const maxLinks = 40

// Copy copies the host path p (a file, or a directory without its content)
// and every symlink leading to it; it returns the path's resolved form.
func (h *hostFiles) Copy(p string) (string, error) {
	return h.copyPath(p, 0)
}

func (h *hostFiles) copyPath(p string, links int) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: not an absolute path", p)
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	cur := "/"
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := path.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if links >= maxLinks {
				return "", fmt.Errorf("%s: too many levels of symbolic links", p)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			h.add(SymlinkEntry(next, relativeTarget(next, target)))
			abs := target
			if !path.IsAbs(target) {
				abs = path.Join(cur, target)
			}
			// cur holds no symlink, so joining the rest of the path to the
			// target resolves it as the kernel would.
			return h.copyPath(path.Join(append([]string{abs}, parts[i+1:]...)...), links+1)
		case fi.IsDir():
			h.add(DirEntry(next, fi.Mode()&(fs.ModePerm|fs.ModeSticky)))
		case fi.Mode().IsRegular() && last:
			data, err := os.ReadFile(next)
			if err != nil {
				return "", err
			}
			h.add(FileEntry(next, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid), data))
		default:
			return "", fmt.Errorf("%s: %s is a %v, which images here do not hold", p, next, fi.Mode().Type())
		}
		cur = next
	}
	return cur, nil
}

// relativeTarget is target as seen from the symlink at link, relative when
// target is absolute. link's directory must hold no symlink, which Copy
// guarantees by resolving the path from the root.
func relativeTarget(link, target string) string {
	if !path.IsAbs(target) {
		return target
	}
	rel, err := filepath.Rel(path.Dir(link), target)
	if err != nil {
		return target
	}
	return rel
}

// CopyTree copies the directory root and everything below it. Symlinks
// inside the tree are kept as they are (zoneinfo's aliases point at their
// neighbours).
func (h *hostFiles) CopyTree(root string) error {
	resolved, err := h.Copy(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(resolved, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == resolved {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.add(SymlinkEntry(p, relativeTarget(p, target)))
		case d.IsDir():
			h.add(DirEntry(p, fi.Mode()&(fs.ModePerm|fs.ModeSticky)))
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.add(FileEntry(p, fi.Mode().Perm(), data))
		default:
			return fmt.Errorf("%s: a %v, which images here do not hold", p, d.Type())
		}
		return nil
	})
}

// CopyLibraries copies the dynamic loader and every shared library the
// host binary loads, with the symlinks leading to them. A static binary
// needs none.
func (h *hostFiles) CopyLibraries(binary string) error {
	libs, err := sharedLibraries(binary)
	if err != nil {
		return err
	}
	for _, lib := range libs {
		if _, err := h.Copy(lib); err != nil {
			return fmt.Errorf("library of %s: %w", binary, err)
		}
	}
	return nil
}

// sharedLibraries lists what ldd says binary loads: the dynamic loader and
// the transitive closure of its libraries, as the loader resolves them on
// this machine. The ELF header is read first: ldd's answer for a static
// binary differs between C libraries and is an error for glibc's.
func sharedLibraries(binary string) ([]string, error) {
	dynamic, err := isDynamic(binary)
	if err != nil || !dynamic {
		return nil, err
	}
	out, err := exec.Command("ldd", binary).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("ldd %s: %v: %s", binary, err, exit.Stderr)
		}
		return nil, fmt.Errorf("ldd %s: %w (install the libc-bin package)", binary, err)
	}
	return parseLdd(string(out))
}

// isDynamic reports whether binary names a dynamic loader (PT_INTERP).
func isDynamic(binary string) (bool, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true, nil
		}
	}
	return false, nil
}

// parseLdd reads ldd's output: "name => /path (0x...)" for a library found,
// "/path (0x...)" for the loader, "name (0x...)" for the kernel's vDSO, which
// is no file; "name => not found" is an error, since the image could not run.
func parseLdd(out string) ([]string, error) {
	var libs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		name, target, found := strings.Cut(line, "=>")
		if found {
			target = strings.TrimSpace(target)
			if strings.HasPrefix(target, "not found") {
				return nil, fmt.Errorf("ldd: %s not found", strings.TrimSpace(name))
			}
		} else {
			target = line
		}
		p, _, _ := strings.Cut(target, " (")
		p = strings.TrimSpace(p)
		if !path.IsAbs(p) {
			continue // the vDSO, or a library without a path
		}
		libs = append(libs, p)
	}
	return libs, sc.Err()
}

// debianVersion is the installed version of a Debian package, recorded in
// the test images' labels so it is visible which nginx they hold.
func debianVersion(pkg string) (string, error) {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-query %s: %w (is the package installed? `apt-get install -y %s`)", pkg, err, pkg)
	}
	return strings.TrimSpace(string(out)), nil
}

// requireHostFile returns an error saying how to install the Debian package
// that holds p when p is missing.
func requireHostFile(p, pkg string) error {
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%s is missing: install it with `apt-get install -y %s`", p, pkg)
	}
	return nil
}
