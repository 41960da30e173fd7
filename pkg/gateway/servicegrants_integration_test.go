//go:build !unit

package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// setupTwoNamespaces is setup with the operator watching a second
// namespace beside the test's, which it returns too.
func setupTwoNamespaces(t *testing.T) (context.Context, string, string, client.Client) {
	t.Helper()
	cfg := env.Cluster(t).Config
	gatewayCRDs.Do(func() { gatewayCRDsErr = framework.InstallGatewayAPICRDs(context.Background(), cfg) })
	if gatewayCRDsErr != nil {
		t.Fatal(gatewayCRDsErr)
	}
	ctx, ns, _, c := inprocess.Setup(t, env)
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-b"}}
	create(t, c, other)
	t.Cleanup(func() { _ = c.Delete(context.Background(), other) })
	inprocess.Start(t, cfg, inprocess.Options(ns, other.Name), nil)
	return ctx, ns, other.Name, c
}

// upstreamOf is what nginx sends to, as the instance reports it: its
// Degraded condition and the namespace/service of its upstreams.
func upstreamOf(ctx context.Context, c client.Client, key types.NamespacedName) (degraded string, upstreams []string, err error) {
	var nginx v1beta1.NginxOperator
	if err := c.Get(ctx, key, &nginx); err != nil {
		return "", nil, err
	}
	if nginx.Status.ObservedGeneration != nginx.Generation {
		return "", nil, fmt.Errorf("generation %d not observed yet", nginx.Generation)
	}
	for _, u := range nginx.Status.Upstreams {
		upstreams = append(upstreams, u.Namespace+"/"+u.Service)
	}
	return condition(nginx.Status.Conditions, v1beta1.ConditionDegraded), upstreams, nil
}

func TestABackendInAnotherNamespaceNeedsThatNamespacesConsent(t *testing.T) {
	ctx, ns, other, c := setupTwoNamespaces(t)
	api := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: other},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}, Selector: map[string]string{"app": "api"}}}
	nginx := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{
			Backends: []v1beta1.Backend{{Service: "api", Namespace: other, Port: 8080}}}}}}}},
	}}
	create(t, c, api, nginx)
	key := client.ObjectKeyFromObject(nginx)
	wantState := func(what, degraded, upstream string) {
		t.Helper()
		tools.Eventually(t, time.Minute, what, func() error {
			got, upstreams, err := upstreamOf(ctx, c, key)
			if err != nil {
				return err
			}
			if got != degraded || upstream != "" && (len(upstreams) != 1 || upstreams[0] != upstream) {
				return fmt.Errorf("Degraded %s, upstreams %v", got, upstreams)
			}
			return nil
		})
	}
	wantState("refused without a grant", "True/"+"ReferenceNotPermitted", "")

	grant := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "nginx-of-" + ns, Namespace: other}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.Group(v1beta1.GroupVersion.Group), Kind: "NginxOperator", Namespace: gatewayv1.Namespace(ns)}},
		To:   []gatewayv1.ReferenceGrantTo{{Kind: "Service", Name: ptr.To(gatewayv1.ObjectName("api"))}},
	}}
	create(t, c, grant)
	wantState("sent there once granted", "False/AsExpected", other+"/api")

	tools.Must(t, c.Delete(ctx, grant))
	wantState("refused again once the grant goes", "True/ReferenceNotPermitted", "")
}

