package graph

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindTLSRoute is Gateway API's TLS route: its connections are passed
// through (or terminated, with the listener's certificate) by their server
// name on a TLS listener's port, and become the instance's streams
// (streamroute.go).
const KindTLSRoute = gatewayv1.Kind("TLSRoute")

var tlsRouteKind = RouteKind{
	Kind: KindTLSRoute, Optional: true, Protocols: []gatewayv1.ProtocolType{gatewayv1.TLSProtocolType},
	New:     func() Object { return &gatewayv1.TLSRoute{} },
	NewList: func() ObjectList { return &gatewayv1.TLSRouteList{} },
	parts: func(o Object) RouteParts {
		rt := o.(*gatewayv1.TLSRoute)
		return streamParts(&rt.ObjectMeta, rt.Spec.ParentRefs, rt.Spec.Hostnames, &rt.Status.RouteStatus, rt.Spec.Rules,
			func(r gatewayv1.TLSRouteRule) []gatewayv1.BackendRef { return r.BackendRefs })
	},
}
