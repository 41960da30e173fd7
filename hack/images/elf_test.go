package main

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// multiarch is Debian's directory name for the build machine's libraries.
func multiarch(t *testing.T) string {
	t.Helper()
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64-linux-gnu"
	case "arm64":
		return "aarch64-linux-gnu"
	}
	tools.Missing(t, fmt.Sprintf("no Debian multiarch directory known for GOARCH=%s: add it to multiarch", runtime.GOARCH))
	return ""
}

// interpreter is the dynamic loader an ELF binary names (PT_INTERP), or ""
// for a static binary.
func interpreter(t *testing.T, binary string) string {
	t.Helper()
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

// missingLibraries checks, from the ELF headers and independently of the
// ldd run that assembled the image, that binary (a path in the image
// extracted at root) finds its loader and, transitively, every library it
// needs in the loader's default directories of the image.
func missingLibraries(t *testing.T, root, binary string) []string {
	t.Helper()
	arch := multiarch(t)
	dirs := []string{"/lib/" + arch, "/usr/lib/" + arch, "/lib", "/usr/lib"}
	var missing []string
	seen := map[string]bool{}
	queue := []string{binary}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		host, err := resolveIn(root, p)
		if err != nil {
			missing = append(missing, p)
			continue
		}
		if interp := interpreter(t, host); interp != "" && !seen[interp] {
			seen[interp] = true
			if _, err := resolveIn(root, interp); err != nil {
				missing = append(missing, interp+" (loader of "+p+")")
			}
		}
		f, err := elf.Open(host)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		needed, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, lib := range needed {
			if seen[lib] {
				continue
			}
			seen[lib] = true
			found := ""
			for _, d := range dirs {
				if _, err := resolveIn(root, d+"/"+lib); err == nil {
					found = d + "/" + lib
					break
				}
			}
			if found == "" {
				missing = append(missing, lib+" (needed by "+p+")")
				continue
			}
			queue = append(queue, found)
		}
	}
	return missing
}

// checkLddDependencies checks that every file ldd lists for the build
// machine's binary is in the image at the same path with the same content.
func checkLddDependencies(t *testing.T, root, hostBinary string) {
	t.Helper()
	libs, err := sharedLibraries(hostBinary)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) == 0 {
		t.Fatalf("ldd lists nothing for %s", hostBinary)
	}
	for _, lib := range libs {
		inImage, err := resolveIn(root, lib)
		if err != nil {
			t.Errorf("%s (ldd %s): %v", lib, hostBinary, err)
			continue
		}
		want, err := os.ReadFile(lib)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(inImage)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: the image's copy differs from the build machine's (%v)", lib, err)
		}
	}
}

// imageLoaderCommand runs binary (a path in the image extracted at root)
// through the image's own dynamic loader with the image's library
// directories, without chroot: how a test that is not root runs an image's
// dynamically linked program. LD_DEBUG=libs makes the loader print every
// library it initialises, which loadedOutside checks.
func imageLoaderCommand(t *testing.T, root, binary string, args ...string) *exec.Cmd {
	t.Helper()
	arch := multiarch(t)
	interp := interpreter(t, filepath.Join(root, binary))
	if interp == "" {
		t.Fatalf("%s is not dynamically linked", binary)
	}
	// The image's symlinks are relative, so following them on this machine
	// stays inside the extracted tree.
	loader, err := filepath.EvalSymlinks(filepath.Join(root, interp))
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(root, loader); err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("the image's loader %s resolves outside the image, to %s", interp, loader)
	}
	libPath := filepath.Join(root, "lib", arch) + ":" + filepath.Join(root, "usr/lib", arch)
	cmd := exec.Command(loader, append([]string{"--library-path", libPath, filepath.Join(root, binary)}, args...)...)
	cmd.Env = append(os.Environ(), "LD_DEBUG=libs")
	return cmd
}

// loadedOutside lists the libraries that LD_DEBUG=libs output says were
// initialised from outside root; it fails the test when there are none at
// all, which would mean the output was not the loader's.
func loadedOutside(t *testing.T, root, ldDebug string) []string {
	t.Helper()
	var loaded, outside []string
	sc := bufio.NewScanner(strings.NewReader(ldDebug))
	for sc.Scan() {
		_, lib, ok := strings.Cut(sc.Text(), "calling init: ")
		if !ok {
			continue
		}
		lib = strings.TrimSpace(lib)
		loaded = append(loaded, lib)
		if rel, err := filepath.Rel(root, lib); err != nil || strings.HasPrefix(rel, "..") {
			outside = append(outside, lib)
		}
	}
	if len(loaded) == 0 {
		t.Fatalf("no library initialised according to LD_DEBUG:\n%s", ldDebug)
	}
	return outside
}

func lookPathIn(root string, env []string, name string) (string, error) {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			for _, dir := range filepath.SplitList(v) {
				p := dir + "/" + name
				if host, err := resolveIn(root, p); err == nil {
					if fi, err := os.Stat(host); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
						return p, nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("%s not found in the image's PATH (env %q)", name, env)
}
