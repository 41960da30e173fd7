package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// The tests of a shared Gateway: what one tenant's route holds is judged
// on that route alone, so every other tenant's route stays served.

const tenant = "team-b"

// allNamespaces lets routes of every namespace attach to l.
func allNamespaces(l gatewayv1.Listener) gatewayv1.Listener {
	from := gatewayv1.NamespacesFromAll
	l.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}
	return l
}

// inTenant moves a route to the tenant's namespace, still naming the
// Gateway of ns.
func inTenant[T *gatewayv1.HTTPRoute | *gatewayv1.GRPCRoute | *gatewayv1.TCPRoute](rt T) T {
	var meta *metav1.ObjectMeta
	var refs []gatewayv1.ParentReference
	switch rt := any(rt).(type) {
	case *gatewayv1.HTTPRoute:
		meta, refs = &rt.ObjectMeta, rt.Spec.ParentRefs
	case *gatewayv1.GRPCRoute:
		meta, refs = &rt.ObjectMeta, rt.Spec.ParentRefs
	case *gatewayv1.TCPRoute:
		meta, refs = &rt.ObjectMeta, rt.Spec.ParentRefs
	}
	meta.Namespace = tenant
	for i := range refs {
		refs[i].Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	return rt
}

func tenantServices(names ...string) map[types.NamespacedName]bool {
	out := services(names...)
	for _, n := range names {
		out[types.NamespacedName{Namespace: tenant, Name: n}] = true
	}
	return out
}

// hostileRegexes are regular expressions Gateway API admits and Go's RE2
// compiles, which nginx's PCRE2 refuses (the whole configuration with
// them) or reads as a variable of the whole instance.
var hostileRegexes = []string{
	`\x{100}`, `[^\x00-\x{10FFFF}]`, `[\d-z]`, `(?P<a>x)(?P<a>y)`, strings.Repeat(`(?:ab){1000}`, 10),
	`/(?P<host>x)`, `(?<uri>/x)`, `(?P<args>.*)`, `(?P<arg_q>.*)`, `(?P<http_x_match>.*)`,
}

// TestAHostileRegexRefusesOnlyItsOwnRoute: an older route of another
// namespace whose path, header or query parameter match (HTTPRoute), or
// header or method match (GRPCRoute), holds such a regular expression is
// not accepted and says why; the first tenant's route is accepted and
// served, and the instance passes the NginxOperator's rules in one
// translation.
func TestAHostileRegexRefusesOnlyItsOwnRoute(t *testing.T) {
	regex := ptr.To(gatewayv1.PathMatchRegularExpression)
	headerRegex := ptr.To(gatewayv1.HeaderMatchRegularExpression)
	queryRegex := ptr.To(gatewayv1.QueryParamMatchRegularExpression)
	grpcHeaderRegex := ptr.To(gatewayv1.GRPCHeaderMatchRegularExpression)
	methodRegex := ptr.To(gatewayv1.GRPCMethodMatchRegularExpression)
	fields := map[string]func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute){
		"HTTPRoute path": func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute) {
			return httpRoute("hostile", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web"),
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: regex, Value: ptr.To(re)}}}}), nil
		},
		"HTTPRoute header": func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute) {
			return httpRoute("hostile", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web"),
				Matches: []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Type: headerRegex, Name: "X-Hostile", Value: re}}}}}), nil
		},
		"HTTPRoute query parameter": func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute) {
			return httpRoute("hostile", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web"),
				Matches: []gatewayv1.HTTPRouteMatch{{QueryParams: []gatewayv1.HTTPQueryParamMatch{{Type: queryRegex, Name: "q", Value: re}}}}}), nil
		},
		"GRPCRoute header": func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute) {
			return nil, grpcRoute("hostile", 1, gatewayv1.GRPCRouteRule{BackendRefs: toGRPCService("web"),
				Matches: []gatewayv1.GRPCRouteMatch{{Headers: []gatewayv1.GRPCHeaderMatch{{Type: grpcHeaderRegex, Name: "x-hostile", Value: re}}}}})
		},
		"GRPCRoute method service": func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute) {
			return nil, grpcRoute("hostile", 1, gatewayv1.GRPCRouteRule{BackendRefs: toGRPCService("web"),
				Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Type: methodRegex, Service: ptr.To(re)}}}})
		},
		"GRPCRoute method method": func(re string) (*gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute) {
			return nil, grpcRoute("hostile", 1, gatewayv1.GRPCRouteRule{BackendRefs: toGRPCService("web"),
				Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Type: methodRegex, Method: ptr.To(re)}}}})
		},
	}
	for name, hostileRoute := range fields {
		for _, re := range hostileRegexes {
			t.Run(fmt.Sprintf("%s %s", name, re[:min(len(re), 24)]), func(t *testing.T) {
				good := httpRoute("good", 2, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web"),
					Matches: []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Type: headerRegex, Name: "X-Match", Value: "^yes$"}}}}})
				in := graph.Inputs{Gateway: gateway(allNamespaces(httpListener("http", 80, ""))), Services: tenantServices("web"),
					HTTPRoutes: []*gatewayv1.HTTPRoute{good}}
				h, g := hostileRoute(re)
				if h != nil {
					in.HTTPRoutes = append(in.HTTPRoutes, inTenant(h))
				} else {
					in.GRPCRoutes = append(in.GRPCRoutes, inTenant(g))
				}
				tr := Translate(t.Context(), in)
				for _, rt := range tr.Routes {
					got := byType(rt.Parents[0].Conditions)["Accepted"]
					switch {
					case rt.Key.Namespace == ns && got != "True/Accepted":
						t.Errorf("the other tenant's route: Accepted %s, want True/Accepted", got)
					case rt.Key.Namespace == tenant && got != "False/UnsupportedValue":
						t.Errorf("the hostile route: Accepted %s, want False/UnsupportedValue", got)
					}
				}
				if !slices.ContainsFunc(tr.Spec.Config.Servers[0].Locations, func(l v1beta1.Location) bool { return l.Match != nil && l.Name == "httproute/infra/good" }) {
					t.Errorf("the other tenant's location is not served: %+v", tr.Spec.Config.Servers[0].Locations)
				}
				if _, err := checkInstance(t.Context(), in.Gateway, tr.Spec); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestAStreamRouteTheRulesRefuseIsLeftOutAlone: a TCPRoute whose
