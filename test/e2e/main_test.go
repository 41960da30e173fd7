// Package e2e runs the operator binary against the full local cluster of
// test/framework: etcd, kube-apiserver with RBAC, controller-manager, scheduler
// and kwok nodes. bundle.yaml is installed with `kubectl create` and the
// operator authenticates as the bundle's ServiceAccount, so a missing
// permission fails these tests; the apiserver's audit log of that account
// then shows that every permission the bundle grants was used
// (checkLeastPrivilege).
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// env is the full local cluster of these tests, started by the first test
// that needs it.
var env = framework.NewEnv(framework.Options{
	Nodes:      3,
	AuditUsers: []string{framework.ServiceAccountUser(operatorNamespace, operatorServiceAccount)},
	AfterTests: checkLeastPrivilege,
})

// cluster is env's cluster, set by install: tests that use it call install
// (or withOperator) first.
var cluster *framework.Cluster

// The bundle's ServiceAccount, which every operator of these tests runs as.
const (
	operatorNamespace      = "nginx-operator"
	operatorServiceAccount = "nginx-operator"
)

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

var (
	installOnce sync.Once
	installErr  error
)

// install creates bundle.yaml (CRDs, namespace, RBAC, the operator's
// Deployment, which kwok "runs" without a process) exactly as a user would,
// once per test binary, and sets cluster; every test that needs it calls it.
func install(t *testing.T) {
	t.Helper()
	c := env.Cluster(t)
	installOnce.Do(func() {
		cluster = c
		installErr = installBundle()
	})
	if installErr != nil {
		t.Fatal(installErr)
	}
}

func installBundle() error {
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := kubectl(ctx, "create", "-f", filepath.Join(root, "bundle.yaml")); err != nil {
		return fmt.Errorf("kubectl create -f bundle.yaml: %v\n%s", err, out)
	}
	// This cluster serves prometheus-operator's ServiceMonitor API, so
	// NginxMonitor's serviceMonitor.enabled does something.
	sm, err := framework.DecodeYAML([]byte(framework.ServiceMonitorCRD))
	if err != nil {
		return err
	}
	if err := framework.ApplyObjects(ctx, cluster.Config, "", sm...); err != nil {
		return err
	}
	// Gateway API's CRDs, before any operator starts: it runs the Gateway
	// controllers only where they are served.
	if err := framework.InstallGatewayAPICRDs(ctx, cluster.Config); err != nil {
		return err
	}
	// Applying the same CRDs again changes nothing; it waits until they are served.
	return framework.InstallCRDs(ctx, cluster.Config)
}

// kubectl runs the pinned kubectl as the admin and returns its combined output.
func kubectl(ctx context.Context, args ...string) (string, error) {
	return kubectlWithInput(ctx, "", args...)
}

// kubectlWithInput is kubectl with stdin, for `-f -`.
func kubectlWithInput(ctx context.Context, stdin string, args ...string) (string, error) {
	return cluster.Kubectl(ctx, stdin, args...)
}

// newNamespace is framework.Namespace with the admin clientset.
func newNamespace(t *testing.T) (string, kubernetes.Interface) {
	t.Helper()
	return env.Namespace(t)
}

// withOperator is how most tests start: the bundle installed, a namespace of
// the test's own, and an operator (as the bundle's ServiceAccount) watching
// only that namespace.
func withOperator(t *testing.T) (context.Context, string, kubernetes.Interface) {
	t.Helper()
	install(t)
	ctx := context.Background()
	ns, cs := newNamespace(t)
	framework.StartOperator(t, operatorKubeconfig(ctx, t), "--namespaces="+ns, "--metrics-bind-address=0")
	return ctx, ns, cs
}

// operatorKubeconfig authenticates as the bundle's ServiceAccount.
func operatorKubeconfig(ctx context.Context, t *testing.T) string {
	t.Helper()
	return cluster.ServiceAccountKubeconfig(ctx, t, operatorNamespace, operatorServiceAccount)
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, got)
		}
	}
}
