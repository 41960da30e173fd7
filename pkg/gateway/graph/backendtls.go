package graph

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// BackendTLSPolicy: a policy names Services (a port of one by its name,
// sectionName, or all of them) and how nginx checks their certificates: the
// name it sends in SNI and verifies (hostname) and the CA certificates it
// trusts (a ConfigMap's ca.crt). The policies of the Services a rule sends
// to become its location's proxy.tls, spoken over HTTPS (gRPC over TLS for
// a GRPCRoute).

// CACertificateKey is the key of a CA ConfigMap Gateway API names.
const CACertificateKey = "ca.crt"

// policyTarget is what a policy applies to: a Service, and one of its
// ports by name ("" for every port).
type policyTarget struct {
	service types.NamespacedName
	section string
}

// PolicyVerdict is what the graph makes of one policy, for its status
// entry of each Gateway it is used by: why it is not accepted (a reason
// of Accepted, and a message; "" when it is), why a reference of it does
// not resolve (a reason of ResolvedRefs, and a message; "" when all do),
// and, when accepted, the TLS settings of locations sending to its
// Services.
type PolicyVerdict struct {
	Generation     int64
	Refused        gatewayv1.PolicyConditionReason
	RefusedMessage string
	RefFault       gatewayv1.PolicyConditionReason
	RefMessage     string
	tls            *v1beta1.BackendTLS
}

// tlsPolicies are the verdicts on the policies of a Gateway's backends,
// and the policy that applies to each target.
type tlsPolicies struct {
	verdicts map[types.NamespacedName]PolicyVerdict
	winners  map[policyTarget]types.NamespacedName
	// portNames are the names of the ports of the Services a policy
	// names by sectionName, by number.
	portNames map[types.NamespacedName]map[int32]string
}

// judgePolicies gives each policy its verdict. Of the policies with the
// same target the oldest (then the first by namespace and name) applies,
// Gateway API's rule for conflicting policies; the others are Conflicted.
// caConfigMaps tells which ConfigMaps exist and hold PEM certificates
// under ca.crt.
func judgePolicies(policies []gatewayv1.BackendTLSPolicy, caConfigMaps map[types.NamespacedName]bool, portNames map[types.NamespacedName]map[int32]string) tlsPolicies {
	sorted := slices.Clone(policies)
	slices.SortFunc(sorted, func(a, b gatewayv1.BackendTLSPolicy) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	out := tlsPolicies{verdicts: map[types.NamespacedName]PolicyVerdict{}, winners: map[policyTarget]types.NamespacedName{}, portNames: portNames}
	for _, p := range sorted {
		key := policyKey(p)
		v := judgePolicy(p, caConfigMaps)
		conflicted := false
		for _, t := range p.Spec.TargetRefs {
			if t.Group != "" || t.Kind != "Service" {
				continue // the CRD admits Services only
			}
			target := policyTarget{types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)}, string(ptrOr(t.SectionName))}
			if _, taken := out.winners[target]; taken {
				conflicted = true
				continue
			}
			out.winners[target] = key
		}
		if conflicted {
			v.Refused, v.RefusedMessage = gatewayv1.PolicyReasonConflicted, "an older BackendTLSPolicy names the same Service and port"
			v.tls = nil
		}
		out.verdicts[key] = v
	}
	return out
}

// policyKey names a policy.
func policyKey(p gatewayv1.BackendTLSPolicy) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}

func ptrOr[T ~string](s *T) T {
	if s == nil {
		return ""
	}
	return *s
}

