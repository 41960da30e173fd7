// Command localcluster starts and stops the local Kubernetes cluster of
// test/framework outside of tests, for `make cluster-up`, `make cluster-down`
// and `make run`:
//
//	go run ./hack/localcluster up   -dir .cache/cluster [-nodes 3]
//	go run ./hack/localcluster down -dir .cache/cluster
//	go run ./hack/localcluster node -dir .cache/node-cluster -listen 127.0.0.1:8880 \
//	    -forward team-a/www:80,127.0.0.1:8881=team-a/web-gateway:80
//	go run ./hack/localcluster gateway-crds
//
// `up` returns once the cluster serves and its nodes are Ready, leaving the
// processes running; the admin kubeconfig is <dir>/kubeconfig. `node` runs a
// cluster with a real node in the foreground (see runNode). `gateway-crds`
// installs Gateway API's CRDs into $KUBECONFIG's cluster unless it has some
// already (see installGatewayCRDs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: localcluster up|down -dir DIR [-nodes N] | node -dir DIR -listen ADDR -forward [ADDR=]NS/SERVICE:PORT[,...] | node-check | gateway-crds")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".cache/cluster", "directory for the cluster's state, logs and kubeconfig")
	nodes := fs.Int("nodes", 3, "number of fake kwok nodes")
	listen := fs.String("listen", "127.0.0.1:8880", "node: the host address of the -forward item without LISTEN=")
	forward := fs.String("forward", "team-a/www:80", "node: comma-separated [LISTEN=]NAMESPACE/SERVICE:PORT: the host address LISTEN (-listen when left out) forwards to that Service port")
	_ = fs.Parse(os.Args[2:])

	var err error
	switch os.Args[1] {
	case "up":
		err = up(*dir, *nodes)
	case "down":
		err = down(*dir)
	case "node":
		err = runNode(*dir, *listen, *forward)
	case "node-check":
		// Exit status 0 when a real node can run here; otherwise why not.
		if err = nodeMissing(); err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
	case "gateway-crds":
		err = installGatewayCRDs()
	default:
		err = fmt.Errorf("unknown command %q: use up, down, node, node-check or gateway-crds", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func up(dir string, nodes int) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(abs, "pids")); err == nil {
		return fmt.Errorf("a cluster already runs from %s: run `make cluster-down` first", abs)
	}
	if err := os.RemoveAll(abs); err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := framework.Start(ctx, framework.Options{Dir: abs, Nodes: nodes, Detached: true})
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, abs)
	}
	fmt.Printf("local cluster up: %s, %d kwok nodes\n  export KUBECONFIG=%s\n  logs: %s/*.log\n", c.Host, nodes, c.Kubeconfig, abs)
	return nil
}

func down(dir string) error {
	if err := framework.StopDetached(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Println("local cluster down")
	return nil
}
