package status

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// RouteParents are the parent statuses of one route for the parentRefs
// that name a Gateway.
type RouteParents struct {
	Kind    gatewayv1.Kind
	Key     types.NamespacedName
	Parents []gatewayv1.RouteParentStatus
}

// Routes are the status entries g's Gateway owes each of its routes: for
// each parentRef naming it, Accepted and ResolvedRefs as the route's
// verdict has them, or, when the Gateway's parameters cannot be used,
// Accepted False with reason Pending.
func Routes(g graph.Graph) []RouteParents {
	out := make([]RouteParents, 0, len(g.Routes))
	for _, r := range g.Routes {
		parents := routeParents(r)
		if why := g.Parameters.Invalid; why != "" {
			// Gateway API asks that a Gateway whose parameters cannot be
			// used be refused rather than run with other settings than it
			// asked for: its routes wait for it.
			for i := range parents {
				p := &parents[i]
				meta.SetStatusCondition(&p.Conditions, conditions.RoutePending(acceptedGeneration(p.Conditions), "the Gateway is not accepted: "+why))
			}
		}
		out = append(out, RouteParents{Kind: r.Kind, Key: r.Key, Parents: parents})
	}
	return out
}

// routeParents are r's conditions for each of its parentRefs to the
// Gateway.
func routeParents(r graph.Route) []gatewayv1.RouteParentStatus {
	gen := r.Generation
	resolved := conditions.RouteResolvedRefs(gen)
	if r.RefFault != "" {
		resolved = conditions.RouteRefNotResolved(gen, r.RefFault, r.RefMessage)
	}
	var out []gatewayv1.RouteParentStatus
	for _, a := range r.Attachments {
		accepted := conditions.RouteAccepted(gen)
		if r.Overridden {
			accepted = conditions.RouteAcceptedOverridden(gen)
		}
		switch {
		case a.Refused != "":
			accepted = conditions.RouteNotAccepted(gen, a.Refused, a.Message)
		case a.NoRoom != "":
			accepted = conditions.RouteNoRoom(gen, a.NoRoom)
		case r.Unsupported != "":
			accepted = conditions.RouteUnsupportedValue(gen, r.Unsupported)
		}
		out = append(out, gatewayv1.RouteParentStatus{
			ParentRef: a.Ref, ControllerName: graph.ControllerName,
			Conditions: []metav1.Condition{accepted, resolved},
		})
	}
	return out
}

// acceptedGeneration is the observedGeneration of a route entry's Accepted
// condition.
func acceptedGeneration(conds []metav1.Condition) int64 {
	if c := meta.FindStatusCondition(conds, string(gatewayv1.RouteConditionAccepted)); c != nil {
		return c.ObservedGeneration
	}
	return 0
}

// RouteEntries are the parent entries route rt (in routeNamespace, with
// entries now) should have for Gateway gw: the entries of other
// controllers and Gateways as they are, and this controller's for gw as
// want has them (none when want is empty), each condition keeping its
// lastTransitionTime while its status holds. changed reports whether they
// differ from now.
func RouteEntries(now []gatewayv1.RouteParentStatus, routeNamespace string, gw types.NamespacedName, want []gatewayv1.RouteParentStatus) (entries []gatewayv1.RouteParentStatus, changed bool) {
	gateway := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: gw.Namespace, Name: gw.Name}}
	entries = slices.DeleteFunc(slices.Clone(now), func(p gatewayv1.RouteParentStatus) bool {
		return p.ControllerName == graph.ControllerName && graph.RefersTo(p.ParentRef, routeNamespace, gateway)
	})
	for _, p := range want {
		var was []metav1.Condition
		if old := findParent(now, p.ParentRef); old != nil {
			was = old.Conditions
		}
		p.Conditions = keepTransitions(was, p.Conditions)
		entries = append(entries, p)
	}
	return entries, !slices.EqualFunc(entries, now, parentStatusEqual)
}

// parentStatusEqual compares two entries of a route's status field by
// field: reflection's DeepEqual over a thousand routes' entries was a
// tenth of a Gateway's reconcile.
func parentStatusEqual(a, b gatewayv1.RouteParentStatus) bool {
	return a.ControllerName == b.ControllerName && parentRefEqual(a.ParentRef, b.ParentRef) &&
		slices.EqualFunc(a.Conditions, b.Conditions, conditionEqual)
}

func parentRefEqual(a, b gatewayv1.ParentReference) bool {
	return a.Name == b.Name && ptr.Equal(a.Group, b.Group) && ptr.Equal(a.Kind, b.Kind) && ptr.Equal(a.Namespace, b.Namespace) &&
		ptr.Equal(a.SectionName, b.SectionName) && ptr.Equal(a.Port, b.Port)
}

func findParent(parents []gatewayv1.RouteParentStatus, ref gatewayv1.ParentReference) *gatewayv1.RouteParentStatus {
	for i := range parents {
		if parents[i].ControllerName == graph.ControllerName && parentRefEqual(parents[i].ParentRef, ref) {
			return &parents[i]
		}
	}
	return nil
}
