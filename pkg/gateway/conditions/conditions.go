// Package conditions is the catalog of the Gateway API conditions the
// controller writes on GatewayClasses, Gateways, listeners, routes and
// policies: every such condition is made by a constructor here (hack/
// structure holds the rest of the Gateway wing to it), so that a type's
// reasons and messages are decided in one place and read in Gateway API's
// terms. It is pure: conditions in, conditions out.
package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// condition is every constructor's shape.
func condition[T, R ~string](typ T, ok bool, reason R, message string, gen int64) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: string(typ), Status: status, Reason: string(reason), Message: message, ObservedGeneration: gen}
}

// GatewayClasses.

// ClassAccepted: the class names this controller and its parameters, if
// any, can be used.
func ClassAccepted(gen int64) metav1.Condition {
	return condition(gatewayv1.GatewayClassConditionStatusAccepted, true, gatewayv1.GatewayClassReasonAccepted,
		"nginx-operator runs the Gateways of this class, one NginxOperator each", gen)
}

// ClassInvalidParameters: the class's parametersRef cannot be used, why.
func ClassInvalidParameters(gen int64, why string) metav1.Condition {
	return condition(gatewayv1.GatewayClassConditionStatusAccepted, false, gatewayv1.GatewayClassReasonInvalidParameters, why, gen)
}

// Gateways.

// GatewayAccepted: the Gateway is served by instance.
func GatewayAccepted(gen int64, instance string) metav1.Condition {
	return condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonAccepted, "NginxOperator "+instance+" serves this Gateway", gen)
}

// GatewayInvalidParameters: the parameters the Gateway or its class name
// cannot be used, why.
func GatewayInvalidParameters(gen int64, why string) metav1.Condition {
	return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonInvalidParameters, why, gen)
}

// GatewayNoServableListener: no listener has a protocol this
// implementation serves; the Gateway is not accepted.
func GatewayNoServableListener(gen int64) metav1.Condition {
	return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonListenersNotValid,
		"no listener has a protocol this implementation serves (HTTP, HTTPS, TLS, TCP, UDP)", gen)
}

// GatewaySomeListenersNotValid: the Gateway is accepted, but some of its
// listeners are not.
func GatewaySomeListenersNotValid(gen int64) metav1.Condition {
	return condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonListenersNotValid,
		"some listeners have a protocol this implementation does not serve: see their conditions", gen)
}

// GatewayProgrammed: a ready nginx pod serves the listeners.
func GatewayProgrammed(gen int64) metav1.Condition {
	return condition(gatewayv1.GatewayConditionProgrammed, true, gatewayv1.GatewayReasonProgrammed, "a ready nginx pod serves the listeners", gen)
}

// GatewayNotProgrammedNotAccepted: a Gateway that is not accepted is not
// served.
func GatewayNotProgrammedNotAccepted(gen int64) metav1.Condition {
	return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid, "the Gateway is not accepted", gen)
}

// GatewayNotApplied: the instance, or a copy of a certificate, could not
// be written.
func GatewayNotApplied(gen int64, instance string, err error) metav1.Condition {
	return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid,
		fmt.Sprintf("applying NginxOperator %s or its certificate copies: %v", instance, err), gen)
}

// GatewayPending: nginx does not serve the instance's configuration yet.
func GatewayPending(gen int64, instance string) metav1.Condition {
	return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonPending,
		"waiting for nginx to serve the configuration of NginxOperator "+instance, gen)
}

// Listeners.

// ListenerAccepted: the listener is valid.
func ListenerAccepted(gen int64) metav1.Condition {
	return condition(gatewayv1.ListenerConditionAccepted, true, gatewayv1.ListenerReasonAccepted, "the listener is valid", gen)
}

// ListenerNotAccepted: the listener is not valid, for reason.
func ListenerNotAccepted(gen int64, reason gatewayv1.ListenerConditionReason, message string) metav1.Condition {
	return condition(gatewayv1.ListenerConditionAccepted, false, reason, message, gen)
}

// ListenerNoConflicts: no other listener of its port conflicts with it.
func ListenerNoConflicts(gen int64) metav1.Condition {
	return condition(gatewayv1.ListenerConditionConflicted, false, gatewayv1.ListenerReasonNoConflicts,
		"no other listener shares the port in a way that conflicts", gen)
}

// ListenerConflicted: another listener of port conflicts with it, for
// reason (ProtocolConflict or HostnameConflict).
func ListenerConflicted(gen int64, reason gatewayv1.ListenerConditionReason, port gatewayv1.PortNumber) metav1.Condition {
	message := fmt.Sprintf("another listener on port %d has the same protocol and hostname", port)
	if reason == gatewayv1.ListenerReasonProtocolConflict {
		message = fmt.Sprintf("another listener on port %d has another protocol", port)
	}
	return condition(gatewayv1.ListenerConditionConflicted, true, reason, message, gen)
}

// ListenerResolvedRefs: every reference of the listener resolves.
func ListenerResolvedRefs(gen int64) metav1.Condition {
	return condition(gatewayv1.ListenerConditionResolvedRefs, true, gatewayv1.ListenerReasonResolvedRefs, "every reference resolves", gen)
}

