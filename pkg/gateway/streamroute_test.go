package gateway

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

func routeMeta(name string, age int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))}
}

func backendRefs(service string, port int32) []gatewayv1.BackendRef {
	return []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(service), Port: ptr.To(gatewayv1.PortNumber(port))}}}
}

func parents(section string) gatewayv1.CommonRouteSpec {
	return gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName(section))}}}
}

func tlsRoute(name string, age int, section string, hosts []gatewayv1.Hostname, service string) *gatewayv1.TLSRoute {
	return &gatewayv1.TLSRoute{ObjectMeta: routeMeta(name, age), Spec: gatewayv1.TLSRouteSpec{CommonRouteSpec: parents(section), Hostnames: hosts,
		Rules: []gatewayv1.TLSRouteRule{{BackendRefs: backendRefs(service, 8443)}}}}
}

func tcpRoute(name string, age int, section, service string) *gatewayv1.TCPRoute {
	return &gatewayv1.TCPRoute{ObjectMeta: routeMeta(name, age), Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: parents(section),
		Rules: []gatewayv1.TCPRouteRule{{BackendRefs: backendRefs(service, 5432)}}}}
}

func udpRoute(name string, age int, section, service string) *gatewayv1.UDPRoute {
	return &gatewayv1.UDPRoute{ObjectMeta: routeMeta(name, age), Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: parents(section),
		Rules: []gatewayv1.UDPRouteRule{{BackendRefs: backendRefs(service, 53)}}}}
}

// TLS passed through by name on the HTTPS listeners' port, TCP and UDP on
// one number: the routes become the instance's streams, the oldest route
// of a TCP listener takes its port while both count as attached, a route
// whose backend is missing sends nowhere and says so, and the instance is
// one the CRD admits.
func TestStreamRoutesBecomeStreamsBesideTheHTTPSServers(t *testing.T) {
	passthrough := gatewayv1.Listener{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("*.db.example.com")),
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}}
	gw := gateway(httpsListener("https", 443, "www.example.com", certRef("", "www")), passthrough,
		gatewayv1.Listener{Name: "pg", Port: 5432, Protocol: gatewayv1.TCPProtocolType},
		gatewayv1.Listener{Name: "dns", Port: 53, Protocol: gatewayv1.UDPProtocolType})
	in := graph.Inputs{Gateway: gw, Secrets: map[types.NamespacedName]bool{{Namespace: ns, Name: "www"}: true}, Services: services("web", "orders-db", "reports-db", "pg-old", "pg-new", "coredns"),
		HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("web", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web")})},
		StreamRoutes: []graph.Object{
			tlsRoute("orders", 1, "tls", []gatewayv1.Hostname{"orders.db.example.com"}, "orders-db"),
			// An older route's name stays its own; a name outside the
			// listener's is not this listener's.
			tlsRoute("reports", 2, "tls", []gatewayv1.Hostname{"reports.db.example.com", "orders.db.example.com", "other.example.com"}, "reports-db"),
			tlsRoute("missing", 3, "tls", []gatewayv1.Hostname{"missing.db.example.com"}, "nowhere"),
			tcpRoute("pg-new", 5, "pg", "pg-new"), tcpRoute("pg-old", 4, "pg", "pg-old"),
			udpRoute("dns", 1, "dns", "coredns"),
		},
	}
	tr := Translate(t.Context(), in)
	to := func(service string, port int32) []v1beta1.Backend {
		return []v1beta1.Backend{{Service: service, Port: port, Weight: ptr.To[int32](1)}}
	}
	wantStreams := []v1beta1.Stream{
		{Port: "p443", ServerNames: []string{"orders.db.example.com"}, Backends: to("orders-db", 8443)},
		{Port: "p443", ServerNames: []string{"reports.db.example.com"}, Backends: to("reports-db", 8443)},
		// A name whose route's backend is missing is closed.
		{Port: "p443", ServerNames: []string{"missing.db.example.com"}},
		{Port: "p5432", Backends: to("pg-old", 5432)},
		{Port: "u53", Backends: to("coredns", 53)},
		// The TLS listener's own name, which no route takes, is closed,
		// and holds the port's router (holdRouters).
		{Port: "p443", ServerNames: []string{"*.db.example.com"}},
	}
	if diff := cmp.Diff(wantStreams, tr.Spec.Config.Streams); diff != "" {
		t.Errorf("streams (-want +got):\n%s", diff)
	}
	wantPorts := []v1beta1.Port{{Name: "p443", ContainerPort: 8443, ServicePort: 443}, {Name: "p5432", ContainerPort: 5432, ServicePort: 5432},
		{Name: "u53", ContainerPort: 8053, ServicePort: 53, Protocol: corev1.ProtocolUDP}}
	if diff := cmp.Diff(wantPorts, tr.Spec.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	for _, s := range tr.Spec.Config.Servers {
		if s.Port != "p443" || s.TLS == nil {
			t.Errorf("server %+v: only the HTTPS listener's port has servers, with TLS", s)
		}
	}
	gotRoutes := map[string]map[string]string{}
	for _, r := range tr.Routes {
		for _, p := range r.Parents {
			gotRoutes[string(r.Kind)+" "+r.Key.Name] = byType(p.Conditions)
		}
	}
	ok := map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}
	wantRoutes := map[string]map[string]string{
		"HTTPRoute web": ok, "TLSRoute orders": ok, "TLSRoute reports": ok, "TCPRoute pg-old": ok, "TCPRoute pg-new": ok, "UDPRoute dns": ok,
		"TLSRoute missing": {"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"},
	}
	if diff := cmp.Diff(wantRoutes, gotRoutes); diff != "" {
		t.Errorf("route conditions (-want +got):\n%s", diff)
	}
	attached := map[gatewayv1.SectionName]int32{}
	for _, l := range tr.Graph.Listeners {
		attached[l.Name] = l.Attached
	}
	if diff := cmp.Diff(map[gatewayv1.SectionName]int32{"https": 1, "tls": 3, "pg": 2, "dns": 1}, attached); diff != "" {
		t.Errorf("attached routes (-want +got):\n%s", diff)
	}
	validationtest.Spec(t, tr.Spec)
}