func TestAGatewaysInstanceSendsWhereItsRoutesMayAndNowhereElse(t *testing.T) {
	ctx, ns, apps, c := setupTwoNamespaces(t)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	from := gatewayv1.NamespacesFromAll
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}}},
	}}
	shop := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: apps},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}, Selector: map[string]string{"app": "shop"}}}
	// The route lives beside its backend, in another namespace than the
	// Gateway's: the case of a shared Gateway, and no grant is needed.
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: apps}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "shared", Namespace: ptr.To(gatewayv1.Namespace(ns))}}},
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: "shop", Port: ptr.To(gatewayv1.PortNumber(8080))}}}}}},
	}}
	create(t, c, class, gw, shop, route)
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("shared")}
	tools.Eventually(t, time.Minute, "the route resolved and its Service an upstream of the Gateway's instance", func() error {
		var rt gatewayv1.HTTPRoute
		if err := c.Get(ctx, client.ObjectKeyFromObject(route), &rt); err != nil {
			return err
		}
		if len(rt.Status.Parents) != 1 || condition(rt.Status.Parents[0].Conditions, "ResolvedRefs") != "True/ResolvedRefs" {
			return fmt.Errorf("route status %+v", rt.Status.Parents)
		}
		degraded, upstreams, err := upstreamOf(ctx, c, instance)
		if err != nil {
			return err
		}
		if degraded != "False/AsExpected" || len(upstreams) != 1 || upstreams[0] != apps+"/shop" {
			return fmt.Errorf("instance Degraded %s, upstreams %v", degraded, upstreams)
		}
		return nil
	})

	// An NginxOperator that claims to be a Gateway's instance by its
	// owner but is not the one the Gateway controller made gets nothing:
	// its servers would come from the Gateway's routes, which are handed
	// to the Gateway's own instance only, and those in its spec are not
	// read. It says so, and has no configuration.
	var gwLive gatewayv1.Gateway
	tools.Must(t, c.Get(ctx, client.ObjectKeyFromObject(gw), &gwLive))
	lookAlike := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "impostor", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway", Name: gwLive.Name, UID: gwLive.UID, Controller: ptr.To(true)}}},
		Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{
			Backends: []v1beta1.Backend{{Service: "shop", Namespace: apps, Port: 8080}}}}}}}},
		}}
	create(t, c, lookAlike)
	tools.Eventually(t, time.Minute, "a look-alike given nothing", func() error {
		var got v1beta1.NginxOperator
		if err := c.Get(ctx, client.ObjectKeyFromObject(lookAlike), &got); err != nil {
			return err
		}
		if reconciled := condition(got.Status.Conditions, v1beta1.ConditionReconciled); reconciled != "False/"+nginx.ReasonAwaitingRoutes {
			return fmt.Errorf("Reconciled %s", reconciled)
		}
		return nil
	})
	var config corev1.Secret
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: layout.NamesFor(lookAlike.Name).ConfigSecret}, &config)
	if !apierrors.IsNotFound(err) {
		t.Errorf("the look-alike's configuration: %v, want none", err)
	}
}

// TestAnExtensionRefFilterAuthenticatesWithTheRoutesNamespacesService: a
// route of another namespace than the Gateway's names an NginxExternalAuth
// of its own namespace; the Gateway's instance asks that filter's Service
// (an upstream of the instance, with no grant: the route may use its own
// namespace's Services) about the rule's requests. Without the filter the
// route's ResolvedRefs says FilterNotFound.
func TestAnExtensionRefFilterAuthenticatesWithTheRoutesNamespacesService(t *testing.T) {
	ctx, ns, apps, c := setupTwoNamespaces(t)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	from := gatewayv1.NamespacesFromAll
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}}},
	}}
	service := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: apps},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}, Selector: map[string]string{"app": name}}}
	}
	filter := &v1beta1.NginxExternalAuth{ObjectMeta: metav1.ObjectMeta{Name: "oauth", Namespace: apps},
		Spec: v1beta1.ExternalAuth{Service: "oauth2", Port: 8080, Path: "/oauth2/auth"}}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "members", Namespace: apps}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "shared", Namespace: ptr.To(gatewayv1.Namespace(ns))}}},
		Rules: []gatewayv1.HTTPRouteRule{{
			Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef,
				ExtensionRef: &gatewayv1.LocalObjectReference{Group: "nginx.operator.dev", Kind: "NginxExternalAuth", Name: "oauth"}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: "shop", Port: ptr.To(gatewayv1.PortNumber(8080))}}}}}},
	}}
	create(t, c, class, gw, service("shop"), service("oauth2"), filter, route)
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("shared")}
	wantState := func(what, resolved string, upstreams ...string) {
		t.Helper()
		tools.Eventually(t, time.Minute, what, func() error {
			var rt gatewayv1.HTTPRoute
			if err := c.Get(ctx, client.ObjectKeyFromObject(route), &rt); err != nil {
				return err
			}
			if len(rt.Status.Parents) != 1 || condition(rt.Status.Parents[0].Conditions, "ResolvedRefs") != resolved {
				return fmt.Errorf("route status %+v", rt.Status.Parents)
			}
			degraded, got, err := upstreamOf(ctx, c, instance)
			if err != nil {
				return err
			}
			if slices.Sort(got); degraded != "False/AsExpected" || fmt.Sprint(got) != fmt.Sprint(upstreams) {
				return fmt.Errorf("instance Degraded %s, upstreams %v, want %v", degraded, got, upstreams)
			}
			return nil
		})
	}
	wantState("the route resolved, its Service and the filter's upstreams of the instance", "True/ResolvedRefs", apps+"/oauth2", apps+"/shop")
	tools.Must(t, c.Delete(ctx, filter))
	wantState("without the filter, the rule answers 500 and the route says why", "False/FilterNotFound")
}
