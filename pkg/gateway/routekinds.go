package gateway

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeKind is what the Gateway wing knows of one kind of route: how to
// make, list and read one. Each kind's file (httproute.go, grpcroute.go,
// tlsroute.go, tcproute.go, udproute.go) holds its entry, and kindTable
// lists them: adding a kind of route is a file and an entry
// (Documentation/design.md, "Adding a route kind").
type routeKind struct {
	kind gatewayv1.Kind
	// optional kinds are watched only where the API server serves their
	// v1 (ServedRouteKinds).
	optional bool
	// protocols are those of the listeners that take routes of the kind.
	protocols []gatewayv1.ProtocolType
	// object and list make an empty route and an empty list of them.
	object func() client.Object
	list   func() client.ObjectList
	// parts read a route of the kind.
	parts func(client.Object) routeParts
}

// routeParts are what the wing reads of any route.
type routeParts struct {
	meta      *metav1.ObjectMeta
	parents   []gatewayv1.ParentReference
	hostnames []gatewayv1.Hostname
	// status is the route's, to change in place.
	status *gatewayv1.RouteStatus
	// backendRefs are the backends of every rule of a route below HTTP
	// (a stream); HTTP kinds' rules are translated on their own.
	backendRefs []gatewayv1.BackendRef
}

// kindTable lists every kind, in the order the translation places them:
// HTTPRoutes before GRPCRoutes (of one of each with the same path and
// match on one host, which Gateway API leaves to the implementation, the
// HTTPRoute's serves), then the streams' kinds.
var kindTable = []routeKind{httpRouteKind, grpcRouteKind, tlsRouteKind, tcpRouteKind, udpRouteKind}

// kindByType finds a route's entry by its Go type.
var kindByType = func() map[reflect.Type]*routeKind {
	out := map[reflect.Type]*routeKind{}
	for i := range kindTable {
		out[reflect.TypeOf(kindTable[i].object())] = &kindTable[i]
	}
	return out
}()

// kindOf is rt's entry; nil for an object that is no route.
func kindOf(rt client.Object) *routeKind { return kindByType[reflect.TypeOf(rt)] }

// entryOf is kind's entry; nil for a kind of no entry.
func entryOf(kind gatewayv1.Kind) *routeKind {
	for i := range kindTable {
		if kindTable[i].kind == kind {
			return &kindTable[i]
		}
	}
	return nil
}

// partsOf reads rt; none for an object that is no route.
func partsOf(rt client.Object) routeParts {
	if k := kindOf(rt); k != nil {
		return k.parts(rt)
	}
	return routeParts{status: &gatewayv1.RouteStatus{}}
}

// routeKindsOf are the kinds of route listeners of each protocol take.
func routeKindsOf() map[gatewayv1.ProtocolType][]gatewayv1.Kind {
	out := map[gatewayv1.ProtocolType][]gatewayv1.Kind{}
	for _, k := range kindTable {
		for _, p := range k.protocols {
			out[p] = append(out[p], k.kind)
		}
	}
	return out
}

// RouteKinds are the kinds of route the controllers watch, list and write
// the status of: every kind of kindTable that is not optional (CanRun
// requires them), and the optional ones where the API server serves their
// v1 (Gateway API 1.5 made TLSRoute standard, 1.6 the other streams'):
// a cluster with an older release's CRDs runs the Gateway controller
// without them.
type RouteKinds []gatewayv1.Kind

// ServedRouteKinds are the route kinds mgr's API server serves.
func ServedRouteKinds(mgr ctrl.Manager) RouteKinds {
	var out RouteKinds
	for _, k := range kindTable {
		gk := schema.GroupKind{Group: gatewayv1.GroupName, Kind: string(k.kind)}
		if !k.optional {
			out = append(out, k.kind)
		} else if _, err := mgr.GetRESTMapper().RESTMapping(gk, gatewayv1.GroupVersion.Version); err == nil {
			out = append(out, k.kind)
		}
	}
	return out
}

// newRoute is an empty route of kind.
func newRoute(kind gatewayv1.Kind) client.Object { return entryOf(kind).object() }

// listRoutes are the routes of kinds that opts select.
func listRoutes(ctx context.Context, c client.Reader, kinds RouteKinds, opts ...client.ListOption) ([]client.Object, error) {
	var out []client.Object
	for _, kind := range kinds {
		list := entryOf(kind).list()
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			out = append(out, item.(client.Object))
		}
	}
	return out, nil
}

// streamParts reads the routes below HTTP: parentRefs, hostnames (a
// TLSRoute's; nil for the others), status and every rule's backends.
func streamParts[R any](meta *metav1.ObjectMeta, parents []gatewayv1.ParentReference, hostnames []gatewayv1.Hostname, status *gatewayv1.RouteStatus,
	rules []R, backendRefs func(R) []gatewayv1.BackendRef) routeParts {
	p := routeParts{meta: meta, parents: parents, hostnames: hostnames, status: status}
	for _, rule := range rules {
		p.backendRefs = append(p.backendRefs, backendRefs(rule)...)
	}
	return p
}
