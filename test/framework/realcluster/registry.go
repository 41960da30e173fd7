package realcluster

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/nginx-operator/nginx-operator/test/framework/node"
)

// StartRegistry serves an OCI registry (go-containerregistry's, in memory)
// on a free port of the host's end of n's link, until the test ends, and
// lets n's containerd pull from it over plain HTTP. The same host:port,
// which it returns, reaches it from the host (helm, hack/images) and from
// the node (the kubelet's pulls).
func StartRegistry(t testing.TB, n *node.Node) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(n.HostIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("registry: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	addr := l.Addr().String()
	if err := n.TrustPlainHTTPRegistry(addr); err != nil {
		t.Fatal(err)
	}
	return addr
}
