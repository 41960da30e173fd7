//go:build !unit

package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A Gateway's TLS (passthrough), TCP and UDP listeners and the routes that
// attach to them reach the instance's streams, its nginx.conf and its
// Service (a UDP port beside a TCP port of the same number), and each
// route is told where it stands.
func TestStreamRoutesReachTheInstanceAndAreToldWhereTheyStand(t *testing.T) {
	ctx, ns, c := setup(t)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	service := func(name string, port int32, protocol corev1.Protocol) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "p", Port: port, Protocol: protocol}}, Selector: map[string]string{"app": name}}}
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{
			{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
			{Name: "dns-tcp", Port: 53, Protocol: gatewayv1.TCPProtocolType},
			{Name: "dns-udp", Port: 53, Protocol: gatewayv1.UDPProtocolType},
		},
	}}
	refs := func(name string, port gatewayv1.PortNumber) []gatewayv1.BackendRef {
		return []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(port)}}}
	}
	parent := func(section string) gatewayv1.CommonRouteSpec {
		return gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge", SectionName: ptr.To(gatewayv1.SectionName(section))}}}
	}
	create(t, c, class, service("vault", 8200, corev1.ProtocolTCP), service("dns", 53, corev1.ProtocolUDP), gw,
		&gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Name: "vault", Namespace: ns}, Spec: gatewayv1.TLSRouteSpec{CommonRouteSpec: parent("tls"),
			Hostnames: []gatewayv1.Hostname{"vault.example.com"}, Rules: []gatewayv1.TLSRouteRule{{BackendRefs: refs("vault", 8200)}}}},
		&gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Name: "dns-tcp", Namespace: ns}, Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: parent("dns-tcp"),
			Rules: []gatewayv1.TCPRouteRule{{BackendRefs: refs("missing", 53)}}}},
		&gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Name: "dns-udp", Namespace: ns}, Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: parent("dns-udp"),
			Rules: []gatewayv1.UDPRouteRule{{BackendRefs: refs("dns", 53)}}}},
	)
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("edge")}
	tools.Eventually(t, time.Minute, "the instance's streams in nginx.conf", func() error {
		var nginx v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &nginx); err != nil {
			return err
		}
		var secret corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: layout.NamesFor(instance.Name).ConfigSecret}, &secret); err != nil {
			return err
		}
		conf := strings.Join(strings.Fields(string(secret.Data[layout.ConfigFile])), " ")
		// The TCP route's backend is missing: its port is closed.
		for _, want := range []string{`"\\vault.example.com" unix:`, "listen 8053 udp;", "ssl_preread on;", "listen 8053; proxy_pass stream_closed;"} {
			if !strings.Contains(conf, want) {
				return fmt.Errorf("nginx.conf lacks %q: %s\nstreams %+v", want, conf, nginx.Spec.Config.Streams)
			}
		}
		return nil
	})
	tools.Eventually(t, time.Minute, "the Service's UDP and TCP port 53", func() error {
		var svc corev1.Service
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: layout.NamesFor(instance.Name).Service}, &svc); err != nil {
			return err
		}
		var got []string
		for _, p := range svc.Spec.Ports {
			got = append(got, fmt.Sprintf("%s %d/%s", p.Name, p.Port, p.Protocol))
		}
		if want := []string{"p443 443/TCP", "p53 53/TCP", "u53 53/UDP"}; !slices.Equal(got, want) {
			return fmt.Errorf("Service ports %v, want %v", got, want)
		}
		return nil
	})
	tools.Eventually(t, time.Minute, "the routes' statuses", func() error {
		for _, tc := range []struct {
			route    client.Object
			resolved string
		}{
			{&gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Name: "vault", Namespace: ns}}, "True/ResolvedRefs"},
			{&gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Name: "dns-tcp", Namespace: ns}}, "False/BackendNotFound"},
			{&gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Name: "dns-udp", Namespace: ns}}, "True/ResolvedRefs"},
		} {
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.route), tc.route); err != nil {
				return err
			}
			parents := routeParents(tc.route)
			if len(parents) != 1 || condition(parents[0].Conditions, "Accepted") != "True/Accepted" || condition(parents[0].Conditions, "ResolvedRefs") != tc.resolved {
				return fmt.Errorf("%T %s: %+v", tc.route, tc.route.GetName(), parents)
			}
		}
		return nil
	})
}

// routeParents are the status entries of a TLSRoute, TCPRoute or UDPRoute.
func routeParents(rt client.Object) []gatewayv1.RouteParentStatus {
	switch rt := rt.(type) {
	case *gatewayv1.TLSRoute:
		return rt.Status.Parents
	case *gatewayv1.TCPRoute:
		return rt.Status.Parents
	case *gatewayv1.UDPRoute:
		return rt.Status.Parents
	}
	return nil
}
