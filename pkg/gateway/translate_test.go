package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

const ns = "infra"

func gateway(listeners ...gatewayv1.Listener) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: ns, Generation: 3},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "nginx", Listeners: listeners},
	}
}

func httpListener(name string, port int, host string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: gatewayv1.PortNumber(port), Protocol: gatewayv1.HTTPProtocolType}
	if host != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(host))
	}
	return l
}

// httpRoute is a route in ns, created at minute age, to the Gateway gw.
func httpRoute(name string, age int, hostnames []string, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	rt := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}, Rules: rules},
	}
	for _, h := range hostnames {
		rt.Spec.Hostnames = append(rt.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	return rt
}

func toService(name string) []gatewayv1.HTTPBackendRef {
	return []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(8080))}}}}
}

func prefix(path string) []gatewayv1.HTTPRouteMatch {
	return []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(path)}}}
}

func services(names ...string) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for _, n := range names {
		out[types.NamespacedName{Namespace: ns, Name: n}] = true
	}
	return out
}

func proxy(path, service string) v1beta1.Location {
	return v1beta1.Location{Path: path, PathType: v1beta1.PathPrefixElements,
		Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: service, Port: 8080, Weight: ptr.To[int32](1)}}}}
}

var notFound = v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}}

// conditions are a parent status's conditions as type=reason.
func conditions(cs []metav1.Condition) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestTranslateMakesOneServerPerPortAndHostnameWithEachRoutesRules(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         Inputs
		want       v1beta1.NginxOperatorSpec
		wantRoutes map[string]map[string]string // route -> condition type -> status/reason
	}{{
		name: "two routes on the catch-all listener: the older route's rule first, 404 for the rest",
		in: Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{
				httpRoute("b-newer", 2, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/api"), BackendRefs: toService("api-v2")}),
				httpRoute("a-older", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/api"), BackendRefs: toService("api")},
					gatewayv1.HTTPRouteRule{BackendRefs: toService("web")}),
			},
			Services: services("api", "api-v2", "web"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true,
				Locations: []v1beta1.Location{proxy("/api", "api"), proxy("/", "web")}}}},
		},
		wantRoutes: map[string]map[string]string{
			"a-older": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
			"b-newer": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
		},
	}, {
		name: "a missing backend answers 500 and says BackendNotFound",
		in: Inputs{
			Gateway:    gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("r", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("missing")})},
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true, Locations: []v1beta1.Location{
				{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 500}}}}}},
		},
		wantRoutes: map[string]map[string]string{"r": {"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"}},
	}, {
		name: "hostnames: a route's name under the listener's wildcard gets a server of its own; one outside it is refused",
		in: Inputs{
			Gateway: gateway(httpListener("http", 8080, "*.example.com")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{
				httpRoute("inside", 1, []string{"a.example.com", "other.test"}, gatewayv1.HTTPRouteRule{BackendRefs: toService("a")}),
				httpRoute("outside", 2, []string{"other.test"}, gatewayv1.HTTPRouteRule{BackendRefs: toService("a")}),
			},
			Services: services("a"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p8080", ContainerPort: 8080, ServicePort: 8080}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
				{Port: "p8080", ServerNames: []string{"*.example.com"}, Locations: []v1beta1.Location{notFound}},
				{Port: "p8080", ServerNames: []string{"a.example.com"}, Locations: []v1beta1.Location{proxy("/", "a")}},
				{Port: "p8080", DefaultServer: true, Locations: []v1beta1.Location{notFound}},
			}},
		},
		wantRoutes: map[string]map[string]string{
			"inside":  {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
			"outside": {"Accepted": "False/NoMatchingListenerHostname", "ResolvedRefs": "True/ResolvedRefs"},
		},
	}, {
		name: "conflicting listeners serve nothing; a route to them is not allowed",
		in: Inputs{
			Gateway:    gateway(httpListener("a", 80, "x.test"), httpListener("b", 80, "x.test"), httpListener("c", 81, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("r", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("a")})},
			Services:   services("a"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p81", ContainerPort: 8081, ServicePort: 81}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p81", DefaultServer: true,
				Locations: []v1beta1.Location{proxy("/", "a")}}}},
		},
		wantRoutes: map[string]map[string]string{"r": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Translate(tc.in)
			if diff := cmp.Diff(tc.want, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			gotRoutes := map[string]map[string]string{}
			for _, r := range got.Routes {
				for _, p := range r.Parents {
					gotRoutes[r.Key.Name] = conditions(p.Conditions)
				}
			}
			if diff := cmp.Diff(tc.wantRoutes, gotRoutes); diff != "" {
				t.Errorf("route conditions (-want +got):\n%s", diff)
			}
			// The instance is one the CRD and the controller admit.
			validationtest.Spec(t, withReplicas(got.Spec))
		})
	}
}

func withReplicas(s v1beta1.NginxOperatorSpec) v1beta1.NginxOperatorSpec {
	s.Replicas = ptr.To[int32](1)
	return s
}

func TestListenerStatusesSayWhatIsWrongWithTheSpecsReasons(t *testing.T) {
	https := gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{
		CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "missing"}}}}
	kinds := httpListener("kinds", 8080, "")
	kinds.AllowedRoutes = &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "FooRoute"}, {Kind: KindHTTPRoute}}}
	tcp := gatewayv1.Listener{Name: "tcp", Port: 9000, Protocol: gatewayv1.TCPProtocolType}
	tr := Translate(Inputs{Gateway: gateway(httpListener("a", 80, ""), gatewayv1.Listener{Name: "b", Port: 80, Protocol: gatewayv1.HTTPSProtocolType}, https, kinds, tcp)})
	want := map[string]map[string]string{
		"a":     {"Accepted": "True/Accepted", "Conflicted": "True/ProtocolConflict", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "False/Invalid"},
		"b":     {"Accepted": "True/Accepted", "Conflicted": "True/ProtocolConflict", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"},
		"https": {"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"},
		"kinds": {"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "False/InvalidRouteKinds", "Programmed": "True/Programmed"},
		"tcp":   {"Accepted": "False/UnsupportedProtocol", "Conflicted": "False/NoConflicts", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "False/Invalid"},
	}
	got := map[string]map[string]string{}
	for _, l := range tr.listeners {
		s := l.status(3, true)
		got[string(s.Name)] = conditions(s.Conditions)
		for _, c := range s.Conditions {
			if c.ObservedGeneration != 3 {
				t.Errorf("listener %s condition %s: observedGeneration %d, want 3", s.Name, c.Type, c.ObservedGeneration)
			}
		}
		if s.Name == "kinds" && len(s.SupportedKinds) != 1 {
			t.Errorf("supportedKinds of a listener allowing FooRoute and HTTPRoute: %v, want HTTPRoute only", s.SupportedKinds)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listener conditions (-want +got):\n%s", diff)
	}
}

func TestInstanceNamesAreOnesTheCRDAdmits(t *testing.T) {
	for _, gw := range []string{"web", "gateway-supported-and-unsupported-protocols", "1st", strings.Repeat("a", 253)} {
		name := InstanceName(gw)
		if len(name) > 47 || name[0] < 'a' || name[0] > 'z' || strings.HasSuffix(name, "-pods") {
			t.Errorf("Gateway %s: instance %q, want at most 47 characters starting with a letter", gw, name)
		}
	}
	if InstanceName("web") != "web-gateway" {
		t.Errorf("InstanceName(web) = %q, want web-gateway", InstanceName("web"))
	}
}
