package gateway

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

func extensionRef(group, kind, name string) gatewayv1.HTTPRouteFilter {
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gatewayv1.LocalObjectReference{
		Group: gatewayv1.Group(group), Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(name)}}
}

// TestAnExtensionRefToAnNginxExternalAuthAuthenticatesTheRulesRequests:
// a rule naming an NginxExternalAuth of its route's namespace gets the
// filter's authentication, with the Service in that namespace; one that
// names a filter that does not exist, or another kind, answers 500 (Gateway
// API: never served without the filter) and its route's ResolvedRefs is
// False with the reason; a GRPCRoute's rule takes the filter too.
func TestAnExtensionRefToAnNginxExternalAuthAuthenticatesTheRulesRequests(t *testing.T) {
	oauth := &v1beta1.ExternalAuth{Service: "oauth2-proxy", Port: 4180, Path: "/oauth2/auth", TimeoutSeconds: 5,
		ResponseHeaders: []string{"X-Auth-Request-User"}, SignIn: &v1beta1.ExternalAuthSignIn{URL: "https://auth.example.com/oauth2/start", RedirectParameter: "rd"}}
	rule := func(path string, filters ...gatewayv1.HTTPRouteFilter) gatewayv1.HTTPRouteRule {
		return gatewayv1.HTTPRouteRule{Matches: prefix(path), Filters: filters, BackendRefs: toService("app")}
	}
	in := graph.Inputs{
		Gateway: gateway(httpListener("http", 80, "")),
		HTTPRoutes: []*gatewayv1.HTTPRoute{
			httpRoute("members", 1, nil, rule("/members", extensionRef("nginx.operator.dev", "NginxExternalAuth", "oauth"))),
			httpRoute("missing", 2, nil, rule("/missing", extensionRef("nginx.operator.dev", "NginxExternalAuth", "nothing"))),
			httpRoute("other-kind", 3, nil, rule("/other", extensionRef("example.com", "Snippet", "x"))),
		},
		GRPCRoutes: []*gatewayv1.GRPCRoute{grpcRoute("rpc", 4, gatewayv1.GRPCRouteRule{
			Filters:     []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterExtensionRef, ExtensionRef: extensionRef("nginx.operator.dev", "NginxExternalAuth", "oauth").ExtensionRef}},
			BackendRefs: toGRPCService("app")})},
		Services:      services("app", "oauth2-proxy"),
		ExternalAuths: map[types.NamespacedName]*v1beta1.ExternalAuth{{Namespace: ns, Name: "oauth"}: oauth},
	}
	got := Translate(t.Context(), in)
	auth := *oauth
	auth.Namespace = ns
	answers := map[string]string{}
	for _, s := range got.Spec.Config.Servers {
		for _, l := range s.Locations {
			switch {
			case l.Respond != nil:
				answers[l.Path] = "respond " + strconv.Itoa(int(l.Respond.Status))
			case l.ExternalAuth != nil:
				if diff := cmp.Diff(&auth, l.ExternalAuth); diff != "" {
					t.Errorf("location %s: externalAuth (-want +got):\n%s", l.Path, diff)
				}
				answers[l.Path] = "authenticated proxy"
			default:
				answers[l.Path] = "proxy"
			}
		}
	}
	want := map[string]string{"/members": "authenticated proxy", "/missing": "respond 500", "/other": "respond 500", "/": "authenticated proxy"}
	if diff := cmp.Diff(want, answers); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}
	routes := map[string]map[string]string{}
	for _, r := range got.Routes {
		for _, p := range r.Parents {
			routes[r.Key.Name] = byType(p.Conditions)
		}
	}
	wantRoutes := map[string]map[string]string{
		"members":    {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
		"missing":    {"Accepted": "True/Accepted", "ResolvedRefs": "False/FilterNotFound"},
		"other-kind": {"Accepted": "True/Accepted", "ResolvedRefs": "False/InvalidKind"},
		"rpc":        {"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"},
	}
	if diff := cmp.Diff(wantRoutes, routes); diff != "" {
		t.Errorf("route conditions (-want +got):\n%s", diff)
	}
}
