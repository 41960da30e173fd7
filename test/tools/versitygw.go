package tools

import (
	"net"
	"os/exec"
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

// versitygwPath finds the pinned versitygw in the installer's cache
// directory, or on PATH.
func versitygwPath(t testing.TB) string {
	t.Helper()
	if p, ok := installed(installVersitygw, "versitygw"); ok {
		return p
	}
	return Require(t, "versitygw", "bash "+installVersitygw)
}
