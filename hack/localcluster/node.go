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
// foreground, builds and imports the project's images, forwards host
// addresses to Services through the node (forwards: see parseForwards), and
// stops it all on SIGINT or SIGTERM. A real node cannot outlive its process,
// so this is not `up`: hack/run.sh keeps it running beside the operator.
func runNode(dir, listen, forwards string) error {
	if err := nodeMissing(); err != nil {
		return fmt.Errorf("no real node: %w", err)
	}
	pairs, err := parseForwards(listen, forwards)
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

	// Every address is taken before the minutes of building and starting,
	// so a port in use fails the run at once rather than at the end.
	listeners, err := listenAll(pairs)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	if err != nil {
		return err
	}

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
	for i, p := range pairs {
		go forwardConnections(ctx, listeners[i], cs, p.target, realcluster.NodeOf(c).DialContext)
	}

	if err := os.WriteFile(filepath.Join(abs, operatorArgsFile), []byte(strings.Join(realcluster.ImageArgs(imgs), "\n")+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(abs, readyFile), nil, 0o600); err != nil {
		return err
	}
	fmt.Printf("local cluster with a real node up: %s\n  export KUBECONFIG=%s\n", c.Host, c.Kubeconfig)
	for _, p := range pairs {
		fmt.Printf("  %s forwards to Service %s through the node\n", p.listen, p.target)
	}
	fmt.Printf("  logs: %s/*.log\n", abs)
	<-ctx.Done()
	fmt.Println("stopping the local cluster and its node")
	return nil
}

// listenAll listens on the address of each of pairs; on an error it
// returns the listeners it opened, for the caller to close.
func listenAll(pairs []forwardPair) ([]net.Listener, error) {
	listeners := make([]net.Listener, 0, len(pairs))
	for _, p := range pairs {
		l, err := net.Listen("tcp", p.listen)
		if err != nil {
			return listeners, err
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// serviceTarget is a Service port to forward to.
type serviceTarget struct {
	namespace, name string
	port            int32
}

func (t serviceTarget) String() string {
	return fmt.Sprintf("%s/%s:%d", t.namespace, t.name, t.port)
}

// forwardPair is a host address and the Service port its connections go to.
type forwardPair struct {
	listen string
	target serviceTarget
}

// parseForwards reads -forward: a comma-separated list of
// [LISTEN=]NAMESPACE/SERVICE:PORT. An item without LISTEN listens on
// defaultListen (-listen), which is what `-listen A -forward ns/svc:80`
// meant before several pairs were possible; at most one item may do so.
func parseForwards(defaultListen, s string) ([]forwardPair, error) {
	var pairs []forwardPair
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		listen, target, ok := strings.Cut(item, "=")
		if !ok {
			listen, target = defaultListen, item
		}
		host, port, err := net.SplitHostPort(listen)
		if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("-forward %q: listen address %q: want host:port", item, listen)
		}
		// One address cannot serve two Services; the same port on another
		// host address can, so compare the whole address.
		key := net.JoinHostPort(host, port)
		if seen[key] {
			return nil, fmt.Errorf("-forward %q: %s is already forwarded (an item without LISTEN= uses -listen)", item, key)
		}
		seen[key] = true
		t, err := parseForward(target)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, forwardPair{listen: listen, target: t})
	}
	return pairs, nil
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
