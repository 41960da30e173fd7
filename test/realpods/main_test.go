// Package realpods runs bundle.yaml as a user would, on a local cluster whose
// node runs pods for real (kubelet, containerd, runc, CNI bridge, kube-proxy,
// CoreDNS; see test/framework/node and test/framework/realcluster): the
// operator's two replicas, the nginx pods it creates (hack/images's nginx
// image, user 101, read-only root file system) with their exporter
// sidecars, the backup agent's Jobs and restore init containers, reached
// through Services from the node and scraped by a real Prometheus on the
// host. What only real pods reveal (paths, permissions under a read-only
// root, probes, volume ownership, signals, the webhook's reachability
// through its Service) fails here:
//
//   - bundle_test.go: both replicas Ready, one leader Lease, the conversion
//     webhook converting the book's v1alpha1 example, which then serves on
//     Service port 80; deleting the leader's pod hands the Lease over at once.
//   - serving_test.go: static content from a ConfigMap, a proxy to another
//     Service, a redirect, TLS from a Secret, through the ClusterIP Service.
//   - monitoring_test.go: Prometheus, through the NginxMonitor's scrape
//     configuration, sees nginx_up 1 for every pod.
//   - clientchecks_test.go: every check of test/clientchecks (routing,
//     protocols, access control, logs, workers; the renderer's tests run
//     them on loopback too) as a client through the Service sees them, and
//     nginx on a pod's IPv6 address only where its Service is dual-stack.
//   - backup_test.go: persistent content backed up to a claim and restored
//     into a new instance.
//   - networkpolicy_test.go: in a namespace that denies ingress by default
//     (the node enforces NetworkPolicies), spec.networkPolicy admits a
//     client of another namespace and the operator's reads of the
//     reloaders; without it the instance becomes Available, its clients
//     are refused and its status names the pods that do not answer.
//   - rollout/ (a package of its own): configurations and certificates
//     loaded in place under load, refused configurations, rollouts and
//     upgrades that fail no request.
//
// Every test has a namespace of its own labelled
// pod-security.kubernetes.io/enforce=restricted. The package takes about a
// minute: one cluster, images built once (go run ./hack/images).
package realpods

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

var env = framework.NewEnv(realcluster.FrameworkOptions(realcluster.Options{
	GoImages: []node.GoImage{realcluster.TestServer},
}))

func TestMain(m *testing.M) {
	// The tests' controller-runtime clients log nothing worth reading.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(env.Main(m))
}

// setup is realcluster.Setup for a test of at most 3 minutes, on a
// cluster that serves Gateway API: its CRDs go in before the operator
// starts, which looks for them at start.
func setup(t testing.TB) (context.Context, *framework.Cluster, string, kubernetes.Interface, client.Client) {
	t.Helper()
	return setupFor(t, 3*time.Minute)
}

// setupFor is setup for a test of at most timeout.
func setupFor(t testing.TB, timeout time.Duration) (context.Context, *framework.Cluster, string, kubernetes.Interface, client.Client) {
	t.Helper()
	realcluster.Require(t)
	gatewayAPIOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		gatewayAPIErr = framework.InstallGatewayAPICRDs(ctx, env.Cluster(t).Config)
	})
	if gatewayAPIErr != nil {
		t.Fatalf("installing Gateway API's CRDs: %v", gatewayAPIErr)
	}
	return realcluster.Setup(t, env, timeout)
}

var (
	gatewayAPIOnce sync.Once
	gatewayAPIErr  error
)
