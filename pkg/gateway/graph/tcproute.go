package graph

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindTCPRoute is Gateway API's TCP route: it takes a TCP listener's port
// whole, as a stream of the instance (streamroute.go).
const KindTCPRoute = gatewayv1.Kind("TCPRoute")

var tcpRouteKind = RouteKind{
	Kind: KindTCPRoute, Optional: true, Protocols: []gatewayv1.ProtocolType{gatewayv1.TCPProtocolType},
	New:     func() Object { return &gatewayv1.TCPRoute{} },
	NewList: func() ObjectList { return &gatewayv1.TCPRouteList{} },
	parts: func(o Object) RouteParts {
		rt := o.(*gatewayv1.TCPRoute)
		return streamParts(&rt.ObjectMeta, rt.Spec.ParentRefs, nil, &rt.Status.RouteStatus, rt.Spec.Rules,
			func(r gatewayv1.TCPRouteRule) []gatewayv1.BackendRef { return r.BackendRefs })
	},
}