// ListenerRefNotResolved: a reference of the listener does not resolve,
// for reason.
func ListenerRefNotResolved(gen int64, reason gatewayv1.ListenerConditionReason, message string) metav1.Condition {
	return condition(gatewayv1.ListenerConditionResolvedRefs, false, reason, message, gen)
}

// ListenerInvalidRouteKinds: allowedRoutes.kinds names a kind the
// listener cannot serve.
func ListenerInvalidRouteKinds(gen int64) metav1.Condition {
	return ListenerRefNotResolved(gen, gatewayv1.ListenerReasonInvalidRouteKinds, "allowedRoutes.kinds names a kind this listener cannot serve")
}

// ListenerProgrammed: nginx serves the listener.
func ListenerProgrammed(gen int64) metav1.Condition {
	return condition(gatewayv1.ListenerConditionProgrammed, true, gatewayv1.ListenerReasonProgrammed, "nginx serves the listener", gen)
}

// ListenerInvalid: the listener is not valid, so not served.
func ListenerInvalid(gen int64) metav1.Condition {
	return condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonInvalid, "the listener is not valid: see its other conditions", gen)
}

// ListenerPending: nginx does not serve the configuration yet.
func ListenerPending(gen int64) metav1.Condition {
	return condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonPending, "nginx does not serve the configuration yet", gen)
}

// Routes, per parent.

// RouteReasonNoRoom is this implementation's reason of a route not
// accepted because its Gateway's instance cannot hold what it makes
// (Gateway API defines none for it).
const RouteReasonNoRoom gatewayv1.RouteConditionReason = "NoRoom"

// RouteAccepted: the route is attached to the parent.
func RouteAccepted(gen int64) metav1.Condition {
	return condition(gatewayv1.RouteConditionAccepted, true, gatewayv1.RouteReasonAccepted, "attached", gen)
}

// RouteAcceptedOverridden: the route is attached, and older routes take
// all it would serve (Gateway API's precedence: the oldest route of a
// match, a TLS name or a TCP or UDP listener's port serves it).
func RouteAcceptedOverridden(gen int64) metav1.Condition {
	return condition(gatewayv1.RouteConditionAccepted, true, gatewayv1.RouteReasonAccepted,
		"attached, but older routes take all this route matches and serve its traffic", gen)
}

// RouteNotAccepted: the route is not attached to the parent, for reason.
func RouteNotAccepted(gen int64, reason gatewayv1.RouteConditionReason, message string) metav1.Condition {
	return condition(gatewayv1.RouteConditionAccepted, false, reason, message, gen)
}

// RouteNoRoom: the Gateway's instance has no room for what the route
// makes (message says how much it holds); older routes keep theirs.
func RouteNoRoom(gen int64, message string) metav1.Condition {
	return RouteNotAccepted(gen, RouteReasonNoRoom, message)
}

// RouteUnsupportedValue: the route holds what the implementation cannot
// serve (message names it); it is left out.
func RouteUnsupportedValue(gen int64, message string) metav1.Condition {
	return RouteNotAccepted(gen, gatewayv1.RouteReasonUnsupportedValue, message)
}

// RoutePending: the parent Gateway is not served, why.
func RoutePending(gen int64, message string) metav1.Condition {
	return RouteNotAccepted(gen, gatewayv1.RouteReasonPending, message)
}

// RouteResolvedRefs: every backend of the route resolves.
func RouteResolvedRefs(gen int64) metav1.Condition {
	return condition(gatewayv1.RouteConditionResolvedRefs, true, gatewayv1.RouteReasonResolvedRefs, "every backend resolves", gen)
}

// RouteRefNotResolved: a backend of the route does not resolve, for
// reason.
func RouteRefNotResolved(gen int64, reason gatewayv1.RouteConditionReason, message string) metav1.Condition {
	return condition(gatewayv1.RouteConditionResolvedRefs, false, reason, message, gen)
}

// Policies (BackendTLSPolicy), per ancestor.

// PolicyAccepted: nginx applies the policy.
func PolicyAccepted(gen int64) metav1.Condition {
	return condition(gatewayv1.PolicyConditionAccepted, true, gatewayv1.PolicyReasonAccepted, "nginx verifies the Services' certificates", gen)
}

// PolicyNotAccepted: the policy is not applied, for reason.
func PolicyNotAccepted(gen int64, reason gatewayv1.PolicyConditionReason, message string) metav1.Condition {
	return condition(gatewayv1.PolicyConditionAccepted, false, reason, message, gen)
}

// PolicyResolvedRefs: every CA certificate reference of the policy
// resolves.
func PolicyResolvedRefs(gen int64) metav1.Condition {
	return condition(gatewayv1.BackendTLSPolicyConditionResolvedRefs, true, gatewayv1.BackendTLSPolicyReasonResolvedRefs, "every CA certificate reference resolves", gen)
}

// PolicyRefNotResolved: a CA certificate reference of the policy does not
// resolve, for reason.
func PolicyRefNotResolved(gen int64, reason gatewayv1.PolicyConditionReason, message string) metav1.Condition {
	return condition(gatewayv1.BackendTLSPolicyConditionResolvedRefs, false, reason, message, gen)
}