// A route of another namespace's backend needs a ReferenceGrant there
// from its own kind.
func TestAStreamRouteToAnotherNamespaceNeedsAGrantFromItsKind(t *testing.T) {
	gw := gateway(gatewayv1.Listener{Name: "pg", Port: 5432, Protocol: gatewayv1.TCPProtocolType})
	rt := tcpRoute("pg", 1, "pg", "db")
	rt.Spec.Rules[0].BackendRefs[0].Namespace = ptr.To(gatewayv1.Namespace("data"))
	in := graph.Inputs{Gateway: gw, StreamRoutes: []graph.Object{rt}, Services: map[types.NamespacedName]bool{{Namespace: "data", Name: "db"}: true}}
	closed := []v1beta1.Stream{{Port: "p5432"}}
	if got := Translate(t.Context(), in); !cmp.Equal(closed, got.Spec.Config.Streams) || byType(got.Routes[0].Parents[0].Conditions)["ResolvedRefs"] != "False/RefNotPermitted" {
		t.Errorf("without a grant: streams %+v (want the port closed), route %v", got.Spec.Config.Streams, byType(got.Routes[0].Parents[0].Conditions))
	}
	grant := gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "tcp", Namespace: "data"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: graph.Group, Kind: graph.KindTCPRoute, Namespace: ns}},
		To:   []gatewayv1.ReferenceGrantTo{{Kind: "Service"}}}}
	in.Grants = map[string][]gatewayv1.ReferenceGrant{"data": {grant}}
	got := Translate(t.Context(), in)
	want := []v1beta1.Stream{{Port: "p5432", Backends: []v1beta1.Backend{{Service: "db", Namespace: "data", Port: 5432, Weight: ptr.To[int32](1)}}}}
	if diff := cmp.Diff(want, got.Spec.Config.Streams); diff != "" {
		t.Errorf("with a grant from TCPRoutes (-want +got):\n%s", diff)
	}
}

// A TLS listener that terminates gives its routes' streams its
// certificate: nginx terminates TLS for their names and relays plain
// bytes.
func TestATerminatingTLSListenersStreamsCarryItsCertificate(t *testing.T) {
	terminate := gatewayv1.Listener{Name: "tls", Port: 8443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("mq.example.com")),
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{certRef("", "mq-tls")}}}
	in := graph.Inputs{Gateway: gateway(terminate), Secrets: map[types.NamespacedName]bool{{Namespace: ns, Name: "mq-tls"}: true}, Services: services("rabbitmq"),
		StreamRoutes: []graph.Object{tlsRoute("mq", 1, "tls", []gatewayv1.Hostname{"mq.example.com"}, "rabbitmq")}}
	tr := Translate(t.Context(), in)
	want := []v1beta1.Stream{{Port: "p8443", ServerNames: []string{"mq.example.com"}, TLS: &v1beta1.StreamTLS{SecretName: "mq-tls"},
		Backends: []v1beta1.Backend{{Service: "rabbitmq", Port: 8443, Weight: ptr.To[int32](1)}}}}
	if diff := cmp.Diff(want, tr.Spec.Config.Streams); diff != "" {
		t.Errorf("streams (-want +got):\n%s", diff)
	}
	validationtest.Spec(t, tr.Spec)
}

// A TLS listener beside an HTTPS listener on one port keeps the port's
// router when its last route goes: the instance without any TLSRoute has
// the same router, whose one stream, for the listener's hostname, closes
// what no route takes. Were the router to go, the HTTPS servers would
// move from its socket to the port in a reload, and requests of the
// connections the old workers still route would be lost.
func TestATLSListenerHoldsItsPortsRouterWithoutRoutes(t *testing.T) {
	passthrough := gatewayv1.Listener{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("db.example.com")),
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}}
	in := graph.Inputs{Gateway: gateway(httpsListener("https", 443, "www.example.com", certRef("", "www")), passthrough),
		Secrets: map[types.NamespacedName]bool{{Namespace: ns, Name: "www"}: true}, Services: services("web", "db"),
		HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("web", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web")})}}
	without := Translate(t.Context(), in)
	if want := []v1beta1.Stream{{Port: "p443", ServerNames: []string{"db.example.com"}}}; !cmp.Equal(want, without.Spec.Config.Streams) {
		t.Errorf("without routes: streams %+v, want %+v", without.Spec.Config.Streams, want)
	}
	in.StreamRoutes = []graph.Object{tlsRoute("db", 2, "tls", []gatewayv1.Hostname{"db.example.com"}, "db")}
	with := Translate(t.Context(), in)
	if want := []v1beta1.Stream{{Port: "p443", ServerNames: []string{"db.example.com"}, Backends: []v1beta1.Backend{{Service: "db", Port: 8443, Weight: ptr.To[int32](1)}}}}; !cmp.Equal(want, with.Spec.Config.Streams) {
		t.Errorf("with the route: streams %+v, want %+v", with.Spec.Config.Streams, want)
	}
	if !cmp.Equal(without.Spec.Config.Servers, with.Spec.Config.Servers) {
		t.Error("the HTTPS servers differ with and without the TLSRoute")
	}
}
