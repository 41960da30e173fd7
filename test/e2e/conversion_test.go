package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// bookObject is exactly what a reader of The Kubernetes Operator Framework
// Book writes.
const bookObject = `
apiVersion: nginx.operator.dev/v1alpha1
kind: NginxOperator
metadata:
  name: book
spec:
  replicas: 1
  port: 8080
`

// The only test whose operator manages the CRD's conversion webhook: the CRD
// is cluster-wide, so it must not run in parallel with another such test.
func TestBookUsersV1alpha1ObjectIsServedAndReadableAsV1beta1(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)
	kc := operatorKubeconfig(ctx, t, ns)
	framework.StartOperator(t, kc, "--metrics-bind-address=0", "--namespaces="+ns, "--conversion-webhook=true", "--namespace="+ns)

	var out string
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		var err error
		out, err = kubectlWithInput(ctx, bookObject, "apply", "-n", ns, "-f", "-")
		return err == nil
	}) {
		t.Fatalf("creating the v1alpha1 object never succeeded: %s", out)
	}
	if !strings.Contains(out, "deprecated") {
		t.Errorf("no deprecation warning for v1alpha1: %q", out)
	}

	c, err := client.New(cluster.Config, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	var n v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "book"}, &n); err != nil {
		t.Fatalf("reading the book object as v1beta1: %v", err)
	}
	if len(n.Spec.Ports) != 1 || n.Spec.Ports[0].ContainerPort != 8080 || n.Spec.Replicas == nil || *n.Spec.Replicas != 1 {
		t.Errorf("as v1beta1: ports %+v replicas %v; want containerPort 8080 and 1 replica", n.Spec.Ports, n.Spec.Replicas)
	}
	// The operator reconciles it like any other instance.
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "book", 1)) {
		t.Fatal("the book object did not become Available")
	}
	out, err = kubectl(ctx, "get", "nginxoperators.v1alpha1.nginx.operator.dev", "book", "-n", ns, "-o", "jsonpath={.spec.port} {.status.conditions[?(@.type==\"Available\")].status}")
	// kubectl prints the deprecation warning first, on stderr.
	if err != nil || !strings.HasSuffix(out, "\n8080 True") {
		t.Errorf("read back as v1alpha1: %q (%v), want port 8080 and Available True", out, err)
	}
}
