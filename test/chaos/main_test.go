package chaos

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// The bundle's ServiceAccount, which every operator of these tests runs as.
const (
	operatorNamespace      = "nginx-operator"
	operatorServiceAccount = "nginx-operator"
)

// operatorUser is the name the operator authenticates as; the apiserver
// audits its requests, which is how the idle request rate is measured.
var operatorUser = framework.ServiceAccountUser(operatorNamespace, operatorServiceAccount)

// env is this package's own cluster: the tests restart its apiserver and
// etcd, so they share it with no other package. Four fake nodes (110 pods
// each) hold one pod per instance of the largest test.
var env = framework.NewEnv(framework.Options{
	Nodes:      4,
	AuditUsers: []string{operatorUser},
})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

var (
	installOnce sync.Once
	installErr  error
)

// install applies bundle.yaml (CRDs, namespace, RBAC, the operator's
// Deployment, which kwok runs without a process) once per test binary, as
// test/e2e does, and returns the cluster.
func install(t *testing.T) *framework.Cluster {
	t.Helper()
	c := env.Cluster(t)
	installOnce.Do(func() {
		root, err := tools.RepoRoot()
		if err != nil {
			installErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		objs, err := framework.ApplyFiles(ctx, c.Config, "", filepath.Join(root, "bundle.yaml"))
		if err != nil {
			installErr = err
			return
		}
		// Wait for the bundle's own CRDs, not framework.InstallCRDs:
		// applying config/crd/bases as the same field manager would drop
		// the bundle's spec.conversion, leaving strategy None, under which
		// v1alpha1 works with no webhook at all until an operator leads.
		var crds []string
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, o.GetName())
			}
		}
		installErr = framework.WaitEstablished(ctx, c.Config, crds...)
	})
	if installErr != nil {
		t.Fatal(installErr)
	}
	return c
}
