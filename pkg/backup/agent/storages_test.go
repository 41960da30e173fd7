package agent

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// backend is one destination every behaviour test runs against.
type backend struct {
	name string
	new  func(t *testing.T) storage.Storage
}

var backends = []backend{
	{"local", func(t *testing.T) storage.Storage {
		st, err := storage.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"s3", startVersitygw},
}

const installVersitygw = "hack/install-versitygw.sh"

// versitygwPath finds the pinned versitygw in the cache directory the
// installer prints, or on PATH; missing, the test skips (fails in CI).
func versitygwPath(t *testing.T) string {
	t.Helper()
	script := filepath.Join("..", "..", "..", installVersitygw)
	if out, err := exec.Command(script, "--print-dir").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return tools.Require(t, "versitygw", installVersitygw)
}

// startVersitygw runs a real S3 server (posix backend on a temp dir, a free
// loopback port) for the test, and returns a storage on a fresh bucket.
func startVersitygw(t *testing.T) storage.Storage {
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
	cmd := exec.Command(bin, "--port", addr, "--access", access, "--secret", secret, "--quiet",
		"posix", t.TempDir())
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %v\n%s", addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	st, err := storage.NewS3(storage.S3Config{Endpoint: addr, Bucket: "backups", Region: "us-east-1", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureBucket(context.Background(), "us-east-1"); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, logs.String())
	}
	return st
}

// forEachBackend runs f as a subtest per destination.
func forEachBackend(t *testing.T, f func(t *testing.T, st storage.Storage)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.new(t)) })
	}
}

// flipByte rewrites the object at key with one byte inverted, through the
// storage API (so it works the same on every backend).
func flipByte(t *testing.T, st storage.Storage, key string) {
	t.Helper()
	ctx := context.Background()
	rc, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if _, err := st.Put(ctx, key, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}
