package gateway

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/status"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
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

// grpcRoute is a GRPCRoute in ns, created at minute age, to the Gateway gw.
func grpcRoute(name string, age int, rules ...gatewayv1.GRPCRouteRule) *gatewayv1.GRPCRoute {
	return &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))},
		Spec: gatewayv1.GRPCRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}, Rules: rules},
	}
}

func toGRPCService(name string) []gatewayv1.GRPCBackendRef {
	return []gatewayv1.GRPCBackendRef{{BackendRef: toService(name)[0].BackendRef}}
}

// grpcTo is l sending to service with gRPC.
func grpcTo(l v1beta1.Location, service string) v1beta1.Location {
	l.Proxy = &v1beta1.ProxyLocation{BackendProtocol: "GRPC", Backends: []v1beta1.Backend{{Service: service, Port: 8080, Weight: ptr.To[int32](1)}}}
	return l
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

func withTimeouts(l v1beta1.Location, request, backendRequest string) v1beta1.Location {
	l.Proxy.Timeouts = &v1beta1.ProxyTimeouts{Request: request, BackendRequest: backendRequest}
	return l
}

func withMirrors(l v1beta1.Location, mirrors ...v1beta1.Mirror) v1beta1.Location {
	l.Proxy.Mirrors = mirrors
	return l
}

func withCORS(l v1beta1.Location, c v1beta1.CORS) v1beta1.Location {
	l.CORS = &c
	return l
}

// asTheCRDDefaultsThem are locations as the graph keeps them, with the
// defaults the NginxOperator's schema gives them (the graph checks each,
// and the instance's check takes them as they are).
func asTheCRDDefaultsThem(t *testing.T, locations []v1beta1.Location) []v1beta1.Location {
	t.Helper()
	out := make([]v1beta1.Location, len(locations))
	for i, l := range locations {
		checked, errs := validation.RoutedLocation(t.Context(), l)
		if len(errs) > 0 {
			t.Fatalf("a location the test wants breaks the NginxOperator's rules: %v", errs.ToAggregate())
		}
		out[i] = checked
	}
	return out
}

// withTheCRDsDefaults is spec with its servers' locations as
// asTheCRDDefaultsThem has them.
func withTheCRDsDefaults(t *testing.T, spec v1beta1.NginxOperatorSpec) v1beta1.NginxOperatorSpec {
	t.Helper()
	spec.Config.Servers = slices.Clone(spec.Config.Servers)
	for i := range spec.Config.Servers {
		spec.Config.Servers[i].Locations = asTheCRDDefaultsThem(t, spec.Config.Servers[i].Locations)
	}
	return spec
}

// ignoreRouteNames leaves out the locations' names, which
// TestTranslateNamesEveryLocationAfterItsRoute checks.
var ignoreRouteNames = cmpopts.IgnoreFields(v1beta1.Location{}, "Name")

// TestTranslateNamesEveryLocationAfterItsRoute: each location of a rule
// is named after its route, kind, namespace and name (the route label of
// the request metrics), a rule answering 500 for a missing backend too;
// the Gateway's own 404 has no name.
func TestTranslateNamesEveryLocationAfterItsRoute(t *testing.T) {
	got := Translate(t.Context(), graph.Inputs{
		Gateway: gateway(httpListener("http", 80, "")),
		HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("shop", 1, nil,
			gatewayv1.HTTPRouteRule{Matches: prefix("/cart"), BackendRefs: toService("cart")},
			gatewayv1.HTTPRouteRule{Matches: prefix("/gone"), BackendRefs: toService("missing")})},
		GRPCRoutes: []*gatewayv1.GRPCRoute{grpcRoute("echo", 2, gatewayv1.GRPCRouteRule{BackendRefs: toGRPCService("echo")})},
		Services:   services("cart", "echo"),
	})
	names := map[string]string{}
	for _, s := range got.Spec.Config.Servers {
		for _, l := range s.Locations {
			names[l.Path] = l.Name
		}
	}
	want := map[string]string{"/cart": "httproute/infra/shop", "/gone": "httproute/infra/shop", "/": "grpcroute/infra/echo"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("location names by path (-want +got):\n%s", diff)
	}
}

var notFound = v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}}

