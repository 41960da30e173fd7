package gateway

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindTCPRoute is Gateway API's TCP route: it takes a TCP listener's port
// whole, as a stream of the instance (streamroute.go).
const KindTCPRoute = gatewayv1.Kind("TCPRoute")

var tcpRouteKind = routeKind{
	kind: KindTCPRoute, optional: true, protocols: []gatewayv1.ProtocolType{gatewayv1.TCPProtocolType},
	object: func() client.Object { return &gatewayv1.TCPRoute{} },
	list:   func() client.ObjectList { return &gatewayv1.TCPRouteList{} },
	parts: func(o client.Object) routeParts {
		rt := o.(*gatewayv1.TCPRoute)
		return streamParts(&rt.ObjectMeta, rt.Spec.ParentRefs, nil, &rt.Status.RouteStatus, rt.Spec.Rules,
			func(r gatewayv1.TCPRouteRule) []gatewayv1.BackendRef { return r.BackendRefs })
	},
}
