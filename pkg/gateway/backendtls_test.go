package gateway

import (
	"cmp"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// policy is a BackendTLSPolicy in ns, created at minute age, naming
// service (and its port section, unless ""), trusting the ConfigMaps cas.
func policy(name string, age int, service, section, hostname string, cas ...gatewayv1.LocalObjectReference) gatewayv1.BackendTLSPolicy {
	target := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: gatewayv1.ObjectName(service)}}
	if section != "" {
		target.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	return gatewayv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 2, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))},
		Spec: gatewayv1.BackendTLSPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{target},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: gatewayv1.PreciseHostname(hostname), CACertificateRefs: cas}},
	}
}

func configMap(name string) gatewayv1.LocalObjectReference {
	return gatewayv1.LocalObjectReference{Kind: "ConfigMap", Name: gatewayv1.ObjectName(name)}
}

// TestBackendTLSPoliciesAreJudgedAsGatewayAPIHasIt: a policy trusting a
// ConfigMap of certificates is accepted; one naming another kind, or a
// ConfigMap without certificates, is not (NoValidCACertificate) and says
// which reference in ResolvedRefs; of two naming the same Service and port
// the younger is Conflicted; one naming a port and one naming the whole
// Service do not conflict, and each applies where it names.
func TestBackendTLSPoliciesAreJudgedAsGatewayAPIHasIt(t *testing.T) {
	sans := policy("sans", 7, "d", "", "d.example.com", configMap("ca"))
	sans.Spec.Validation.SubjectAltNames = []gatewayv1.SubjectAltName{{Type: gatewayv1.HostnameSubjectAltNameType, Hostname: "other.example.com"}}
	toPort := func(port int) []gatewayv1.HTTPBackendRef {
		refs := toService("a")
		refs[0].Port = ptr.To(gatewayv1.PortNumber(port))
		return refs
	}
	in := graph.Inputs{
		Gateway: gateway(httpListener("http", 80, "")),
		HTTPRoutes: []*gatewayv1.HTTPRoute{
			httpRoute("named-port", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/443"), BackendRefs: toPort(443)}),
			httpRoute("other-port", 2, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/8080"), BackendRefs: toPort(8080)}),
		},
		Services: services("a"),
		BackendTLSPolicies: []gatewayv1.BackendTLSPolicy{
			policy("younger", 2, "a", "", "b.example.com", configMap("ca")),
			policy("older", 1, "a", "", "a.example.com", configMap("ca")),
			policy("port", 3, "a", "https", "port.example.com", configMap("ca")),
			policy("kind", 4, "b", "", "b.example.com", gatewayv1.LocalObjectReference{Group: "invalid.io", Kind: "InvalidKind", Name: "x"}),
			policy("empty", 5, "c", "", "c.example.com", configMap("empty")),
			policy("second-good", 6, "e", "", "e.example.com", configMap("missing"), configMap("ca")),
			sans,
		},
		CAConfigMaps:     map[types.NamespacedName]bool{{Namespace: ns, Name: "ca"}: true, {Namespace: ns, Name: "empty"}: false},
		ServicePortNames: map[types.NamespacedName]map[int32]string{{Namespace: ns, Name: "a"}: {443: "https", 8080: "http"}},
	}
	g := graph.Build(t.Context(), in)
	reasons := map[string]string{}
	for key, v := range g.Policies {
		reasons[key.Name] = cmp.Or(string(v.Refused), "Accepted") + " " + cmp.Or(string(v.RefFault), "ResolvedRefs")
		if v.Generation != 2 {
			t.Errorf("%s: generation %d, want the policy's 2", key.Name, v.Generation)
		}
	}
	want := map[string]string{
		"older":       "Accepted ResolvedRefs",
		"younger":     "Conflicted ResolvedRefs",
		"port":        "Accepted ResolvedRefs",
		"kind":        "NoValidCACertificate InvalidKind",
		"empty":       "NoValidCACertificate InvalidCACertificateRef",
		"second-good": "Accepted InvalidCACertificateRef",
		"sans":        "Invalid ResolvedRefs",
	}
	if diff := gocmp.Diff(want, reasons); diff != "" {
		t.Errorf("Accepted and ResolvedRefs reasons (-want +got):\n%s", diff)
	}
	hostnames := map[string]string{}
	for _, l := range g.Placed.Servers[0].Locations {
		if l.Proxy != nil && l.Proxy.TLS != nil {
			hostnames[l.Path] = l.Proxy.TLS.Hostname
		}
	}
	if diff := gocmp.Diff(map[string]string{"/443": "port.example.com", "/8080": "a.example.com"}, hostnames); diff != "" {
		t.Errorf("the policy of each port's location, by its hostname (-want +got):\n%s", diff)
	}
}

// TestABackendTLSPolicyMakesItsBackendsLocationSpeakTLS: an accepted
// policy makes the rule's location HTTPS (gRPC over TLS for a GRPCRoute)
// with its hostname and CA; a backend whose policy is not accepted is not
// sent to in plain text (500); backends with different policies are
// refused, since a location speaks to all alike.
func TestABackendTLSPolicyMakesItsBackendsLocationSpeakTLS(t *testing.T) {
	in := graph.Inputs{
		Gateway: gateway(httpListener("http", 80, "")),
		HTTPRoutes: []*gatewayv1.HTTPRoute{
			httpRoute("secure", 1, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/secure"), BackendRefs: toService("tls")}),
			httpRoute("broken", 2, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/broken"), BackendRefs: toService("badca")}),
			httpRoute("mixed", 3, nil, gatewayv1.HTTPRouteRule{Matches: prefix("/mixed"), BackendRefs: append(toService("tls"), toService("plain")...)}),
		},
		GRPCRoutes: []*gatewayv1.GRPCRoute{grpcRoute("rpc", 4, gatewayv1.GRPCRouteRule{BackendRefs: toGRPCService("tls")})},
		Services:   services("tls", "badca", "plain"),
		BackendTLSPolicies: []gatewayv1.BackendTLSPolicy{
			policy("tls", 1, "tls", "", "tls.example.com", configMap("ca")),
			policy("badca", 1, "badca", "", "bad.example.com", configMap("nothing")),
		},
		CAConfigMaps: map[types.NamespacedName]bool{{Namespace: ns, Name: "ca"}: true},
	}
	got := Translate(t.Context(), in)
	tls := &v1beta1.BackendTLS{Hostname: "tls.example.com", CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "ca", Key: "ca.crt"}}
	secure := proxy("/secure", "tls")
	secure.Proxy.BackendProtocol, secure.Proxy.TLS = "HTTPS", tls
	rpc := grpcTo(v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements}, "tls")
	rpc.Proxy.BackendProtocol, rpc.Proxy.TLS = "GRPCS", tls
	want := []v1beta1.Location{secure,
		{Path: "/broken", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 500}},
		rpc}
	if diff := gocmp.Diff(asTheCRDDefaultsThem(t, want), got.Spec.Config.Servers[0].Locations, ignoreRouteNames); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}
	routes := map[string]string{}
	for _, r := range got.Routes {
		routes[r.Key.Name] = byType(r.Parents[0].Conditions)["Accepted"]
	}
	if routes["mixed"] != "False/UnsupportedValue" || routes["secure"] != "True/Accepted" {
		t.Errorf("route acceptance %v: want mixed refused, secure accepted", routes)
	}
}
