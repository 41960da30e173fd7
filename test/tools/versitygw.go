package tools

import (
	"net"
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
	p := Start(t, "versitygw", bin, "--port", addr, "--access", VersitygwAccessKey, "--secret", VersitygwSecretKey, "--quiet", "posix", t.TempDir())
	Eventually(t, 15*time.Second, "versitygw listens on "+addr, func() error {
		if err := p.Exited(); err != nil {
			return &Stop{Err: err}
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
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