// byType are a parent status's conditions as type=status/reason.
func byType(cs []metav1.Condition) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestTranslateMakesOneServerPerPortAndHostnameWithEachRoutesRules(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         graph.Inputs
		want       v1beta1.NginxOperatorSpec
		wantRoutes map[string]map[string]string // route -> condition type -> status/reason
	}{{
		name: "two routes on the catch-all listener: the older route's rule first, 404 for the rest",
		in: graph.Inputs{
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
		in: graph.Inputs{
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
		in: graph.Inputs{
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
		in: graph.Inputs{
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
	}, {
		name: "filters of a backendRef, not served, make the route not accepted; the other route serves",
		in: graph.Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{
				httpRoute("good", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/good"), BackendRefs: toService("a")}),
				httpRoute("filtered", 2, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/filtered"), BackendRefs: []gatewayv1.HTTPBackendRef{{
					BackendRef: toService("a")[0].BackendRef,
					Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
						RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Canary", Value: "1"}}}}},
				}}}),
			},
			Services: services("a"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true,
				Locations: []v1beta1.Location{proxy("/good", "a"), notFound}}}},
		},
		wantRoutes: map[string]map[string]string{
			"good":     {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
			"filtered": {"Accepted": "False/UnsupportedValue", "ResolvedRefs": "True/ResolvedRefs"},
		},
	}, {
		name: "a rule's timeouts bound its proxy, to the millisecond",
		in: graph.Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("r", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("a"),
				Timeouts: &gatewayv1.HTTPRouteTimeouts{Request: ptr.To(gatewayv1.Duration("2s")), BackendRequest: ptr.To(gatewayv1.Duration("500ms"))}})},
			Services: services("a"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true,
				Locations: []v1beta1.Location{withTimeouts(proxy("/", "a"), "2s", "500ms")}}}},
		},
		wantRoutes: map[string]map[string]string{"r": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}},
	}, {
		name: "mirrors: one to a Service that exists with its fraction, one to a missing Service dropped and told",
		in: graph.Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("r", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("a"),
				Filters: []gatewayv1.HTTPRouteFilter{
					{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
						BackendRef: toService("shadow")[0].BackendObjectReference, Fraction: &gatewayv1.Fraction{Numerator: 1}}},
					{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
						BackendRef: toService("gone")[0].BackendObjectReference}},
				}})},
			Services: services("a", "shadow"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true,
				Locations: []v1beta1.Location{withMirrors(proxy("/", "a"),
					v1beta1.Mirror{Service: "shadow", Port: 8080, Fraction: &v1beta1.Fraction{Numerator: 1, Denominator: 100}})}}}},
		},
		wantRoutes: map[string]map[string]string{"r": {"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"}},
	}, {
		name: "CORS: a day at most; exposeHeaders '*' with credentials refused",
		in: graph.Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{
				httpRoute("cors", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/cors"), BackendRefs: toService("a"),
					Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
						AllowOrigins: []gatewayv1.CORSOrigin{"https://*.example.com"}, AllowCredentials: ptr.To(true),
						AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"*"}, ExposeHeaders: []gatewayv1.HTTPHeaderName{"X-Trace"}, MaxAge: 604800}}}}),
				httpRoute("star", 2, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/star"), BackendRefs: toService("a"),
					Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
						AllowOrigins: []gatewayv1.CORSOrigin{"*"}, AllowCredentials: ptr.To(true), ExposeHeaders: []gatewayv1.HTTPHeaderName{"*"}}}}}),
			},
			Services: services("a"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true,
				Locations: []v1beta1.Location{withCORS(proxy("/cors", "a"), v1beta1.CORS{AllowOrigins: []string{"https://*.example.com"}, AllowCredentials: true,
					AllowMethods: []string{"*"}, ExposeHeaders: []string{"X-Trace"}, MaxAgeSeconds: 86400}), notFound}}}},
		},
		wantRoutes: map[string]map[string]string{
			"cors": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
			"star": {"Accepted": "False/UnsupportedValue", "ResolvedRefs": "True/ResolvedRefs"},
		},
	}, {
		name: "a Host a header modifier sets becomes the rewrite's hostname (ingress2gateway's upstream-vhost), beside a path rewrite",
		in: graph.Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{httpRoute("vhost", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("a"),
				Filters: []gatewayv1.HTTPRouteFilter{
					{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
						Set: []gatewayv1.HTTPHeader{{Name: "host", Value: "Internal.Example.com"}, {Name: "X-Team", Value: "a"}}}},
					{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
						Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To("/v2")}}},
				}})},
			Services: services("a"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true,
				Locations: []v1beta1.Location{func() v1beta1.Location {
					l := proxy("/", "a")
					l.RequestHeaders = &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-Team", Value: "a"}}}
					l.Proxy.URLRewrite = &v1beta1.URLRewrite{Hostname: "internal.example.com",
						Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/v2")}}
					return l
				}()}}}},
		},
		wantRoutes: map[string]map[string]string{"vhost": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}},
	}, {
		name: "a GRPCRoute's method matches become paths of /service/method, sent with gRPC; its plain-text port speaks h2c",
		in: graph.Inputs{
			Gateway: gateway(httpListener("http", 80, "")),
			HTTPRoutes: []*gatewayv1.HTTPRoute{
				httpRoute("web", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/"), BackendRefs: toService("web")}),
			},
			GRPCRoutes: []*gatewayv1.GRPCRoute{grpcRoute("echo", 1,
				gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{
					{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("echo.Echo"), Method: ptr.To("Say")}},
					{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("echo.Admin")},
						Headers: []gatewayv1.GRPCHeaderMatch{{Name: "x-team", Value: "ops"}}},
					{Method: &gatewayv1.GRPCMethodMatch{Method: ptr.To("Health.Check")}},
					{Method: &gatewayv1.GRPCMethodMatch{Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression), Service: ptr.To("a|b")}},
				}, BackendRefs: toGRPCService("echo")},
			)},
			Services: services("web", "echo"),
		},
		want: v1beta1.NginxOperatorSpec{
			Ports: []v1beta1.Port{{Name: "p80", ContainerPort: 8080, ServicePort: 80, H2C: true}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true, Locations: []v1beta1.Location{
				proxy("/", "web"),
				grpcTo(v1beta1.Location{Path: "/echo.Echo/Say", PathType: v1beta1.PathExact}, "echo"),
				grpcTo(v1beta1.Location{Path: "/echo.Admin", PathType: v1beta1.PathPrefixElements,
					Match: &v1beta1.RequestMatch{Headers: []v1beta1.HeaderMatch{{Name: "x-team", Value: "ops"}}}}, "echo"),
				grpcTo(v1beta1.Location{Path: `/[^/]+/Health\.Check`, PathType: v1beta1.PathRegularExpression}, "echo"),
				grpcTo(v1beta1.Location{Path: "/(?:a|b)/(?:[^/]+)", PathType: v1beta1.PathRegularExpression}, "echo"),
			}}}},
		},
		wantRoutes: map[string]map[string]string{
			"web":  {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
			"echo": {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Translate(t.Context(), tc.in)
			servers := got.Spec
			// The instance stage's own settings have tests of their own
			// (TestAGatewaysInfrastructureMetadataReachesEveryChild, and
			// instance's TestAGatewaysInstanceHasOneReplicaUnlessItsParametersSay).
			servers.ChildMetadata, servers.Replicas = v1beta1.ChildMetadata{}, nil
			if diff := cmp.Diff(withTheCRDsDefaults(t, tc.want), servers, ignoreRouteNames); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			gotRoutes := map[string]map[string]string{}
			for _, r := range got.Routes {
				for _, p := range r.Parents {
					gotRoutes[r.Key.Name] = byType(p.Conditions)
				}
			}
			if diff := cmp.Diff(tc.wantRoutes, gotRoutes); diff != "" {
				t.Errorf("route conditions (-want +got):\n%s", diff)
			}
			// The instance is one the CRD and the controller admit.
			validationtest.Spec(t, got.Spec)
		})
	}
}

