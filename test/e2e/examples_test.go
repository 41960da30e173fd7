package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Everything in example/ goes in as a user would apply it, and every object
// reaches its ready condition: NginxOperator Available, NginxMonitor and
// NginxBackup Ready. The v1alpha1 book sample needs the conversion webhook,
// which only one test may manage; TestBookUsersV1alpha1ObjectIsServedAndReadableAsV1beta1
// applies it.
func TestExamplesReachTheirReadyConditions(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "example", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	namespaces := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := framework.DecodeYAML(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range decoded {
			if o.GetAPIVersion() == "nginx.operator.dev/v1alpha1" {
				continue
			}
			if o.GetKind() == "Namespace" {
				namespaces[o.GetName()] = true
			}
			objs = append(objs, o)
		}
	}
	admin := inprocess.Client(t, cluster.Config)
	t.Cleanup(func() {
		for ns := range namespaces {
			_ = admin.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	})
	if err := framework.ApplyObjects(ctx, cluster.Config, "", objs...); err != nil {
		t.Fatal(err)
	}
	for ns, name := range framework.ExampleTLSSecrets {
		_, certPEM, keyPEM := framework.ServingCert(t, name+"."+ns+".example")
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}
		if err := admin.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	var watched []string
	for ns := range namespaces {
		watched = append(watched, ns)
	}
	framework.StartOperator(t, operatorKubeconfig(ctx, t), "--namespaces="+strings.Join(watched, ","), "--metrics-bind-address=0")

	var notReady []string
	ready := framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) bool {
		notReady = framework.NotReady(ctx, admin, objs)
		return len(notReady) == 0
	})
	if !ready {
		t.Fatalf("example objects not ready after 3 minutes:\n%s", strings.Join(notReady, "\n"))
	}
	t.Logf("%d example objects applied; every NginxOperator is Available, every NginxMonitor and NginxBackup Ready", len(objs))
}
