package conversion_test

import (
	"bytes"
	"os"
	"sync"
	"testing"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/logging"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// env is the local control plane of the integration tests, started by the
// first test that needs it.
var env = framework.NewEnv(framework.Options{})

// testLog collects everything the operator and the webhook log; a failing
// integration test prints its part of it.
var testLog syncBuffer

func TestMain(m *testing.M) {
	kit, err := logging.New(&testLog, "logfmt", "debug")
	if err != nil {
		panic(err)
	}
	logf.SetLogger(logging.ToLogr(kit, logging.Verbosity("debug")))
	os.Exit(env.Main(m))
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// Since is what was written after offset.
func (b *syncBuffer) Since(offset int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf.Bytes()[offset:])
}