func withHostname(l gatewayv1.Listener, host string) gatewayv1.Listener {
	l.Hostname = ptr.To(gatewayv1.Hostname(host))
	return l
}

func TestListenerStatusesSayWhatIsWrongWithTheSpecsReasons(t *testing.T) {
	https := gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{
		CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "missing"}}}}
	kinds := httpListener("kinds", 8080, "")
	kinds.AllowedRoutes = &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "FooRoute"}, {Kind: graph.KindHTTPRoute}}}
	stream := func(name string, port gatewayv1.PortNumber, protocol gatewayv1.ProtocolType, mode gatewayv1.TLSModeType) gatewayv1.Listener {
		l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: protocol}
		if mode != "" {
			l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr.To(mode)}
		}
		return l
	}
	tr := Translate(t.Context(), graph.Inputs{Gateway: gateway(httpListener("a", 80, ""), gatewayv1.Listener{Name: "b", Port: 80, Protocol: gatewayv1.HTTPSProtocolType}, https, kinds,
		stream("sctp", 9000, "example.com/sctp", ""),
		stream("terminate", 9443, gatewayv1.TLSProtocolType, gatewayv1.TLSModeTerminate),
		stream("mixed-terminate", 9444, gatewayv1.TLSProtocolType, gatewayv1.TLSModeTerminate),
		withHostname(stream("mixed-passthrough", 9444, gatewayv1.TLSProtocolType, gatewayv1.TLSModePassthrough), "p.example.com"),
		withHostname(stream("passthrough", 443, gatewayv1.TLSProtocolType, gatewayv1.TLSModePassthrough), "db.example.com"),
		stream("dns-tcp", 53, gatewayv1.TCPProtocolType, ""), stream("dns-udp", 53, gatewayv1.UDPProtocolType, ""),
		stream("db", 5432, gatewayv1.TCPProtocolType, ""), stream("db-too", 5432, gatewayv1.TCPProtocolType, ""))})
	fine := map[string]string{"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "True/Programmed"}
	twice := map[string]string{"Accepted": "True/Accepted", "Conflicted": "True/HostnameConflict", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "False/Invalid"}
	want := map[string]map[string]string{
		"a":     {"Accepted": "True/Accepted", "Conflicted": "True/ProtocolConflict", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "False/Invalid"},
		"b":     {"Accepted": "True/Accepted", "Conflicted": "True/ProtocolConflict", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"},
		"https": {"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"},
		"kinds": {"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "False/InvalidRouteKinds", "Programmed": "True/Programmed"},
		"sctp":  {"Accepted": "False/UnsupportedProtocol", "Conflicted": "False/NoConflicts", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "False/Invalid"},
		// A TLS listener that terminates needs its certificate, as HTTPS;
		// one port's TLS listeners all terminate or all pass through.
		"terminate":         {"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"},
		"mixed-terminate":   {"Accepted": "False/ProtocolConflict", "Conflicted": "False/NoConflicts", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"},
		"mixed-passthrough": {"Accepted": "False/ProtocolConflict", "Conflicted": "False/NoConflicts", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "False/Invalid"},
		// TLS passed through shares 443 with HTTPS by name; TCP and UDP
		// share a number; two TCP listeners cannot share one.
		"passthrough": fine, "dns-tcp": fine, "dns-udp": fine, "db": twice, "db-too": twice,
	}
	got := map[string]map[string]string{}
	for _, l := range tr.Graph.Listeners {
		s := status.Listener(l, 3, true)
		got[string(s.Name)] = byType(s.Conditions)
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
		name := graph.InstanceName(gw)
		if len(name) > 47 || name[0] < 'a' || name[0] > 'z' || strings.HasSuffix(name, "-pods") {
			t.Errorf("Gateway %s: instance %q, want at most 47 characters starting with a letter", gw, name)
		}
	}
	if graph.InstanceName("web") != "web-gateway" {
		t.Errorf("graph.InstanceName(web) = %q, want web-gateway", graph.InstanceName("web"))
	}
}

func httpsListener(name string, port int, host string, cert gatewayv1.SecretObjectReference) gatewayv1.Listener {
	l := httpListener(name, port, host)
	l.Protocol = gatewayv1.HTTPSProtocolType
	l.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{cert}}
	return l
}

// certRef names Secret name in namespace namespace ("" for the Gateway's).
func certRef(namespace, name string) gatewayv1.SecretObjectReference {
	ref := gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(name)}
	if namespace != "" {
		ref.Namespace = ptr.To(gatewayv1.Namespace(namespace))
	}
	return ref
}

// secretGrant is a ReferenceGrant in namespace letting Gateways of from use
// the Secret name (every Secret of namespace when name is "").
func secretGrant(namespace, from, name string) gatewayv1.ReferenceGrant {
	to := gatewayv1.ReferenceGrantTo{Group: "", Kind: "Secret"}
	if name != "" {
		to.Name = ptr.To(gatewayv1.ObjectName(name))
	}
	return gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: "grant", Namespace: namespace},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: graph.Group, Kind: "Gateway", Namespace: gatewayv1.Namespace(from)}},
			To:   []gatewayv1.ReferenceGrantTo{to},
		},
	}
}

