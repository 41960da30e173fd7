// Package e2e runs the operator binary against the full local cluster of
// test/framework: etcd, kube-apiserver with RBAC, controller-manager, scheduler
// and kwok nodes. The operator authenticates as a ServiceAccount bound to the
// shipped ClusterRole, so a missing permission fails these tests.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, framework.Options{Nodes: 3}, &cluster))
}

var (
	installOnce sync.Once
	installErr  error
)

// install applies the CRDs and the shipped ClusterRoles, once per test binary;
// every test that needs them calls it.
func install(t *testing.T) {
	t.Helper()
	installOnce.Do(func() { installErr = installManifests() })
	if installErr != nil {
		t.Fatal(installErr)
	}
}

func installManifests() error {
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := framework.InstallCRDs(ctx, cluster.Config); err != nil {
		return err
	}
	_, err = framework.ApplyFiles(ctx, cluster.Config, "",
		filepath.Join(root, "config", "rbac", "role.yaml"), filepath.Join(root, "config", "rbac", "metrics_reader_role.yaml"))
	return err
}

// kubectl runs the pinned kubectl as the admin and returns its combined output.
func kubectl(ctx context.Context, args ...string) (string, error) {
	return kubectlWithInput(ctx, "", args...)
}

// kubectlWithInput is kubectl with stdin, for `-f -`.
func kubectlWithInput(ctx context.Context, stdin string, args ...string) (string, error) {
	bin, err := framework.BinPath(framework.Kubectl)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig=" + cluster.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// newNamespace is framework.Namespace with the admin clientset.
func newNamespace(t *testing.T) (string, kubernetes.Interface) {
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	return framework.Namespace(t, cs), cs
}

// operatorKubeconfig returns a kubeconfig for a fresh ServiceAccount in ns that
// holds the shipped nginx-operator ClusterRole and nothing else.
func operatorKubeconfig(ctx context.Context, t *testing.T, ns string) string {
	t.Helper()
	kc := cluster.ServiceAccountKubeconfig(ctx, t, ns, "nginx-operator")
	cluster.BindClusterRole(ctx, t, "nginx-operator", ns, "nginx-operator")
	return kc
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, got)
		}
	}
}