// backends the instance cannot hold (more than a stream's 16) is not
// accepted and says why, an older TCPRoute of another listener and a
// UDPRoute keep their streams, and the instance passes the rules.
func TestAStreamRouteTheRulesRefuseIsLeftOutAlone(t *testing.T) {
	gw := gateway(allNamespaces(gatewayv1.Listener{Name: "pg", Port: 5432, Protocol: gatewayv1.TCPProtocolType}),
		allNamespaces(gatewayv1.Listener{Name: "mq", Port: 5672, Protocol: gatewayv1.TCPProtocolType}),
		allNamespaces(gatewayv1.Listener{Name: "dns", Port: 53, Protocol: gatewayv1.UDPProtocolType}))
	hostile := inTenant(tcpRoute("hostile", 1, "mq", "mq"))
	for range 16 {
		hostile.Spec.Rules = append(hostile.Spec.Rules, gatewayv1.TCPRouteRule{BackendRefs: backendRefs("mq", 5672)})
	}
	in := graph.Inputs{Gateway: gw, Services: tenantServices("pg", "mq", "coredns"),
		StreamRoutes: []graph.Object{tcpRoute("pg", 2, "pg", "pg"), hostile, udpRoute("dns", 3, "dns", "coredns")}}
	tr := Translate(t.Context(), in)
	for _, rt := range tr.Routes {
		got := byType(rt.Parents[0].Conditions)["Accepted"]
		want := "True/Accepted"
		if rt.Key.Name == "hostile" {
			want = "False/UnsupportedValue"
			if msg := rt.Parents[0].Conditions[0].Message; !strings.Contains(msg, "backends: Too many") {
				t.Errorf("the hostile route's message %q does not say what it breaks", msg)
			}
		}
		if got != want {
			t.Errorf("%s %s: Accepted %s, want %s", rt.Kind, rt.Key.Name, got, want)
		}
	}
	var ports []string
	for _, s := range tr.Spec.Config.Streams {
		ports = append(ports, s.Port)
	}
	if !slices.Equal(ports, []string{"p5432", "u53"}) {
		t.Errorf("streams on %v, want p5432 and u53", ports)
	}
	if _, err := checkInstance(t.Context(), gw, tr.Spec); err != nil {
		t.Error(err)
	}
}

