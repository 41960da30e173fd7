package graph

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// references is what the objects of a Gateway refer to, as the controller
// read it from its cache: the ReferenceGrants of the namespaces referred
// to, and which Secrets and Services exist.
type references struct {
	// grants are the ReferenceGrants by their namespace.
	grants map[string][]gatewayv1.ReferenceGrant
	// secrets are the TLS Secrets that exist and hold a certificate and
	// key that make a pair.
	secrets map[types.NamespacedName]bool
	// services are the Services that exist.
	services map[types.NamespacedName]bool
	// tls are the BackendTLSPolicies of the Services.
	tls tlsPolicies
	// externalAuths are the NginxExternalAuths that exist.
	externalAuths map[types.NamespacedName]*v1beta1.ExternalAuth
}

// granted reports whether a ReferenceGrant in to's namespace lets objects
// of fromKind in fromNamespace refer to to, an object of toGroup and
// toKind.
func (r references) granted(fromKind gatewayv1.Kind, fromNamespace string, toGroup gatewayv1.Group, toKind gatewayv1.Kind, to types.NamespacedName) bool {
	return GrantedBy(r.grants[to.Namespace], Group, fromKind, fromNamespace, toGroup, toKind, to.Name)
}

// certificate is the Secret a listener that terminates TLS (HTTPS, or TLS
// in mode Terminate) serves, or why it cannot: a
// ResolvedRefs reason and a message. A Secret of another namespace than
// the Gateway's, which a ReferenceGrant there lets it use, is served from a
// copy in the Gateway's namespace (see CertificateCopyName).
func (r references) certificate(gw *gatewayv1.Gateway, tls *gatewayv1.ListenerTLSConfig) (types.NamespacedName, gatewayv1.ListenerConditionReason, string) {
	if tls == nil || len(tls.CertificateRefs) == 0 {
		return types.NamespacedName{}, gatewayv1.ListenerReasonInvalidCertificateRef, "a listener that terminates TLS needs tls.certificateRefs"
	}
	if tls.Mode != nil && *tls.Mode != gatewayv1.TLSModeTerminate {
		return types.NamespacedName{}, gatewayv1.ListenerReasonInvalidCertificateRef, "an HTTPS listener terminates TLS: mode Passthrough is for TLS listeners"
	}
	ref := tls.CertificateRefs[0]
	if ref.Group != nil && *ref.Group != "" || ref.Kind != nil && *ref.Kind != "Secret" {
		return types.NamespacedName{}, gatewayv1.ListenerReasonInvalidCertificateRef, "certificateRefs name Secrets (group \"\", kind Secret) only"
	}
	key := types.NamespacedName{Namespace: gw.Namespace, Name: string(ref.Name)}
	if ref.Namespace != nil {
		key.Namespace = string(*ref.Namespace)
	}
	if key.Namespace != gw.Namespace && !r.granted("Gateway", gw.Namespace, "", "Secret", key) {
		return key, gatewayv1.ListenerReasonRefNotPermitted, fmt.Sprintf("no ReferenceGrant in namespace %s lets Gateways of %s use Secret %s", key.Namespace, gw.Namespace, key.Name)
	}
	if !r.secrets[key] {
		return key, gatewayv1.ListenerReasonInvalidCertificateRef, fmt.Sprintf("Secret %s is missing, not of type kubernetes.io/tls, or its tls.crt and tls.key are not a key pair", key)
	}
	return key, "", ""
}

// GrantedBy reports whether one of grants (of the target's namespace) lets
// objects of fromGroup and fromKind in fromNamespace refer to the object
// of toGroup and toKind called name.
func GrantedBy(grants []gatewayv1.ReferenceGrant, fromGroup gatewayv1.Group, fromKind gatewayv1.Kind, fromNamespace string, toGroup gatewayv1.Group, toKind gatewayv1.Kind, name string) bool {
	for _, g := range grants {
		from := false
		for _, f := range g.Spec.From {
			from = from || f.Group == fromGroup && f.Kind == fromKind && string(f.Namespace) == fromNamespace
		}
		if !from {
			continue
		}
		for _, t := range g.Spec.To {
			if t.Group == toGroup && t.Kind == toKind && (t.Name == nil || string(*t.Name) == name) {
				return true
			}
		}
	}
	return false
}
