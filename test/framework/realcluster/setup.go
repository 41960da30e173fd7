package realcluster

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// Setup is how every real-pod test starts, as inprocess.Setup is for the
// in-process tier: env's cluster with bundle.yaml installed and the
// operator available, a context that ends after timeout, a restricted
// namespace of the test's own, and an admin clientset and controller-runtime
// client (the operator's kinds and CRDs). The cluster's node is NodeOf(c).
// A failed test logs what its namespace and the operator's hold.
func Setup(t testing.TB, env *framework.Env, timeout time.Duration) (ctx context.Context, c *framework.Cluster, ns string, cs kubernetes.Interface, cl client.Client) {
	t.Helper()
	Require(t)
	c = env.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	InstallBundle(ctx, t, c)
	cs, cl = Clients(t, c)
	ns = RestrictedNamespace(t, cs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s\n%s", Describe(ctx, cs, ns), Describe(ctx, cs, OperatorNamespace))
		}
	})
	return ctx, c, ns, cs, cl
}

// Clients are an admin clientset and controller-runtime client (the
// operator's kinds, CRDs and Gateway API's kinds) of c.
func Clients(t testing.TB, c *framework.Cluster) (kubernetes.Interface, client.Client) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	// The operator's scheme, built here: importing pkg/operator would link
	// the whole operator into every package that uses this one.
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1beta1.AddToScheme, v1alpha1.AddToScheme, apiextensionsv1.AddToScheme, gatewayv1.Install} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.New(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cs, cl
}
