package graph

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// KindExternalAuth is the kind of this operator's filter that an
// ExtensionRef of an HTTPRoute or GRPCRoute rule may name: external
// authentication, as a location's externalAuth.
const KindExternalAuth = gatewayv1.Kind("NginxExternalAuth")

// RouteReasonFilterNotFound: an ExtensionRef names an NginxExternalAuth
// that does not exist (ResolvedRefs False).
const RouteReasonFilterNotFound = gatewayv1.RouteConditionReason("FilterNotFound")

// externalAuthFilter applies an ExtensionRef filter of a rule of a route in
// namespace to h: the NginxExternalAuth it names, whose Service is in the
// route's namespace. It reports false when the filter does not resolve:
// Gateway API has the rule's requests answered with an error then, never
// served without the filter; the reason is recorded for ResolvedRefs.
func (o *ruleOutcome) externalAuthFilter(h *v1beta1.Location, namespace string, ref *gatewayv1.LocalObjectReference, refs references) bool {
	if ref.Group != gatewayv1.Group(v1beta1.GroupVersion.Group) || ref.Kind != KindExternalAuth {
		o.refFailed(gatewayv1.RouteReasonInvalidKind,
			fmt.Sprintf("filter ExtensionRef names %s %q of group %q: only %s of group %s is known", ref.Kind, ref.Name, ref.Group, KindExternalAuth, v1beta1.GroupVersion.Group))
		return false
	}
	key := types.NamespacedName{Namespace: namespace, Name: string(ref.Name)}
	spec, ok := refs.externalAuths[key]
	if !ok {
		o.refFailed(RouteReasonFilterNotFound, fmt.Sprintf("filter ExtensionRef names %s %s, which does not exist", KindExternalAuth, key))
		return false
	}
	auth := *spec
	auth.Namespace = namespace
	h.ExternalAuth = &auth
	return true
}

// isExtensionRef reports whether f is a filter of type ExtensionRef.
func isExtensionRef(t gatewayv1.HTTPRouteFilterType, ref *gatewayv1.LocalObjectReference) bool {
	return t == gatewayv1.HTTPRouteFilterExtensionRef && ref != nil
}

// unresolvedFilter is what a rule with a filter that does not resolve
// answers: 500, as for a rule without a backend.
func unresolvedFilter(h v1beta1.Location) v1beta1.Location {
	return v1beta1.Location{Name: h.Name, Respond: &v1beta1.RespondLocation{Status: 500}}
}

// ExternalAuthsOf are the NginxExternalAuths the ExtensionRef filters of
// route rt name (an HTTPRoute or a GRPCRoute), in its namespace.
func ExternalAuthsOf(rt Object) []types.NamespacedName {
	var refs []*gatewayv1.LocalObjectReference
	switch rt := rt.(type) {
	case *gatewayv1.HTTPRoute:
		for _, rule := range rt.Spec.Rules {
			for _, f := range rule.Filters {
				refs = append(refs, f.ExtensionRef)
			}
		}
	case *gatewayv1.GRPCRoute:
		for _, rule := range rt.Spec.Rules {
			for _, f := range rule.Filters {
				refs = append(refs, f.ExtensionRef)
			}
		}
	}
	var out []types.NamespacedName
	for _, ref := range refs {
		if ref != nil && ref.Group == gatewayv1.Group(v1beta1.GroupVersion.Group) && ref.Kind == KindExternalAuth {
			out = append(out, types.NamespacedName{Namespace: rt.GetNamespace(), Name: string(ref.Name)})
		}
	}
	return out
}
