package agent

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// backend is one destination every behaviour test runs against.
type backend struct {
	name string
	new  func(t testing.TB) storage.Storage
}

var backends = []backend{
	{"local", func(t testing.TB) storage.Storage {
		st, err := storage.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"s3", startVersitygw},
}

// startVersitygw returns a storage on a fresh bucket of a real S3 server
// started for the test.
func startVersitygw(t testing.TB) storage.Storage {
	t.Helper()
	addr := tools.StartVersitygw(t)
	st, err := storage.NewS3(storage.S3Config{Endpoint: addr, Bucket: "backups", Region: "us-east-1", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureBucket(context.Background(), "us-east-1"); err != nil {
		t.Fatalf("create bucket: %v", err)
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
