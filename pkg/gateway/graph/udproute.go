package graph

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindUDPRoute is Gateway API's UDP route: it takes a UDP listener's port
// whole, as a stream of the instance (streamroute.go).
const KindUDPRoute = gatewayv1.Kind("UDPRoute")

var udpRouteKind = RouteKind{
	Kind: KindUDPRoute, Optional: true, Protocols: []gatewayv1.ProtocolType{gatewayv1.UDPProtocolType},
	New:     func() Object { return &gatewayv1.UDPRoute{} },
	NewList: func() ObjectList { return &gatewayv1.UDPRouteList{} },
	parts: func(o Object) RouteParts {
		rt := o.(*gatewayv1.UDPRoute)
		return streamParts(&rt.ObjectMeta, rt.Spec.ParentRefs, nil, &rt.Status.RouteStatus, rt.Spec.Rules,
			func(r gatewayv1.UDPRouteRule) []gatewayv1.BackendRef { return r.BackendRefs })
	},
}
