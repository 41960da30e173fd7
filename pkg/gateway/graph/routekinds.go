package graph

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Object is an object of the API as the graph reads it: what
// controller-runtime's client.Object is, so that the controller's objects
// are the graph's without a conversion, and the graph imports no client.
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of objects of the API (client.ObjectList's methods).
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// RouteKind is what the Gateway wing knows of one kind of route: how to
// make, list and read one. Each kind's file (httproute.go, grpcroute.go,
// tlsroute.go, tcproute.go, udproute.go) holds its entry, and Kinds lists
// them: adding a kind of route is a file and an entry
// (Documentation/design.md, "Adding a route kind").
type RouteKind struct {
	Kind gatewayv1.Kind
	// Optional kinds are watched only where the API server serves their
	// v1 (the controller's ServedRouteKinds).
	Optional bool
	// Protocols are those of the listeners that take routes of the kind.
	Protocols []gatewayv1.ProtocolType
	// New and NewList make an empty route and an empty list of them.
	New     func() Object
	NewList func() ObjectList
	// parts read a route of the kind.
	parts func(Object) RouteParts
}

// RouteParts are what the wing reads of any route.
type RouteParts struct {
	Meta      *metav1.ObjectMeta
	Parents   []gatewayv1.ParentReference
	Hostnames []gatewayv1.Hostname
	// Status is the route's, to change in place.
	Status *gatewayv1.RouteStatus
	// BackendRefs are the backends of every rule of a route below HTTP
	// (a stream); HTTP kinds' rules are translated on their own.
	BackendRefs []gatewayv1.BackendRef
}

// Kinds lists every kind, in the order the graph places them: HTTPRoutes
// before GRPCRoutes (of one of each with the same path and match on one
// host, which Gateway API leaves to the implementation, the HTTPRoute's
// serves), then the streams' kinds.
func Kinds() []RouteKind { return kindTable }

var kindTable = []RouteKind{httpRouteKind, grpcRouteKind, tlsRouteKind, tcpRouteKind, udpRouteKind}

// kindByType finds a route's entry by its Go type.
var kindByType = func() map[reflect.Type]*RouteKind {
	out := map[reflect.Type]*RouteKind{}
	for i := range kindTable {
		out[reflect.TypeOf(kindTable[i].New())] = &kindTable[i]
	}
	return out
}()

// KindOf is rt's entry; nil for an object that is no route.
func KindOf(rt Object) *RouteKind { return kindByType[reflect.TypeOf(rt)] }

// EntryOf is kind's entry; nil for a kind of no entry.
func EntryOf(kind gatewayv1.Kind) *RouteKind {
	for i := range kindTable {
		if kindTable[i].Kind == kind {
			return &kindTable[i]
		}
	}
	return nil
}

// PartsOf reads rt; none for an object that is no route.
func PartsOf(rt Object) RouteParts {
	if k := KindOf(rt); k != nil {
		return k.parts(rt)
	}
	return RouteParts{Status: &gatewayv1.RouteStatus{}}
}

// routeKindsOf are the kinds of route listeners of each protocol take.
func routeKindsOf() map[gatewayv1.ProtocolType][]gatewayv1.Kind {
	out := map[gatewayv1.ProtocolType][]gatewayv1.Kind{}
	for _, k := range kindTable {
		for _, p := range k.Protocols {
			out[p] = append(out[p], k.Kind)
		}
	}
	return out
}

// streamParts reads the routes below HTTP: parentRefs, hostnames (a
// TLSRoute's; nil for the others), status and every rule's backends.
func streamParts[R any](meta *metav1.ObjectMeta, parents []gatewayv1.ParentReference, hostnames []gatewayv1.Hostname, status *gatewayv1.RouteStatus,
	rules []R, backendRefs func(R) []gatewayv1.BackendRef) RouteParts {
	p := RouteParts{Meta: meta, Parents: parents, Hostnames: hostnames, Status: status}
	for _, rule := range rules {
		p.BackendRefs = append(p.BackendRefs, backendRefs(rule)...)
	}
	return p
}
