package tools

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const installVersitygw = "hack/install-versitygw.sh"

// The credentials of every versitygw the tests start.
const (
	VersitygwAccessKey = "test-access-key"
	VersitygwSecretKey = "test-secret-key-0123456789"
)

// StartVersitygw runs a real S3 server (versitygw, posix backend on a temp
// dir, a free loopback port) until the test ends, puts its credentials in the
// environment as the backup Job does, and returns its host:port. Missing, the
// test skips (fails when tools are required).
func StartVersitygw(t testing.TB) string {
	t.Helper()
	addr := StartVersitygwOn(t, "127.0.0.1")
	t.Setenv("AWS_ACCESS_KEY_ID", VersitygwAccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", VersitygwSecretKey)
	return addr
}

// StartVersitygwOn is StartVersitygw on a free port of the address ip (one
// that pods reach, say), without touching the environment.
func StartVersitygwOn(t testing.TB, ip string) string {
	t.Helper()
	bin := versitygwPath(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs strings.Builder
	cmd := exec.Command(bin, "--port", addr, "--access", VersitygwAccessKey, "--secret", VersitygwSecretKey, "--quiet", "posix", t.TempDir())
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
