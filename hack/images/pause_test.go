package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func pauseImageForTest(t *testing.T) v1.Image {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The command's own builder: it builds ./hack/images/pause as -only pause does.
	b := &builder{root: root}
	spec, err := findImage("pause").build(context.Background(), b, hostPlatform())
	if err != nil {
		t.Fatal(err)
	}
	return mustAssemble(t, spec)
}

// TestPauseImageWaitsForTermination: the sandbox image holds one static
// binary that runs as 65535 until the kubelet's SIGTERM, then exits 0.
func TestPauseImageWaitsForTermination(t *testing.T) {
	img := pauseImageForTest(t)
	cfg := mustConfig(t, img).Config
	if diff := cmp.Diff(v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"}, v1.Config{Entrypoint: cfg.Entrypoint, User: cfg.User}); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}
	root := t.TempDir()
	extract(t, img, root)
	if diff := cmp.Diff([]string{"/pause"}, keys(fileTree(t, img))); diff != "" {
		t.Errorf("file tree (-want +got):\n%s", diff)
	}
	bin := filepath.Join(root, "pause")
	if interp := interpreter(t, bin); interp != "" {
		t.Fatalf("/pause is dynamically linked (%s): the image has no C library", interp)
	}

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				t.Fatalf("pause exited before any signal: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("pause after %v: %v, want exit status 0", sig, err)
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("pause ignored %v", sig)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