// TestWeightsAboveTheInstancesBoundKeepTheirShares: Gateway API allows
// weights up to 1,000,000, an instance's backend 1,000; a route's weights
// are scaled in proportion (a share above 0 stays above 0), on streams as
// on HTTP, and the route is served.
func TestWeightsAboveTheInstancesBoundKeepTheirShares(t *testing.T) {
	refs := func(weights ...int32) []gatewayv1.BackendRef {
		var out []gatewayv1.BackendRef
		for i, w := range weights {
			ref := backendRefs(fmt.Sprintf("b%d", i), 5432)[0]
			ref.Weight = ptr.To(w)
			out = append(out, ref)
		}
		return out
	}
	for _, tc := range []struct {
		weights, want []int32
	}{
		{[]int32{1000000, 1}, []int32{1000, 1}},
		{[]int32{1000000, 500000, 0}, []int32{1000, 500, 0}},
		{[]int32{3000, 1000}, []int32{1000, 333}},
		{[]int32{1000, 7}, []int32{1000, 7}},
	} {
		t.Run(fmt.Sprint(tc.weights), func(t *testing.T) {
			rt := tcpRoute("pg", 1, "pg", "b0")
			rt.Spec.Rules[0].BackendRefs = refs(tc.weights...)
			in := graph.Inputs{Gateway: gateway(gatewayv1.Listener{Name: "pg", Port: 5432, Protocol: gatewayv1.TCPProtocolType}),
				Services: services("b0", "b1", "b2"), StreamRoutes: []graph.Object{rt}}
			tr := Translate(t.Context(), in)
			if got := byType(tr.Routes[0].Parents[0].Conditions)["Accepted"]; got != "True/Accepted" {
				t.Fatalf("Accepted %s: %v", got, tr.Routes[0].Parents[0].Conditions)
			}
			var got []int32
			for _, b := range tr.Spec.Config.Streams[0].Backends {
				got = append(got, *b.Weight)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("weights %v, want %v", got, tc.want)
			}
			if _, err := checkInstance(t.Context(), in.Gateway, tr.Spec); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestARouteOlderRoutesTakeEntirelyIsToldSo: a younger HTTPRoute whose
// one match an older route of another namespace has, and a younger
// TCPRoute on a listener an older one takes, stay accepted (Gateway API's
// precedence), and their Accepted condition says the older routes serve
// their traffic; a route that adds a match of its own is told nothing of
// the kind.
func TestARouteOlderRoutesTakeEntirelyIsToldSo(t *testing.T) {
	gw := gateway(allNamespaces(httpListener("http", 80, "")), allNamespaces(gatewayv1.Listener{Name: "pg", Port: 5432, Protocol: gatewayv1.TCPProtocolType}))
	in := graph.Inputs{Gateway: gw, Services: tenantServices("web", "pg"),
		HTTPRoutes: []*gatewayv1.HTTPRoute{
			httpRoute("old", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/app"), BackendRefs: toService("web")}),
			inTenant(httpRoute("same", 2, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/app"), BackendRefs: toService("web")})),
			inTenant(httpRoute("more", 3, nil, gatewayv1.HTTPRouteRule{Matches: append(prefix("/app"), prefix("/more")...), BackendRefs: toService("web")})),
		},
		StreamRoutes: []graph.Object{tcpRoute("pg-old", 1, "pg", "pg"), inTenant(tcpRoute("pg-new", 2, "pg", "pg"))}}
	overridden := conditions.RouteAcceptedOverridden(0).Message
	tr := Translate(t.Context(), in)
	for _, rt := range tr.Routes {
		c := rt.Parents[0].Conditions[0]
		want := rt.Key.Name == "same" || rt.Key.Name == "pg-new"
		if c.Status != metav1.ConditionTrue || (c.Message == overridden) != want {
			t.Errorf("%s %s: Accepted %s %q, want True and told it is overridden: %v", rt.Kind, rt.Key.Name, c.Status, c.Message, want)
		}
	}
	// What each placed, as status.routing lists it: the overridden ones
	// nothing.
	placed := map[string]graph.Placement{}
	for _, r := range tr.Graph.Routes {
		placed[r.Name()] = r.Placed
	}
	want := map[string]graph.Placement{
		"httproute/infra/old": {Servers: 1, Locations: 1}, "httproute/team-b/same": {}, "httproute/team-b/more": {Servers: 1, Locations: 1},
		"tcproute/infra/pg-old": {Streams: 1}, "tcproute/team-b/pg-new": {},
	}
	if diff := cmp.Diff(want, placed); diff != "" {
		t.Errorf("what each route placed (-want +got):\n%s", diff)
	}
}
