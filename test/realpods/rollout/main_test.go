// Package rollout changes running NginxOperator instances on a local cluster
// whose node runs the pods for real (see test/framework/realcluster), under
// a steady client load through the instance's ClusterIP Service: new
// configurations and certificates are loaded in place by the pods'
// reloaders, pod template changes roll the pods, and neither fails a
// request; a configuration nginx refuses leaves the previous one serving
// with the instance Degraded.
package rollout

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

var env = framework.NewEnv(realcluster.FrameworkOptions(realcluster.Options{GoImages: []node.GoImage{realcluster.TestServer}}))

func TestMain(m *testing.M) {
	// The tests' controller-runtime clients log nothing worth reading
	// (and, without a logger, print a stack trace saying so).
	ctrllog.SetLogger(logr.Discard())
	os.Exit(env.Main(m))
}

// setup is realcluster.Setup for a test of at most 4 minutes, with the node.
func setup(t testing.TB) (context.Context, string, kubernetes.Interface, client.Client, *node.Node) {
	t.Helper()
	return setupFor(t, 4*time.Minute)
}

// setupFor is realcluster.Setup for a test of at most timeout, with the node.
func setupFor(t testing.TB, timeout time.Duration) (context.Context, string, kubernetes.Interface, client.Client, *node.Node) {
	t.Helper()
	ctx, c, ns, cs, cl := realcluster.Setup(t, env, timeout)
	return ctx, ns, cs, cl, realcluster.NodeOf(c)
}

// site creates the ConfigMap the instances serve: index.html says "hello".
func site(ctx context.Context, t testing.TB, cl client.Client, ns string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: ns}, Data: map[string]string{"index.html": "hello\n"}}
	if err := cl.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// webInstance serves the site ConfigMap on port 8080 with two replicas on
// the real node; its location's X-Version header tells configurations apart.
func webInstance(ns string) *v1beta1.NginxOperator {
	n := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](2),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Content:  v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: "site"}}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
				{Path: "/", Static: &v1beta1.StaticLocation{}, Headers: []v1beta1.Header{{Name: "X-Version", Value: "1"}}},
			}}}},
		},
	}
	n.Spec.Pod.NodeSelector = map[string]string{node.LabelKey: node.LabelValue}
	n.Spec.Pod.Tolerations = []corev1.Toleration{{Key: node.LabelKey, Operator: corev1.TolerationOpEqual, Value: node.LabelValue, Effect: corev1.TaintEffectNoSchedule}}
	return n
}

// rolledOut is true once the instance's status describes its current spec,
// every replica runs it and is ready, and nothing is degraded.
func rolledOut(ctx context.Context, cl client.Client, key client.ObjectKey, n *v1beta1.NginxOperator) bool {
	if err := cl.Get(ctx, key, n); err != nil || n.Status.ObservedGeneration != n.Generation {
		return false
	}
	for typ, want := range map[string]metav1.ConditionStatus{
		v1beta1.ConditionAvailable: metav1.ConditionTrue, v1beta1.ConditionProgressing: metav1.ConditionFalse,
		v1beta1.ConditionDegraded: metav1.ConditionFalse, v1beta1.ConditionReconciled: metav1.ConditionTrue,
	} {
		if !meta.IsStatusConditionPresentAndEqual(n.Status.Conditions, typ, want) {
			return false
		}
	}
	replicas := ptr.Deref(n.Spec.Replicas, 1)
	return n.Status.ReadyReplicas == replicas && n.Status.UpdatedReplicas == replicas
}

// waitRolledOut waits for rolledOut and returns the instance.
func waitRolledOut(ctx context.Context, t testing.TB, cl client.Client, key client.ObjectKey, timeout time.Duration) *v1beta1.NginxOperator {
	t.Helper()
	var n v1beta1.NginxOperator
	began := time.Now()
	if !framework.WaitFor(ctx, timeout, func(ctx context.Context) bool { return rolledOut(ctx, cl, key, &n) }) {
		t.Fatalf("%s not rolled out after %s: generation %d, status %+v", key, timeout, n.Generation, n.Status)
	}
	t.Logf("%s rolled out in %s (config %s)", key, time.Since(began).Round(100*time.Millisecond), n.Status.ConfigHash)
	return &n
}
