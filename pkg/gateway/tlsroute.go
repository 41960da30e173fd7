package gateway

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindTLSRoute is Gateway API's TLS route: its connections are passed
// through (or terminated, with the listener's certificate) by their server
// name on a TLS listener's port, and become the instance's streams
// (streamroute.go).
const KindTLSRoute = gatewayv1.Kind("TLSRoute")

var tlsRouteKind = routeKind{
	kind: KindTLSRoute, optional: true, protocols: []gatewayv1.ProtocolType{gatewayv1.TLSProtocolType},
	object: func() client.Object { return &gatewayv1.TLSRoute{} },
	list:   func() client.ObjectList { return &gatewayv1.TLSRouteList{} },
	parts: func(o client.Object) routeParts {
		rt := o.(*gatewayv1.TLSRoute)
		return streamParts(&rt.ObjectMeta, rt.Spec.ParentRefs, rt.Spec.Hostnames, &rt.Status.RouteStatus, rt.Spec.Rules,
			func(r gatewayv1.TLSRouteRule) []gatewayv1.BackendRef { return r.BackendRefs })
	},
}