func TestTranslateServesACertificateOfAnotherNamespaceFromACopyWhereAGrantPermitsIt(t *testing.T) {
	const other = "certs"
	source := types.NamespacedName{Namespace: other, Name: "web-tls"}
	copyName := graph.CertificateCopyName("gw", source)
	servable := map[types.NamespacedName]bool{source: true, {Namespace: ns, Name: "local-tls"}: true}
	grants := func(gs ...gatewayv1.ReferenceGrant) map[string][]gatewayv1.ReferenceGrant {
		out := map[string][]gatewayv1.ReferenceGrant{}
		for _, g := range gs {
			out[g.Namespace] = append(out[g.Namespace], g)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		listeners []gatewayv1.Listener
		grants    map[string][]gatewayv1.ReferenceGrant
		secrets   map[types.NamespacedName]bool
		// wantTLS are the servers' tls.SecretName, wantCopies the copies
		// asked for, wantResolved the listener https's ResolvedRefs.
		wantTLS      []string
		wantCopies   map[string]types.NamespacedName
		wantResolved string
	}{{
		name:         "a grant naming the Secret: the server takes the copy, which is asked for",
		listeners:    []gatewayv1.Listener{httpsListener("https", 443, "", certRef(other, "web-tls"))},
		grants:       grants(secretGrant(other, ns, "web-tls")),
		secrets:      servable,
		wantTLS:      []string{copyName},
		wantCopies:   map[string]types.NamespacedName{copyName: source},
		wantResolved: "True/ResolvedRefs",
	}, {
		name: "a grant of every Secret of the namespace; two listeners of the Secret share one copy",
		listeners: []gatewayv1.Listener{httpsListener("https", 443, "", certRef(other, "web-tls")),
			httpsListener("alt", 8443, "", certRef(other, "web-tls"))},
		grants:       grants(secretGrant(other, ns, "")),
		secrets:      servable,
		wantTLS:      []string{copyName, copyName},
		wantCopies:   map[string]types.NamespacedName{copyName: source},
		wantResolved: "True/ResolvedRefs",
	}, {
		name:         "no grant: RefNotPermitted, nothing served or copied",
		listeners:    []gatewayv1.Listener{httpsListener("https", 443, "", certRef(other, "web-tls"))},
		secrets:      servable,
		wantResolved: "False/RefNotPermitted",
	}, {
		name:         "a grant of another Secret: RefNotPermitted",
		listeners:    []gatewayv1.Listener{httpsListener("https", 443, "", certRef(other, "web-tls"))},
		grants:       grants(secretGrant(other, ns, "other-tls")),
		secrets:      servable,
		wantResolved: "False/RefNotPermitted",
	}, {
		name:         "a grant to Gateways of another namespace: RefNotPermitted",
		listeners:    []gatewayv1.Listener{httpsListener("https", 443, "", certRef(other, "web-tls"))},
		grants:       grants(secretGrant(other, "elsewhere", "web-tls")),
		secrets:      servable,
		wantResolved: "False/RefNotPermitted",
	}, {
		name:         "a granted Secret without a key pair: InvalidCertificateRef, no copy",
		listeners:    []gatewayv1.Listener{httpsListener("https", 443, "", certRef(other, "web-tls"))},
		grants:       grants(secretGrant(other, ns, "web-tls")),
		wantResolved: "False/InvalidCertificateRef",
	}, {
		name: "a granted Secret on a conflicted listener: not served, no copy",
		listeners: []gatewayv1.Listener{httpsListener("https", 443, "a.test", certRef(other, "web-tls")),
			httpsListener("twin", 443, "a.test", certRef(ns, "local-tls"))},
		grants:       grants(secretGrant(other, ns, "web-tls")),
		secrets:      servable,
		wantResolved: "True/ResolvedRefs",
	}, {
		name:         "a Secret of the Gateway's namespace is served as it is",
		listeners:    []gatewayv1.Listener{httpsListener("https", 443, "", certRef("", "local-tls"))},
		secrets:      servable,
		wantTLS:      []string{"local-tls"},
		wantResolved: "True/ResolvedRefs",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := Translate(t.Context(), graph.Inputs{Gateway: gateway(tc.listeners...), Grants: tc.grants, Secrets: tc.secrets})
			var gotTLS []string
			for _, s := range tr.Spec.Config.Servers {
				if s.TLS != nil {
					gotTLS = append(gotTLS, s.TLS.SecretName)
				}
			}
			if diff := cmp.Diff(tc.wantTLS, gotTLS); diff != "" {
				t.Errorf("servers' tls.SecretName (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCopies, tr.Graph.CertificateCopies); diff != "" {
				t.Errorf("certificate copies (-want +got):\n%s", diff)
			}
			for _, l := range tr.Graph.Listeners {
				if l.Name != "https" {
					continue
				}
				if got := byType(status.Listener(l, 3, true).Conditions)["ResolvedRefs"]; got != tc.wantResolved {
					t.Errorf("listener https ResolvedRefs %s, want %s (%s)", got, tc.wantResolved, l.RefMessage)
				}
			}
			validationtest.Spec(t, tr.Spec)
		})
	}
}

func TestCertificateCopyNamesAreDNSLabelsDistinctPerGatewayAndSecret(t *testing.T) {
	dnsLabel := regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	long := strings.Repeat("g", 253)
	for _, tc := range []struct {
		gateway string
		source  types.NamespacedName
		prefix  string
	}{
		{"web", types.NamespacedName{Namespace: "certs", Name: "web-tls"}, "web-gateway-cert-"},
		{"web", types.NamespacedName{Namespace: "certs", Name: "other-tls"}, "web-gateway-cert-"},
		{"web", types.NamespacedName{Namespace: "other", Name: "web-tls"}, "web-gateway-cert-"},
		{"api", types.NamespacedName{Namespace: "certs", Name: "web-tls"}, "api-gateway-cert-"},
		{"1st", types.NamespacedName{Namespace: "certs", Name: "web-tls"}, "gateway-1st-cert-"},
		{long, types.NamespacedName{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("s", 253)}, graph.InstanceName(long) + "-cert-"},
		{long + "x", types.NamespacedName{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("s", 253)}, graph.InstanceName(long+"x") + "-cert-"},
	} {
		name := graph.CertificateCopyName(tc.gateway, tc.source)
		if !dnsLabel.MatchString(name) || len(name) > 63 || !strings.HasPrefix(name, tc.prefix) {
			t.Errorf("graph.CertificateCopyName(%.20s…, %.40s…) = %q: want a DNS label of at most 63 characters starting %q", tc.gateway, tc.source, name, tc.prefix)
		}
		if again := graph.CertificateCopyName(tc.gateway, tc.source); again != name {
			t.Errorf("graph.CertificateCopyName(%.20s…, %.40s…) is %q, then %q", tc.gateway, tc.source, name, again)
		}
		// The CRD's pattern for tls.SecretName.
		validationtest.Spec(t, v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1),
			Ports:  []v1beta1.Port{{Name: "https", ContainerPort: 8443}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "https", TLS: &v1beta1.TLS{SecretName: name}}}}})
	}
	seen := map[string]string{}
	for _, gw := range []string{"web", "api", long, long + "x"} {
		for _, src := range []types.NamespacedName{{Namespace: "a", Name: "b-c"}, {Namespace: "a-b", Name: "c"}, {Namespace: "a", Name: "b"}, {Namespace: "b", Name: "a"}} {
			name := graph.CertificateCopyName(gw, src)
			what := fmt.Sprintf("Gateway %.10s… Secret %s", gw, src)
			if was, taken := seen[name]; taken {
				t.Errorf("%s and %s have the same copy %s", was, what, name)
			}
			seen[name] = what
		}
	}
}

