package gateway

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindUDPRoute is Gateway API's UDP route: it takes a UDP listener's port
// whole, as a stream of the instance (streamroute.go).
const KindUDPRoute = gatewayv1.Kind("UDPRoute")

var udpRouteKind = routeKind{
	kind: KindUDPRoute, optional: true, protocols: []gatewayv1.ProtocolType{gatewayv1.UDPProtocolType},
	object: func() client.Object { return &gatewayv1.UDPRoute{} },
	list:   func() client.ObjectList { return &gatewayv1.UDPRouteList{} },
	parts: func(o client.Object) routeParts {
		rt := o.(*gatewayv1.UDPRoute)
		return streamParts(&rt.ObjectMeta, rt.Spec.ParentRefs, nil, &rt.Status.RouteStatus, rt.Spec.Rules,
			func(r gatewayv1.UDPRouteRule) []gatewayv1.BackendRef { return r.BackendRefs })
	},
}
