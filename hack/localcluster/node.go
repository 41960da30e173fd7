package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// Files the node command writes into its directory for hack/run.sh.
const (
	// readyFile appears once the cluster and its node run.
	readyFile = "ready"
	// operatorArgsFile holds the operator's image flags, one per line: the
	// images the node imported.
	operatorArgsFile = "operator-args"
)

// nodeMissing says why a real node cannot run here, or nil.
func nodeMissing() error {
	if err := realcluster.NewRealNode(realcluster.Options{}).Missing(); err != nil {
		return err
	}
	for _, bin := range []string{framework.Etcd, framework.KubeAPIServer, framework.KubeControllerManager, framework.KubeScheduler} {
		if _, err := framework.BinPath(bin); err != nil {
			return err
		}
	}
	return nil
}

// runNode runs a control plane with one real node (no kwok nodes) in the
// foreground, builds and imports the project's images, forwards listen to
// the Service forward (namespace/name:port) through the node, and stops it
// all on SIGINT or SIGTERM. A real node cannot outlive its process, so this
// is not `up`: hack/run.sh keeps it running beside the operator.
func runNode(dir, listen, forward string) error {
	if err := nodeMissing(); err != nil {
		return fmt.Errorf("no real node: %w", err)
	}
	target, err := parseForward(forward)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(abs); err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	startCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	imgs, err := realcluster.BuildImages(startCtx)
	if err != nil {
		return err
	}
	c, err := framework.Start(startCtx, realcluster.FrameworkOptions(realcluster.Options{Framework: framework.Options{Dir: abs}}))
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, abs)
	}
	defer c.Stop()
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	defer l.Close()
	go forwardConnections(ctx, l, cs, target, realcluster.NodeOf(c).DialContext)

	if err := os.WriteFile(filepath.Join(abs, operatorArgsFile), []byte(strings.Join(realcluster.ImageArgs(imgs), "\n")+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(abs, readyFile), nil, 0o600); err != nil {
		return err
	}
	fmt.Printf("local cluster with a real node up: %s\n  export KUBECONFIG=%s\n  %s forwards to Service %s through the node\n  logs: %s/*.log\n",
		c.Host, c.Kubeconfig, listen, forward, abs)
	<-ctx.Done()
	fmt.Println("stopping the local cluster and its node")
	return nil
}

// serviceTarget is a Service port to forward to.
type serviceTarget struct {
	namespace, name string
	port            int32
}

func parseForward(s string) (serviceTarget, error) {
	ns, rest, ok1 := strings.Cut(s, "/")
	name, port, ok2 := strings.Cut(rest, ":")
	p, err := strconv.Atoi(port)
	if !ok1 || !ok2 || ns == "" || name == "" || err != nil || p < 1 || p > 65535 {
		return serviceTarget{}, fmt.Errorf("-forward %q: want namespace/service:port", s)
	}
	return serviceTarget{namespace: ns, name: name, port: int32(p)}, nil
}

// forwardConnections copies each connection of l to the Service's cluster
// IP, dialled inside the node, where kube-proxy's rules live. The Service is
// looked up per connection: it may not exist yet when the cluster starts.
func forwardConnections(ctx context.Context, l net.Listener, cs kubernetes.Interface, target serviceTarget, dial func(context.Context, string, string) (net.Conn, error)) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			svc, err := cs.CoreV1().Services(target.namespace).Get(ctx, target.name, metav1.GetOptions{})
			if err != nil {
				fmt.Fprintf(os.Stderr, "forward: %v\n", err)
				return
			}
			upstream, err := dial(ctx, "tcp", net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(target.port))))
			if err != nil {
				fmt.Fprintf(os.Stderr, "forward: %v\n", err)
				return
			}
			defer upstream.Close()
			var wg sync.WaitGroup
			copyHalf := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				if tc, ok := dst.(interface{ CloseWrite() error }); ok {
					_ = tc.CloseWrite()
				}
			}
			wg.Add(2)
			go copyHalf(upstream, conn)
			go copyHalf(conn, upstream)
			wg.Wait()
		}()
	}
}