// The instance holds graph.MaxServers servers of graph.MaxLocations locations. A
// route past that is refused with NoRoom, as a whole, and the older routes
// keep their place: the instance the rest makes passes every rule of the
// CRD, so changes to them still apply.
func TestARouteTheInstanceHasNoRoomForIsRefusedAndTheOlderOnesServe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		listener gatewayv1.Listener
		route    func(i int) *gatewayv1.HTTPRoute
		// fit is how many of the routes, oldest first, have room.
		fit int
	}{{
		name:     "a path each on one server: 63 routes and the 404",
		listener: httpListener("http", 80, ""),
		route: func(i int) *gatewayv1.HTTPRoute {
			return httpRoute(fmt.Sprintf("r%03d", i), i, nil, gatewayv1.HTTPRouteRule{Matches: prefix(fmt.Sprintf("/r%03d", i)), BackendRefs: toService("web")})
		},
		fit: graph.MaxLocations - 1,
	}, {
		name:     "a hostname each: a server each beside the listener's and the port's default",
		listener: httpListener("http", 80, "*.example.com"),
		route: func(i int) *gatewayv1.HTTPRoute {
			return httpRoute(fmt.Sprintf("r%03d", i), i, []string{fmt.Sprintf("%d.example.com", i)}, gatewayv1.HTTPRouteRule{BackendRefs: toService("web")})
		},
		fit: graph.MaxServers - 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := graph.Inputs{Gateway: gateway(tc.listener), Services: services("web")}
			for i := range tc.fit + 5 {
				in.HTTPRoutes = append(in.HTTPRoutes, tc.route(i))
			}
			tr := Translate(t.Context(), in)
			routedValid(t, tr.Spec)
			for i, rt := range tr.Routes {
				want := "True/Accepted"
				if i >= tc.fit {
					want = "False/" + string(conditions.RouteReasonNoRoom)
				}
				if got := byType(rt.Parents[0].Conditions)["Accepted"]; got != want {
					t.Errorf("route %s (%d of %d that fit): Accepted %s, want %s", rt.Key.Name, i+1, tc.fit, got, want)
				}
			}
			if got := tr.Graph.Listeners[0].Attached; got != int32(tc.fit) {
				t.Errorf("the listener's attachedRoutes = %d, want the %d routes that fit", got, tc.fit)
			}
			// The room an older route holds is its own: the newest
			// route that fits still serves after the refused ones.
			last := fmt.Sprintf("r%03d", tc.fit-1)
			served := false
			for _, s := range tr.Spec.Config.Servers {
				for _, l := range s.Locations {
					served = served || l.Proxy != nil && (l.Path == "/"+last || slices.Contains(s.ServerNames, fmt.Sprintf("%d.example.com", tc.fit-1)))
				}
			}
			if !served {
				t.Errorf("route %s, the last that fits, is not in the spec", last)
			}
		})
	}
}

