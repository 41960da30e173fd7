package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The bundle's operator, as its ServiceAccount, accepts a GatewayClass of
// its controllerName, makes a Gateway one NginxOperator (whose children the
// cluster's controllers and kwok run), tells the Gateway and its route
// where they stand (and a BackendTLSPolicy of a route's Service), and a
// deleted Gateway takes its instance and its policy entry along and
// nothing else; a Gateway whose instance name a user's NginxOperator has
// leaves it alone and says so.
func TestAGatewayRunsAsOneInstanceUnderTheBundlesRBACAndGoesWithIt(t *testing.T) {
	ctx, ns, _ := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	keep := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: ns}, Spec: v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}}}
	api := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}, Selector: map[string]string{"app": "api"}}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	rt := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "api", Port: ptr.To(gatewayv1.PortNumber(8080))}}}}}},
	}}
	grpc := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Name: "api-grpc", Namespace: ns}, Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
		Rules: []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "api", Port: ptr.To(gatewayv1.PortNumber(8080))}}}}}},
	}}
	// A Service whose certificate nginx verifies (BackendTLSPolicy).
	ca, err := tools.NewCA("backend CA", time.Hour)
	tools.Must(t, err)
	caPEM, _, err := ca.Issue(tools.Server("secure.example.com"), time.Hour)
	tools.Must(t, err)
	secure := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "secure", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8443}}, Selector: map[string]string{"app": "secure"}}}
	caMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "secure-ca", Namespace: ns}, Data: map[string]string{"ca.crt": string(caPEM)}}
	policy := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Name: "secure", Namespace: ns}, Spec: gatewayv1.BackendTLSPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "secure"}}},
		Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "secure.example.com", CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "secure-ca"}}},
	}}
	rt.Spec.Rules = append(rt.Spec.Rules, gatewayv1.HTTPRouteRule{
		Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/secure")}}},
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "secure", Port: ptr.To(gatewayv1.PortNumber(8443))}}}}})
	// A Gateway whose instance name a user's NginxOperator already has.
	clash := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "clash", Namespace: ns}, Spec: gw.Spec}
	taken := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: graph.InstanceName("clash"), Namespace: ns}, Spec: keep.Spec}
	for _, o := range []client.Object{class, keep, taken, api, secure, caMap, policy, gw, clash, rt, grpc} {
		tools.Must(t, c.Create(ctx, o))
	}
	tools.Eventually(t, 2*time.Minute, "the clashing Gateway not programmed, naming the taken instance", func() error {
		var g gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKeyFromObject(clash), &g); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(g.Status.Conditions, "Programmed")
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "Invalid" || !strings.Contains(cond.Message, taken.Name) {
			return fmt.Errorf("gateway status %+v", g.Status.Conditions)
		}
		return nil
	})
	var user v1beta1.NginxOperator
	tools.Must(t, c.Get(ctx, client.ObjectKeyFromObject(taken), &user))
	if len(user.OwnerReferences) != 0 || len(user.Spec.Config.Servers) != 0 {
		t.Errorf("the user's NginxOperator %s was taken over: owners %v, servers %v", taken.Name, user.OwnerReferences, user.Spec.Config.Servers)
	}
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("edge")}
	tools.Eventually(t, 2*time.Minute, "the Gateway accepted with an address, its route accepted, its instance's pod ready", func() error {
		var g gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKeyFromObject(gw), &g); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(g.Status.Conditions, "Accepted"); cond == nil || cond.Status != metav1.ConditionTrue || len(g.Status.Addresses) == 0 {
			return fmt.Errorf("gateway status %+v", g.Status)
		}
		var r gatewayv1.HTTPRoute
		if err := c.Get(ctx, client.ObjectKeyFromObject(rt), &r); err != nil {
			return err
		}
		if len(r.Status.Parents) != 1 || !meta.IsStatusConditionTrue(r.Status.Parents[0].Conditions, "Accepted") {
			return fmt.Errorf("route status %+v", r.Status)
		}
		var gr gatewayv1.GRPCRoute
		if err := c.Get(ctx, client.ObjectKeyFromObject(grpc), &gr); err != nil {
			return err
		}
		if len(gr.Status.Parents) != 1 || !meta.IsStatusConditionTrue(gr.Status.Parents[0].Conditions, "Accepted") {
			return fmt.Errorf("GRPCRoute status %+v", gr.Status)
		}
		var n v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &n); err != nil {
			return err
		}
		if n.Status.ReadyReplicas != 1 {
			return fmt.Errorf("instance status %+v", n.Status)
		}
		var p gatewayv1.BackendTLSPolicy
		if err := c.Get(ctx, client.ObjectKeyFromObject(policy), &p); err != nil {
			return err
		}
		if len(p.Status.Ancestors) != 1 || string(p.Status.Ancestors[0].AncestorRef.Name) != gw.Name ||
			!meta.IsStatusConditionTrue(p.Status.Ancestors[0].Conditions, "Accepted") {
			return fmt.Errorf("BackendTLSPolicy status %+v", p.Status)
		}
		return nil
	})

	tools.Must(t, c.Delete(ctx, gw))
	tools.Eventually(t, 2*time.Minute, "the instance gone with its Gateway", func() error {
		var n v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &n); !apierrors.IsNotFound(err) {
			return fmt.Errorf("instance still there (%v)", err)
		}
		return nil
	})
	for _, o := range []client.Object{keep, api, rt, grpc} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%T %s went with the Gateway: %v", o, o.GetName(), err)
		}
	}
	tools.Eventually(t, 2*time.Minute, "the deleted Gateway's entry gone from the BackendTLSPolicy", func() error {
		var p gatewayv1.BackendTLSPolicy
		if err := c.Get(ctx, client.ObjectKeyFromObject(policy), &p); err != nil {
			return err
		}
		if len(p.Status.Ancestors) != 0 {
			return fmt.Errorf("ancestors %+v", p.Status.Ancestors)
		}
		return nil
	})
}

