package gateway

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// RouteKinds are the kinds of route the controllers watch, list and write
// the status of: HTTPRoute and GRPCRoute, which CanRun requires, and
// TLSRoute, TCPRoute and UDPRoute where the API server serves their v1
// (Gateway API 1.5 made TLSRoute standard, 1.6 the other two): a cluster
// with an older release's CRDs runs the Gateway controller without them.
type RouteKinds []gatewayv1.Kind

// ServedRouteKinds are the route kinds mgr's API server serves.
func ServedRouteKinds(mgr ctrl.Manager) RouteKinds {
	out := RouteKinds{KindHTTPRoute, KindGRPCRoute}
	for _, kind := range []gatewayv1.Kind{KindTLSRoute, KindTCPRoute, KindUDPRoute} {
		gk := schema.GroupKind{Group: gatewayv1.GroupName, Kind: string(kind)}
		if _, err := mgr.GetRESTMapper().RESTMapping(gk, gatewayv1.GroupVersion.Version); err == nil {
			out = append(out, kind)
		}
	}
	return out
}

// newRoute is an empty route of kind.
func newRoute(kind gatewayv1.Kind) client.Object {
	switch kind {
	case KindGRPCRoute:
		return &gatewayv1.GRPCRoute{}
	case KindTLSRoute:
		return &gatewayv1.TLSRoute{}
	case KindTCPRoute:
		return &gatewayv1.TCPRoute{}
	case KindUDPRoute:
		return &gatewayv1.UDPRoute{}
	}
	return &gatewayv1.HTTPRoute{}
}

// listRoutes are the routes of kinds that opts select.
func listRoutes(ctx context.Context, c client.Reader, kinds RouteKinds, opts ...client.ListOption) ([]client.Object, error) {
	var out []client.Object
	for _, kind := range kinds {
		items, err := listRoutesOf(ctx, c, kind, opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// listRoutesOf lists the routes of one kind.
func listRoutesOf(ctx context.Context, c client.Reader, kind gatewayv1.Kind, opts ...client.ListOption) ([]client.Object, error) {
	var out []client.Object
	switch kind {
	case KindHTTPRoute:
		var l gatewayv1.HTTPRouteList
		if err := c.List(ctx, &l, opts...); err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case KindGRPCRoute:
		var l gatewayv1.GRPCRouteList
		if err := c.List(ctx, &l, opts...); err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return listStreamRoutesOf(ctx, c, kind, opts...)
	}
	return out, nil
}

// listStreamRoutesOf lists the TLSRoutes, TCPRoutes or UDPRoutes.
func listStreamRoutesOf(ctx context.Context, c client.Reader, kind gatewayv1.Kind, opts ...client.ListOption) ([]client.Object, error) {
	var out []client.Object
	switch kind {
	case KindTLSRoute:
		var l gatewayv1.TLSRouteList
		if err := c.List(ctx, &l, opts...); err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case KindTCPRoute:
		var l gatewayv1.TCPRouteList
		if err := c.List(ctx, &l, opts...); err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case KindUDPRoute:
		var l gatewayv1.UDPRouteList
		if err := c.List(ctx, &l, opts...); err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out, nil
}

// streamBackendRefs are the backendRefs of a TLSRoute's, TCPRoute's or
// UDPRoute's rules; nil for other routes.
func streamBackendRefs(rt client.Object) []gatewayv1.BackendRef {
	var out []gatewayv1.BackendRef
	switch rt := rt.(type) {
	case *gatewayv1.TLSRoute:
		for _, rule := range rt.Spec.Rules {
			out = append(out, rule.BackendRefs...)
		}
	case *gatewayv1.TCPRoute:
		for _, rule := range rt.Spec.Rules {
			out = append(out, rule.BackendRefs...)
		}
	case *gatewayv1.UDPRoute:
		for _, rule := range rt.Spec.Rules {
			out = append(out, rule.BackendRefs...)
		}
	}
	return out
}