// Gateway API allows a Gateway 64 listeners: with a hostname and a
// certificate each, they all have a server of the instance and are
// programmed, and the instance passes every rule of the CRD.
func TestAGatewaysSixtyFourHTTPSListenersAreAllProgrammed(t *testing.T) {
	in := graph.Inputs{Secrets: map[types.NamespacedName]bool{}}
	var listeners []gatewayv1.Listener
	for i := range 64 {
		name := fmt.Sprintf("cert-%d", i)
		in.Secrets[types.NamespacedName{Namespace: ns, Name: name}] = true
		listeners = append(listeners, httpsListener(fmt.Sprintf("l%d", i), 443, fmt.Sprintf("h%d.example.com", i), certRef("", name)))
	}
	in.Gateway = gateway(listeners...)
	tr := Translate(t.Context(), in)
	routedValid(t, tr.Spec)
	for _, l := range tr.Graph.Listeners {
		got := byType(status.Listener(l, 3, true).Conditions)
		want := map[string]string{"Accepted": "True/Accepted", "Conflicted": "False/NoConflicts", "ResolvedRefs": "True/ResolvedRefs", "Programmed": "True/Programmed"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("listener %s (-want +got):\n%s", l.Name, diff)
		}
	}
	// Each hostname takes a server, and port 443 its default one.
	if got := len(tr.Spec.Config.Servers); got != 65 {
		t.Errorf("%d servers, want 65", got)
	}
}

