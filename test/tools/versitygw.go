package tools

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const installVersitygw = "hack/install-versitygw.sh"

// StartVersitygw runs a real S3 server (versitygw, posix backend on a temp
// dir, a free loopback port) until the test ends, puts its credentials in the
// environment as the backup Job does, and returns its host:port. Missing, the
// test skips (fails when tools are required).
func StartVersitygw(t testing.TB) string {
	t.Helper()
	bin := versitygwPath(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const access, secret = "test-access-key", "test-secret-key-0123456789"
	var logs strings.Builder
	cmd := exec.Command(bin, "--port", addr, "--access", access, "--secret", secret, "--quiet", "posix", t.TempDir())
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %v", addr, err)
		}
	}
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	return addr
}

// versitygwPath finds the pinned versitygw in the cache directory the
// installer prints, or on PATH.
func versitygwPath(t testing.TB) string {
	t.Helper()
	if root, err := repoRoot(); err == nil {
		if out, err := exec.Command(filepath.Join(root, installVersitygw), "--print-dir").Output(); err == nil {
			p := filepath.Join(strings.TrimSpace(string(out)), "versitygw")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return Require(t, "versitygw", installVersitygw)
}

// repoRoot is the directory of go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}
