// Package namespaced installs the config/namespaced overlay, as a user would
// with `kubectl create -k`, on a cluster of its own (its objects have the
// bundle's names), and runs the operator as the overlay's ServiceAccount with
// the overlay's namespace arguments: Roles in the watched namespaces and a
// small ClusterRole must be enough, and objects elsewhere are left alone.
package namespaced

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

func kubectl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	bin, err := framework.BinPath(framework.Kubectl)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig=" + env.Cluster(t).Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestNamespacedOverlayInstallsAndWatchesOnlyItsNamespaces(t *testing.T) {
	cluster := env.Cluster(t)
	ctx := context.Background()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := inprocess.Client(t, cluster.Config)
	// The overlay's namespaces must exist first; team-c is not watched.
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	kubectl(ctx, t, "create", "-k", filepath.Join(root, "config", "namespaced"))
	if err := framework.InstallCRDs(ctx, cluster.Config); err != nil { // waits until they are served
		t.Fatal(err)
	}

	// The operator as the Deployment would run it: the overlay's namespaces
	// and leader election (its Lease in the operator's namespace), managing
	// the conversion webhook's Secret there and the CRD's caBundle.
	var dep appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: "nginx-operator", Name: "nginx-operator"}, &dep); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--namespaces=") || a == "--leader-elect" {
			args = append(args, a)
		}
	}
	if len(args) != 2 {
		t.Fatalf("the overlay's Deployment args %v lack --namespaces= or --leader-elect", dep.Spec.Template.Spec.Containers[0].Args)
	}
	kc := cluster.ServiceAccountKubeconfig(ctx, t, "nginx-operator", "nginx-operator")
	op := framework.StartOperator(t, kc, append(args, "--leader-election-namespace=nginx-operator",
		"--conversion-webhook=true", "--namespace=nginx-operator", "--metrics-bind-address=0")...)

	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		web := &v1beta1.NginxOperator{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec:       v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}},
		}
		if err := c.Create(ctx, web); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
			var n v1beta1.NginxOperator
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &n) == nil &&
				meta.IsStatusConditionTrue(n.Status.Conditions, v1beta1.ConditionReconciled)
		}) {
			t.Fatalf("the instance in watched namespace %s was not reconciled", ns)
		}
	}
	// A window in which nothing may happen: time enough for a reconcile of
	// team-c, were it watched.
	time.Sleep(5 * time.Second)
	var ignored v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-c", Name: "web"}, &ignored); err != nil {
		t.Fatal(err)
	}
	if len(ignored.Status.Conditions) != 0 {
		t.Errorf("the instance in unwatched team-c has status %+v; want none", ignored.Status)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-c", Name: layout.NamesFor("web").StatefulSet}, &sts); err == nil {
		t.Error("a StatefulSet was created in unwatched team-c")
	}

	resp, err := http.Get("http://" + op.HealthAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d: an informer cannot sync with the namespaced RBAC", resp.StatusCode)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool { return op.LogContains("acquired lease") }) {
		t.Error("the operator did not acquire its Lease in nginx-operator")
	}
	if op.LogContains("forbidden") {
		t.Error("the operator's log shows a request the namespaced RBAC forbids")
	}
}
