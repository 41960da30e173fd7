package framework

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// InstallCertManager builds cert-manager's controllers (hack/certmanager)
// and names the directory of cert-manager's CRDs in its module.
const InstallCertManager = "hack/install-cert-manager.sh"

// CertManagerCRDFiles are cert-manager's CRDs at the version
// hack/certmanager requires, read from its module, not copied here.
func CertManagerCRDFiles() ([]string, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command("bash", filepath.Join(root, InstallCertManager), "--print-crd-dir").Output()
	if err != nil {
		return nil, fmt.Errorf("bash %s --print-crd-dir: %w", InstallCertManager, err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no cert-manager CRDs in %s (%v)", strings.TrimSpace(string(out)), err)
	}
	return files, nil
}

// RunCertManager installs cert-manager's CRDs in c and runs its controllers
// there (see hack/certmanager) until the test ends; with gatewayAPI, its
// gateway-shim too (Gateway API's CRDs must be installed first).
func RunCertManager(t testing.TB, c *Cluster, gatewayAPI bool) *tools.Process {
	t.Helper()
	bin := tools.Installed(t, InstallCertManager, "controller")
	files, err := CertManagerCRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := installCRDFiles(context.Background(), rest.CopyConfig(c.Config), files); err != nil {
		t.Fatal(err)
	}
	args := []string{"-kubeconfig", c.Kubeconfig, "-cluster-resource-namespace", "cert-manager"}
	if gatewayAPI {
		args = append(args, "-enable-gateway-api")
	}
	return tools.Start(t, "cert-manager", bin, args...)
}

// RenewCertificate asks cert-manager to issue the Certificate name again
// now, as cmctl renew does: with its Issuing condition.
func RenewCertificate(ctx context.Context, t testing.TB, c client.Client, namespace, name string) {
	t.Helper()
	patch := []byte(`{"status":{"conditions":[{"type":"Issuing","status":"True","reason":"ManuallyTriggered","message":"renewed by the test",` +
		`"lastTransitionTime":"` + time.Now().UTC().Format(time.RFC3339) + `"}]}}`)
	cert := &unstructured.Unstructured{}
	cert.SetAPIVersion("cert-manager.io/v1")
	cert.SetKind("Certificate")
	cert.SetNamespace(namespace)
	cert.SetName(name)
	if err := c.Status().Patch(ctx, cert, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