// The bundle's operator, as its ServiceAccount, serves a Gateway's TLS
// (passthrough), TCP and UDP listeners: it reads the TLSRoutes, TCPRoutes
// and UDPRoutes that attach (each kind watched where the cluster serves
// it), gives the instance their streams, and tells each route where it
// stands.
func TestAGatewaysStreamRoutesRunUnderTheBundlesRBAC(t *testing.T) {
	ctx, ns, _ := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-streams-" + ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	backend := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "backend", Namespace: ns}, Spec: corev1.ServiceSpec{
		Ports:    []corev1.ServicePort{{Name: "tcp", Port: 5432}, {Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP}},
		Selector: map[string]string{"app": "backend"}}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "streams", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{
			{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
			{Name: "tcp", Port: 5432, Protocol: gatewayv1.TCPProtocolType},
			{Name: "udp", Port: 53, Protocol: gatewayv1.UDPProtocolType},
		},
	}}
	parent := func(section string) gatewayv1.CommonRouteSpec {
		return gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "streams", SectionName: ptr.To(gatewayv1.SectionName(section))}}}
	}
	to := func(port gatewayv1.PortNumber) []gatewayv1.BackendRef {
		return []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "backend", Port: ptr.To(port)}}}
	}
	routes := []client.Object{
		&gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: ns}, Spec: gatewayv1.TLSRouteSpec{CommonRouteSpec: parent("tls"),
			Hostnames: []gatewayv1.Hostname{"db.example.com"}, Rules: []gatewayv1.TLSRouteRule{{BackendRefs: to(5432)}}}},
		&gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Name: "tcp", Namespace: ns}, Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: parent("tcp"),
			Rules: []gatewayv1.TCPRouteRule{{BackendRefs: to(5432)}}}},
		&gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Name: "udp", Namespace: ns}, Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: parent("udp"),
			Rules: []gatewayv1.UDPRouteRule{{BackendRefs: to(53)}}}},
	}
	for _, obj := range append([]client.Object{class, backend, gw}, routes...) {
		tools.Must(t, c.Create(ctx, obj))
	}
	tools.Eventually(t, 2*time.Minute, "the instance's three streams", func() error {
		var nginx v1beta1.NginxOperator
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: graph.InstanceName("streams")}, &nginx); err != nil {
			return err
		}
		if len(nginx.Spec.Config.Streams) != 3 {
			return fmt.Errorf("streams %+v", nginx.Spec.Config.Streams)
		}
		return nil
	})
	tools.Eventually(t, time.Minute, "each route accepted", func() error {
		for _, rt := range routes {
			if err := c.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
				return err
			}
			var parents []gatewayv1.RouteParentStatus
			switch rt := rt.(type) {
			case *gatewayv1.TLSRoute:
				parents = rt.Status.Parents
			case *gatewayv1.TCPRoute:
				parents = rt.Status.Parents
			case *gatewayv1.UDPRoute:
				parents = rt.Status.Parents
			}
			if len(parents) != 1 || !meta.IsStatusConditionTrue(parents[0].Conditions, string(gatewayv1.RouteConditionAccepted)) {
				return fmt.Errorf("%T %s: %+v", rt, rt.GetName(), parents)
			}
		}
		return nil
	})
}