// routedValid fails t unless spec, as a Gateway's instance, passes every
// rule of the NginxOperator CRD with a Gateway's room.
func routedValid(t *testing.T, spec v1beta1.NginxOperatorSpec) {
	t.Helper()
	obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web-gateway", Namespace: ns}, Spec: spec}
	if _, errs := validation.RoutedNginxOperator(context.Background(), obj); len(errs) > 0 {
		t.Fatalf("the instance breaks the CRD's rules: %v", errs.ToAggregate())
	}
}

// Listener isolation (Gateway API's GatewayHTTPListenerIsolation): a
// request belongs to the most specific listener of its port that matches
// its host, so a route of a less specific listener is not served for the
// hostnames a more specific one takes, even where the route names them.
func TestARouteIsNotServedForHostnamesAMoreSpecificListenerTakes(t *testing.T) {
	in := graph.Inputs{Gateway: gateway(httpListener("any", 80, ""), httpListener("wild", 80, "*.example.com"),
		httpListener("wild-foo", 80, "*.foo.example.com"), httpListener("abc-foo", 80, "abc.foo.example.com")),
		Services: services("web")}
	hosts := []string{"bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"}
	for i, l := range []string{"any", "wild", "wild-foo", "abc-foo"} {
		rt := httpRoute("to-"+l, i, hosts, gatewayv1.HTTPRouteRule{Matches: prefix("/" + l), BackendRefs: toService("web")})
		rt.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName(l))
		in.HTTPRoutes = append(in.HTTPRoutes, rt)
	}
	tr := Translate(t.Context(), in)
	got := map[string][]string{} // server name -> its routes' paths
	for _, s := range tr.Spec.Config.Servers {
		name := strings.Join(s.ServerNames, ",")
		for _, loc := range s.Locations {
			if loc.Proxy != nil {
				got[name] = append(got[name], loc.Path)
			}
		}
	}
	want := map[string][]string{
		"bar.com":             {"/any"},
		"*.example.com":       {"/wild"},
		"*.foo.example.com":   {"/wild-foo"},
		"abc.foo.example.com": {"/abc-foo"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes by server (-want +got):\n%s", diff)
	}
}