// judgePolicy is p's verdict on its own: its CA certificates must be
// ConfigMaps holding PEM certificates under ca.crt, of which nginx trusts
// the first; nginx sends and verifies one name, so subjectAltNames other
// than hostname cannot be checked, and the system's CAs are not in the
// instance's pods.
func judgePolicy(p gatewayv1.BackendTLSPolicy, caConfigMaps map[types.NamespacedName]bool) PolicyVerdict {
	val := p.Spec.Validation
	v := PolicyVerdict{Generation: p.Generation}
	var trusted *v1beta1.CACertificateRef
	for _, ref := range val.CACertificateRefs {
		fault, message := gatewayv1.PolicyConditionReason(""), ""
		key := types.NamespacedName{Namespace: p.Namespace, Name: string(ref.Name)}
		switch {
		case ref.Group != "" || ref.Kind != "ConfigMap":
			fault, message = gatewayv1.BackendTLSPolicyReasonInvalidKind, fmt.Sprintf("caCertificateRefs name ConfigMaps (group \"\"), not %s %s", ref.Kind, ref.Name)
		case !caConfigMaps[key]:
			fault, message = gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Sprintf("ConfigMap %s is missing or holds no PEM certificate under %s", key, CACertificateKey)
		case trusted == nil:
			trusted = &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: key.Name, Key: CACertificateKey}
		}
		if fault != "" && v.RefFault == "" {
			v.RefFault, v.RefMessage = fault, message
		}
	}
	switch {
	case val.WellKnownCACertificates != nil:
		v.Refused, v.RefusedMessage = gatewayv1.PolicyReasonInvalid, "wellKnownCACertificates is not supported: name a ConfigMap of CA certificates"
	case len(val.SubjectAltNames) > 0:
		v.Refused, v.RefusedMessage = gatewayv1.PolicyReasonInvalid, "subjectAltNames is not supported: nginx verifies the certificate for hostname, the name it sends"
	case trusted == nil:
		v.Refused, v.RefusedMessage = gatewayv1.BackendTLSPolicyReasonNoValidCACertificate, "no caCertificateRef names a ConfigMap holding CA certificates"
	default:
		v.tls = &v1beta1.BackendTLS{Hostname: string(val.Hostname), CACertificate: trusted}
	}
	return v
}

// of is the policy that applies to port of service: the one naming the
// port, else the one naming the Service; false for none.
func (t tlsPolicies) of(service types.NamespacedName, port int32) (types.NamespacedName, PolicyVerdict, bool) {
	if name := t.portNames[service][port]; name != "" {
		if key, ok := t.winners[policyTarget{service, name}]; ok {
			return key, t.verdicts[key], true
		}
	}
	key, ok := t.winners[policyTarget{service, ""}]
	return key, t.verdicts[key], ok
}

// backendTLS applies the policies of a rule's backends: a backend whose
// policy is not accepted is left out (its share is not sent in plain
// text), and the others must agree, since a location has one TLS setting.
// It returns the backends kept and their TLS (nil for none), or refuses
// the rule.
func (o *ruleOutcome) backendTLS(gw *gatewayv1.Gateway, backends []v1beta1.Backend, t tlsPolicies) ([]v1beta1.Backend, *v1beta1.BackendTLS) {
	var kept []v1beta1.Backend
	var tls *v1beta1.BackendTLS
	first := true
	for _, b := range backends {
		svc := types.NamespacedName{Namespace: gw.Namespace, Name: b.Service}
		if b.Namespace != "" {
			svc.Namespace = b.Namespace
		}
		key, v, found := t.of(svc, b.Port)
		switch {
		case found && v.tls == nil:
			continue // its policy is not accepted: no plain text instead
		case found && svc.Namespace != gw.Namespace:
			o.cannotServe(fmt.Sprintf("Service %s has BackendTLSPolicy %s, whose CA certificates the Gateway's pods in %s cannot mount", svc, key.Name, gw.Namespace))
			return nil, nil
		}
		if !first && !equalTLS(tls, v.tls) {
			o.cannotServe("the rule's backends have different BackendTLSPolicies (or some none): nginx speaks to all of a rule's backends alike")
			return nil, nil
		}
		kept, tls, first = append(kept, b), v.tls, false
	}
	return kept, tls
}

func equalTLS(a, b *v1beta1.BackendTLS) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Hostname == b.Hostname && *a.CACertificate == *b.CACertificate
}
