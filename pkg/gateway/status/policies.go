package status

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// maxAncestors is how many ancestor entries Gateway API keeps on a
// policy.
const maxAncestors = 16

// PolicyAncestors are the ancestor entries a BackendTLSPolicy (with
// entries now) should have: Gateway gw's as its verdict v has it when gw
// uses the policy (used), none of gw's when it does not, and the entries
// of other controllers and Gateways as they are.
func PolicyAncestors(now []gatewayv1.PolicyAncestorStatus, gw types.NamespacedName, v graph.PolicyVerdict, used bool) []gatewayv1.PolicyAncestorStatus {
	out := slices.Clone(now)
	i := slices.IndexFunc(out, func(a gatewayv1.PolicyAncestorStatus) bool { return isAncestor(a, gw) })
	switch {
	case used && i >= 0:
		out[i] = ancestor(gw, v, &out[i])
	case used && len(out) < maxAncestors:
		out = append(out, ancestor(gw, v, nil))
	case !used && i >= 0:
		out = slices.Delete(out, i, i+1)
	}
	if out == nil {
		out = []gatewayv1.PolicyAncestorStatus{} // required by the CRD
	}
	return out
}

// ancestor is the status entry of Gateway gw on a policy with verdict v,
// carrying over the conditions' transition times from old.
func ancestor(gw types.NamespacedName, v graph.PolicyVerdict, old *gatewayv1.PolicyAncestorStatus) gatewayv1.PolicyAncestorStatus {
	out := gatewayv1.PolicyAncestorStatus{AncestorRef: ancestorRef(gw), ControllerName: graph.ControllerName}
	if old != nil {
		out.Conditions = slices.Clone(old.Conditions)
	}
	accepted := conditions.PolicyAccepted(v.Generation)
	if v.Refused != "" {
		accepted = conditions.PolicyNotAccepted(v.Generation, v.Refused, v.RefusedMessage)
	}
	resolved := conditions.PolicyResolvedRefs(v.Generation)
	if v.RefFault != "" {
		resolved = conditions.PolicyRefNotResolved(v.Generation, v.RefFault, v.RefMessage)
	}
	meta.SetStatusCondition(&out.Conditions, accepted)
	meta.SetStatusCondition(&out.Conditions, resolved)
	return out
}

// ancestorRef is the reference to Gateway gw as a policy's ancestor.
func ancestorRef(gw types.NamespacedName) gatewayv1.ParentReference {
	group, kind, ns := graph.Group, gatewayv1.Kind("Gateway"), gatewayv1.Namespace(gw.Namespace)
	return gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gatewayv1.ObjectName(gw.Name)}
}

// isAncestor reports whether entry a is Gateway gw's, written by this
// controller.
func isAncestor(a gatewayv1.PolicyAncestorStatus, gw types.NamespacedName) bool {
	return a.ControllerName == graph.ControllerName && ptr.Deref(a.AncestorRef.Kind, "") == "Gateway" &&
		string(ptr.Deref(a.AncestorRef.Namespace, "")) == gw.Namespace && string(a.AncestorRef.Name) == gw.Name
}