// A route whose locations the NginxOperator's rules refuse (a header
// nginx manages itself, which Gateway API lets a filter set) is left out
// and told why as it is translated; the instance without it passes them.
func TestARouteTheRulesRefuseIsLeftOutAndToldWhy(t *testing.T) {
	bad := gatewayv1.HTTPRouteRule{Matches: prefix("/bad"), BackendRefs: toService("web"), Filters: []gatewayv1.HTTPRouteFilter{{
		Type:                  gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "Connection", Value: "close"}}},
	}}}
	in := graph.Inputs{Gateway: gateway(httpListener("http", 80, "")), Services: services("web"), HTTPRoutes: []*gatewayv1.HTTPRoute{
		httpRoute("good", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/good"), BackendRefs: toService("web")}),
		httpRoute("bad", 2, nil, bad),
	}}
	tr := Translate(t.Context(), in)
	routedValid(t, tr.Spec)
	for _, rt := range tr.Routes {
		want := "True/Accepted"
		if rt.Key.Name == "bad" {
			want = "False/UnsupportedValue"
			if msg := rt.Parents[0].Conditions[0].Message; !strings.Contains(msg, "requestHeaders: Invalid value") {
				t.Errorf("route bad: message %q does not name the rule's field", msg)
			}
		}
		if got := byType(rt.Parents[0].Conditions)["Accepted"]; got != want {
			t.Errorf("route %s: Accepted %s, want %s", rt.Key.Name, got, want)
		}
	}
	if slices.ContainsFunc(tr.Spec.Config.Servers[0].Locations, func(l v1beta1.Location) bool { return l.Path == "/bad" }) {
		t.Error("the refused route's location is still in the spec")
	}
}

// A Gateway's spec.infrastructure labels and annotations, and the
// gateway-name label Gateway API finds a Gateway's objects by, are the
// instance's childMetadata: every child carries them.
func TestAGatewaysInfrastructureMetadataReachesEveryChild(t *testing.T) {
	gw := gateway(httpListener("http", 80, ""))
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{
		Labels:      map[gatewayv1.LabelKey]gatewayv1.LabelValue{"team": "a", graph.LabelGatewayName: "impostor"},
		Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"example.com/owner": "team-a"},
	}
	tr := Translate(t.Context(), graph.Inputs{Gateway: gw})
	want := v1beta1.ChildMetadata{
		Labels:      map[string]string{"team": "a", graph.LabelGatewayName: gw.Name},
		Annotations: map[string]string{"example.com/owner": "team-a"},
	}
	if diff := cmp.Diff(want, tr.Spec.ChildMetadata); diff != "" {
		t.Errorf("childMetadata (-want +got):\n%s", diff)
	}
	routedValid(t, tr.Spec)
}

// A Gateway whose parameters cannot be used is not accepted
// (InvalidParameters): Gateway API asks that such a Gateway be refused
// rather than run with other settings than it asked for. Its routes are
// told the Gateway is not served.
func TestAGatewayWithUnusableParametersIsRefused(t *testing.T) {
	gw := gateway(httpListener("http", 80, ""))
	why := "infrastructure.parametersRef names InvalidParameters invalid of group \"invalid.io\""
	tr := Translate(t.Context(), graph.Inputs{Gateway: gw, Services: services("web"), Parameters: graph.Parameters{Invalid: why}, HTTPRoutes: []*gatewayv1.HTTPRoute{
		httpRoute("web", 1, nil, gatewayv1.HTTPRouteRule{BackendRefs: toService("web")}),
	}})
	if tr.Graph.Accepted() || tr.Graph.Parameters.Invalid != why {
		t.Errorf("accepted %v, invalidParameters %q", tr.Graph.Accepted(), tr.Graph.Parameters.Invalid)
	}
	if got := byType(tr.Routes[0].Parents[0].Conditions)["Accepted"]; got != "False/Pending" {
		t.Errorf("the route: Accepted %s, want False/Pending", got)
	}
}
