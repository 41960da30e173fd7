// Package status is the status stage of the Gateway wing: every status
// the wing writes (GatewayClass, Gateway, listener, route and policy
// entries), prepared from the graph's verdicts with the conditions of the
// catalog (pkg/gateway/conditions).
//
// It guarantees: each function is pure and returns the status an object
// should have, carrying over each condition's lastTransitionTime while its
// status holds, and a status that would not change compares equal to the
// one there, so that the controller writes only changes. It imports no
// client, no controller-runtime and no nginx controller (hack/structure
// holds it to that); the controller writes what it returns.
package status

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// Class sets gc's Accepted condition: accepted, unless its parameters
// cannot be used (invalidParameters says why).
func Class(gc *gatewayv1.GatewayClass, invalidParameters string) {
	accepted := conditions.ClassAccepted(gc.Generation)
	if invalidParameters != "" {
		accepted = conditions.ClassInvalidParameters(gc.Generation, invalidParameters)
	}
	meta.SetStatusCondition(&gc.Status.Conditions, accepted)
}

// Gateway sets the status of g's Gateway, gw: its conditions, its
// listeners' and its addresses. instance is its NginxOperator as the
// cluster has it (nil when it has none), applyErr why it could not be
// applied.
func Gateway(gw *gatewayv1.Gateway, g graph.Graph, instance *v1beta1.NginxOperator, applyErr error, addresses []gatewayv1.GatewayStatusAddress) {
	gen := gw.Generation
	ok := Programmed(instance)
	old := gw.Status.Listeners
	gw.Status.Listeners = nil
	for _, l := range g.Listeners {
		s := Listener(l, gen, ok)
		var was []metav1.Condition
		if i := slices.IndexFunc(old, func(o gatewayv1.ListenerStatus) bool { return o.Name == s.Name }); i >= 0 {
			was = old[i].Conditions
		}
		s.Conditions = keepTransitions(was, s.Conditions)
		gw.Status.Listeners = append(gw.Status.Listeners, s)
	}
	name := graph.InstanceName(gw.Name)
	accepted := conditions.GatewayAccepted(gen, name)
	switch {
	case g.Parameters.Invalid != "":
		accepted = conditions.GatewayInvalidParameters(gen, g.Parameters.Invalid)
	case !g.Accepted():
		accepted = conditions.GatewayNoServableListener(gen)
	case !g.AllListenersAccepted():
		accepted = conditions.GatewaySomeListenersNotValid(gen)
	}
	meta.SetStatusCondition(&gw.Status.Conditions, accepted)
	prog := conditions.GatewayProgrammed(gen)
	switch {
	case !g.Accepted():
		prog = conditions.GatewayNotProgrammedNotAccepted(gen)
	case applyErr != nil:
		prog = conditions.GatewayNotApplied(gen, name, applyErr)
	case !ok:
		prog = conditions.GatewayPending(gen, name)
	}
	meta.SetStatusCondition(&gw.Status.Conditions, prog)
	gw.Status.Addresses = addresses
}

// Programmed reports whether nginx serves a Gateway's listeners: its
// instance's status describes its spec, a pod of its current template
// (the listeners are its ports) is ready, and nginx has not refused the
// configuration. A route change needs no new pod: it reaches the running
// ones in a reload, which the instance's status.loadedReplicas follows;
// the Gateway stays Programmed meanwhile, as its listeners stay served.
func Programmed(instance *v1beta1.NginxOperator) bool {
	if instance == nil || instance.Status.ObservedGeneration != instance.Generation {
		return false
	}
	if meta.IsStatusConditionTrue(instance.Status.Conditions, v1beta1.ConditionDegraded) {
		return false
	}
	return instance.Status.ReadyReplicas > 0 && instance.Status.UpdatedReplicas > 0
}

// Listener is l's status for a Gateway of generation gen, whose instance
// serves its listeners when programmed.
func Listener(l *graph.Listener, gen int64, programmed bool) gatewayv1.ListenerStatus {
	accepted := conditions.ListenerAccepted(gen)
	if l.Unsupported != "" {
		accepted = conditions.ListenerNotAccepted(gen, l.Unsupported, l.UnsupportedMessage)
	}
	conflicted := conditions.ListenerNoConflicts(gen)
	if l.Conflict != "" {
		conflicted = conditions.ListenerConflicted(gen, l.Conflict, l.Port)
	}
	resolved := conditions.ListenerResolvedRefs(gen)
	switch {
	case l.RefFault != "":
		resolved = conditions.ListenerRefNotResolved(gen, l.RefFault, l.RefMessage)
	case l.InvalidKinds:
		resolved = conditions.ListenerInvalidRouteKinds(gen)
	}
	prog := conditions.ListenerProgrammed(gen)
	switch {
	case !l.Serves():
		prog = conditions.ListenerInvalid(gen)
	case !programmed:
		prog = conditions.ListenerPending(gen)
	}
	return gatewayv1.ListenerStatus{
		Name: l.Name, SupportedKinds: l.Kinds, AttachedRoutes: l.Attached,
		Conditions: []metav1.Condition{accepted, conflicted, resolved, prog},
	}
}

// keepTransitions sets each condition's lastTransitionTime: the old one's
// while its status holds, now when it changes.
func keepTransitions(old, conds []metav1.Condition) []metav1.Condition {
	out := slices.Clone(old)
	kept := []metav1.Condition{}
	for _, c := range conds {
		meta.SetStatusCondition(&out, c)
		kept = append(kept, *meta.FindStatusCondition(out, c.Type))
	}
	return kept
}

func conditionEqual(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.ObservedGeneration == b.ObservedGeneration &&
		a.LastTransitionTime.Equal(&b.LastTransitionTime) && a.Reason == b.Reason && a.Message == b.Message
}
