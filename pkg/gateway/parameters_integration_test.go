//go:build !unit

package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The settings of a Gateway's instance come from the NginxGatewayParameters
// its class and the Gateway name, the Gateway's over the class's field by
// field; a class or Gateway naming parameters that do not exist, or of
// another kind, is not accepted (InvalidParameters) until they do.
func TestParametersOfTheClassAndTheGatewaySetTheInstance(t *testing.T) {
	ctx, ns, c := setup(t)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "params-" + ns}, Spec: gatewayv1.GatewayClassSpec{
		ControllerName: graph.ControllerName,
		ParametersRef: &gatewayv1.ParametersReference{Group: gatewayv1.Group(v1beta1.GroupVersion.Group), Kind: gateway.ParametersKind,
			Name: "defaults", Namespace: ptr.To(gatewayv1.Namespace(ns))},
	}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		Infrastructure: &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
			Group: gatewayv1.Group(v1beta1.GroupVersion.Group), Kind: gateway.ParametersKind, Name: "web"}},
	}}
	create(t, c, class, gw)
	accepted := func(what string, get func() ([]metav1.Condition, error), want string) {
		t.Helper()
		tools.Eventually(t, time.Minute, what, func() error {
			conds, err := get()
			if err != nil {
				return err
			}
			if got := condition(conds, "Accepted"); got != want {
				return fmt.Errorf("Accepted %s, want %s", got, want)
			}
			return nil
		})
	}
	classConditions := func() ([]metav1.Condition, error) {
		var got gatewayv1.GatewayClass
		err := c.Get(ctx, client.ObjectKeyFromObject(class), &got)
		return got.Status.Conditions, err
	}
	gatewayConditions := func() ([]metav1.Condition, error) {
		var got gatewayv1.Gateway
		err := c.Get(ctx, client.ObjectKeyFromObject(gw), &got)
		return got.Status.Conditions, err
	}
	accepted("the class naming missing parameters refused", classConditions, "False/InvalidParameters")
	accepted("the Gateway naming missing parameters refused", gatewayConditions, "False/InvalidParameters")

	create(t, c,
		&v1beta1.NginxGatewayParameters{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns}, Spec: v1beta1.NginxGatewayParametersSpec{
			Replicas: ptr.To[int32](3), Image: "registry.example/nginx:1.27",
			Config: &v1beta1.NginxSettings{ClientMaxBodySize: "8m"},
		}},
		&v1beta1.NginxGatewayParameters{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: v1beta1.NginxGatewayParametersSpec{
			Replicas: ptr.To[int32](2),
			Service:  &v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		}})
	accepted("the class accepted once its parameters exist", classConditions, "True/Accepted")
	accepted("the Gateway accepted once its parameters exist", gatewayConditions, "True/Accepted")
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("web")}
	tools.Eventually(t, time.Minute, "the instance made with the parameters", func() error {
		var nginx v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &nginx); err != nil {
			return err
		}
		s := nginx.Spec
		if ptr.Deref(s.Replicas, 0) != 2 || s.Image != "registry.example/nginx:1.27" || s.Service.Type != corev1.ServiceTypeLoadBalancer || s.Config.ClientMaxBodySize != "8m" {
			return fmt.Errorf("replicas %v, image %q, service %q, clientMaxBodySize %q; want 2 (the Gateway's), the class's image, LoadBalancer, 8m",
				ptr.Deref(s.Replicas, 0), s.Image, s.Service.Type, s.Config.ClientMaxBodySize)
		}
		tree, err := served(ctx, c, instance)
		if err != nil {
			return err
		}
		for _, d := range blocks(tree, "http")[0].Block {
			if d.Name == "client_max_body_size" && d.Args[0] == "8m" {
				return nil
			}
		}
		return fmt.Errorf("nginx.conf has no client_max_body_size 8m")
	})

	// graph.Parameters of another kind: refused, and the instance left as it is.
	// The controller writes the Gateway's status meanwhile: the change is
	// made on the latest version, as any client of optimistic concurrency must.
	framework.Update(ctx, t, c, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gw.Name}}, func(live *gatewayv1.Gateway) {
		live.Spec.Infrastructure.ParametersRef = &gatewayv1.LocalParametersReference{Group: "", Kind: "ConfigMap", Name: "web"}
	})
	accepted("the Gateway naming a ConfigMap refused", gatewayConditions, "False/InvalidParameters")
	var nginx v1beta1.NginxOperator
	tools.Must(t, c.Get(ctx, instance, &nginx))
	if ptr.Deref(nginx.Spec.Replicas, 0) != 2 {
		t.Errorf("a Gateway refused for its parameters changed its instance: replicas %v", ptr.Deref(nginx.Spec.Replicas, 0))
	}
}
