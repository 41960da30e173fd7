package graph

import (
	"fmt"
	"regexp"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/regex"
)

// KindGRPCRoute is Gateway API's gRPC route.
const KindGRPCRoute = gatewayv1.Kind("GRPCRoute")

var grpcRouteKind = RouteKind{
	Kind: KindGRPCRoute, Protocols: []gatewayv1.ProtocolType{gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType},
	New:     func() Object { return &gatewayv1.GRPCRoute{} },
	NewList: func() ObjectList { return &gatewayv1.GRPCRouteList{} },
	parts: func(o Object) RouteParts {
		rt := o.(*gatewayv1.GRPCRoute)
		return RouteParts{Meta: &rt.ObjectMeta, Parents: rt.Spec.ParentRefs, Hostnames: rt.Spec.Hostnames, Status: &rt.Status.RouteStatus}
	},
}

// grpcRule translates one rule of GRPCRoute rt, attached to Gateway gw:
// gRPC is HTTP/2 with the method in the path (/<service>/<method>), so a
// rule is the locations of an HTTPRoute rule whose paths come from its
// method matches, sending with the native gRPC proxy (grpc_pass).
func grpcRule(gw *gatewayv1.Gateway, rt *gatewayv1.GRPCRoute, rule gatewayv1.GRPCRouteRule, refs references) ruleOutcome {
	var out ruleOutcome
	handler := v1beta1.Location{Name: routeName("grpcroute", rt.Namespace, rt.Name)}
	resolved := true
	for _, f := range rule.Filters {
		if isExtensionRef(gatewayv1.HTTPRouteFilterType(f.Type), f.ExtensionRef) {
			resolved = out.externalAuthFilter(&handler, rt.Namespace, f.ExtensionRef, refs) && resolved
			continue
		}
		out.cannotServe(applyFilter(&handler, httpFilterOf(f)))
	}
	if resolved {
		var backendRefs []gatewayv1.BackendRef
		for _, b := range rule.BackendRefs {
			backendRefs = append(backendRefs, out.backendRef(b.BackendRef, len(b.Filters)))
		}
		backends, fault, message := resolveBackends(gw, KindGRPCRoute, rt.Namespace, backendRefs, refs)
		out.refFailed(fault, message)
		backends, tls := out.backendTLS(gw, backends, refs.tls)
		handler = sendTo(handler, backends, "GRPC", tls)
	} else {
		handler = unresolvedFilter(handler)
	}
	var matches []gatewayv1.HTTPRouteMatch
	for _, m := range rule.Matches {
		out.cannotServe(methodRegexFault(m.Method))
		matches = append(matches, httpMatchOf(m))
	}
	out.addLocations(matches, handler)
	return out
}

// routeName names the locations of a route for the request metrics
// (label route), as kubectl names the route: resource/namespace/name.
func routeName(resource, namespace, name string) string {
	return resource + "/" + namespace + "/" + name
}

// httpFilterOf is a GRPCRoute filter as the HTTPRoute filter of the same
// meaning; those without one keep their type, which applyFilter refuses.
func httpFilterOf(f gatewayv1.GRPCRouteFilter) gatewayv1.HTTPRouteFilter {
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterType(f.Type),
		RequestHeaderModifier: f.RequestHeaderModifier, ResponseHeaderModifier: f.ResponseHeaderModifier}
}

// httpMatchOf is a gRPC match as the HTTP match of its requests: the
// method match becomes a path, the header matches stay.
func httpMatchOf(m gatewayv1.GRPCRouteMatch) gatewayv1.HTTPRouteMatch {
	out := gatewayv1.HTTPRouteMatch{Path: grpcPath(m.Method)}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, gatewayv1.HTTPHeaderMatch{
			Type: (*gatewayv1.HeaderMatchType)(h.Type), Name: gatewayv1.HTTPHeaderName(h.Name), Value: h.Value})
	}
	return out
}

// grpcPath is the path match of a method match: exact for a service and
// method, the service's prefix for a service alone, a regular expression
// for a method alone or a match by regular expressions (each part in a
// group of its own, so an alternation stays within its part).
func grpcPath(m *gatewayv1.GRPCMethodMatch) *gatewayv1.HTTPPathMatch {
	if m == nil || m.Service == nil && m.Method == nil {
		return nil
	}
	service, method := ptr.Deref(m.Service, ""), ptr.Deref(m.Method, "")
	path := func(t gatewayv1.PathMatchType, value string) *gatewayv1.HTTPPathMatch {
		return &gatewayv1.HTTPPathMatch{Type: &t, Value: &value}
	}
	if ptr.Deref(m.Type, gatewayv1.GRPCMethodMatchExact) == gatewayv1.GRPCMethodMatchRegularExpression {
		return path(gatewayv1.PathMatchRegularExpression, fmt.Sprintf("/(?:%s)/(?:%s)", orAny(service), orAny(method)))
	}
	switch {
	case service != "" && method != "":
		return path(gatewayv1.PathMatchExact, "/"+service+"/"+method)
	case service != "":
		return path(gatewayv1.PathMatchPathPrefix, "/"+service)
	default:
		return path(gatewayv1.PathMatchRegularExpression, "/[^/]+/"+regexp.QuoteMeta(method))
	}
}

// methodRegexFault says why a method match by regular expressions cannot
// be served ("" when it can): its service and its method are each judged
// alone, so that neither closes the group grpcPath puts it in.
func methodRegexFault(m *gatewayv1.GRPCMethodMatch) string {
	if m == nil || ptr.Deref(m.Type, gatewayv1.GRPCMethodMatchExact) != gatewayv1.GRPCMethodMatchRegularExpression {
		return ""
	}
	for _, part := range []struct {
		name string
		re   *string
	}{{"service", m.Service}, {"method", m.Method}} {
		if part.re == nil {
			continue
		}
		if err := regex.Check(*part.re); err != nil {
			return fmt.Sprintf("method match: %s %q %v", part.name, *part.re, err)
		}
	}
	return ""
}

// orAny is re, or any one path element when re is empty.
func orAny(re string) string {
	if re == "" {
		return "[^/]+"
	}
	return re
}
