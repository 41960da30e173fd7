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

// cluster is the local control plane of the integration tests; nil when its
// binaries are missing, in which case the unit tests still run.
var (
	cluster     *framework.Cluster
	clusterSkip string
)

// testLog collects everything the operator and the webhook log; a failing
// integration test prints its part of it.
var testLog syncBuffer

func TestMain(m *testing.M) {
	kit, err := logging.New(&testLog, "logfmt", "debug")
	if err != nil {
		panic(err)
	}
	logf.SetLogger(logging.ToLogr(kit, logging.Verbosity("debug")))

	// Unlike framework.RunMain alone, missing binaries do not skip the unit
	// tests of this package, which need no cluster.
	for _, bin := range []string{framework.Etcd, framework.KubeAPIServer} {
		if _, err := framework.BinPath(bin); err != nil && !framework.ToolsRequired() {
			clusterSkip = err.Error() + " (set CI or NGINX_OPERATOR_REQUIRE_TOOLS to fail instead)"
			os.Exit(m.Run())
		}
	}
	os.Exit(framework.RunMain(m, framework.Options{}, &cluster))
}

func needCluster(t *testing.T) {
	t.Helper()
	if cluster == nil {
		t.Skip("no local control plane: " + clusterSkip)
	}
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
