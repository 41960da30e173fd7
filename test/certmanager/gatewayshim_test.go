//go:build !unit

package certmanager_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

// A Gateway annotated for cert-manager's gateway-shim gets from the real
// cert-manager a Certificate for its HTTPS listener's hostname, in the
// Secret the listener names: the listener, whose certificate did not
// resolve before, resolves it then. Gateway API's CRDs are installed
// before the operator starts, which looks for them at start.
func TestCertManagersGatewayShimGivesAnAnnotatedGatewayItsCertificate(t *testing.T) {
	if err := framework.InstallGatewayAPICRDs(context.Background(), env.Cluster(t).Config); err != nil {
		t.Fatal(err)
	}
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	framework.RunCertManager(t, env.Cluster(t), true)
	issuer := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": "selfsigned", "namespace": ns},
		"spec":     map[string]any{"selfSigned": map[string]any{}},
	}}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	hostname := gatewayv1.Hostname("shop.example.com")
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Annotations: map[string]string{"cert-manager.io/issuer": "selfsigned"}},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class.Name), Listeners: []gatewayv1.Listener{{
			Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: &hostname,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "shop-tls"}}},
		}}},
	}
	for _, obj := range []client.Object{issuer, class, gw} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var cert certmanager.Certificate
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop-tls"}, &cert) == nil
	}) {
		t.Fatal("cert-manager's gateway-shim made no Certificate shop-tls for the annotated Gateway")
	}
	if !slices.Equal(cert.Spec.DNSNames, []string{"shop.example.com"}) || cert.Spec.IssuerRef.Name != "selfsigned" {
		t.Errorf("the gateway-shim's Certificate asks for %v from %+v, want shop.example.com from selfsigned", cert.Spec.DNSNames, cert.Spec.IssuerRef)
	}
	var resolved *metav1.Condition
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		var live gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKeyFromObject(gw), &live); err != nil || len(live.Status.Listeners) == 0 {
			return false
		}
		resolved = meta.FindStatusCondition(live.Status.Listeners[0].Conditions, string(gatewayv1.ListenerConditionResolvedRefs))
		return resolved != nil && resolved.Status == metav1.ConditionTrue
	}) {
		t.Fatalf("the listener's ResolvedRefs is %+v, want True once cert-manager issued shop-tls", resolved)
	}
}
