package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// exampleTLSSecrets are the certificates example/ leaves to the user.
var exampleTLSSecrets = map[string]string{"team-a": "gateway-tls", "team-b": "shop-tls"}

// Everything in example/ goes in as a user would apply it, and every object
// reaches its ready condition: NginxOperator Available, NginxMonitor and
// NginxBackup Ready. The v1alpha1 book sample needs the conversion webhook,
// which only one test may manage; TestBookUsersV1alpha1ObjectIsServedAndReadableAsV1beta1
// applies it.
func TestExamplesReachTheirReadyConditions(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	root, err := framework.RepoRoot()
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
	for ns, name := range exampleTLSSecrets {
		_, certPEM, keyPEM := newServingCert(t, name+"."+ns+".example")
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
		notReady = notReady[:0]
		for _, o := range objs {
			key := client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}
			var conds []metav1.Condition
			want := v1beta1.ConditionReady
			switch o.GetKind() {
			case "NginxOperator":
				var n v1beta1.NginxOperator
				if admin.Get(ctx, key, &n) == nil {
					conds = n.Status.Conditions
				}
				want = v1beta1.ConditionAvailable
			case "NginxMonitor":
				var m v1beta1.NginxMonitor
				if admin.Get(ctx, key, &m) == nil {
					conds = m.Status.Conditions
				}
			case "NginxBackup":
				var b v1beta1.NginxBackup
				if admin.Get(ctx, key, &b) == nil {
					conds = b.Status.Conditions
				}
			default:
				continue
			}
			if !meta.IsStatusConditionTrue(conds, want) {
				notReady = append(notReady, fmt.Sprintf("%s %s: %s is not True: %+v", o.GetKind(), key, want, meta.FindStatusCondition(conds, want)))
			}
		}
		return len(notReady) == 0
	})
	if !ready {
		t.Fatalf("example objects not ready after 3 minutes:\n%s", strings.Join(notReady, "\n"))
	}
	t.Logf("%d example objects applied; every NginxOperator is Available, every NginxMonitor and NginxBackup Ready", len(objs))
}
