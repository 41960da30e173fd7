package graph

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Listener is one listener of a Gateway as the graph judged it: what it
// accepts, and what is wrong with it.
type Listener struct {
	gatewayv1.Listener
	// Kinds are the route kinds it accepts (its status's supportedKinds).
	Kinds []gatewayv1.RouteGroupKind
	// InvalidKinds: allowedRoutes.kinds names a kind it cannot serve.
	InvalidKinds bool
	// Unsupported is why the listener cannot be served at all, as a
	// reason of its Accepted condition, and UnsupportedMessage says so;
	// "" when it can.
	Unsupported        gatewayv1.ListenerConditionReason
	UnsupportedMessage string
	// Conflict is why the listener conflicts with another of the
	// Gateway; "" for none.
	Conflict gatewayv1.ListenerConditionReason
	// Certificate is the Secret a listener that terminates TLS serves;
	// RefFault is why it cannot (a ResolvedRefs reason) and RefMessage
	// says so.
	Certificate types.NamespacedName
	RefFault    gatewayv1.ListenerConditionReason
	RefMessage  string
	// SecretName is the Secret of the Gateway's namespace the instance's
	// server takes the certificate from: the certificate itself, or the
	// copy of one from another namespace.
	SecretName string
	// Attached counts the routes attached to it.
	Attached int32
}

// Attachable reports a listener routes attach to and are counted on: one
// of a supported protocol. A route attached to a listener whose
// certificate or port is in dispute still counts in attachedRoutes, as
// Gateway API asks, though nginx does not serve the listener.
func (l *Listener) Attachable() bool { return l.Unsupported == "" }

// Serves reports a listener that takes routes and traffic.
func (l *Listener) Serves() bool {
	return l.Attachable() && l.Conflict == "" && l.RefFault == ""
}

// routeKinds are the kinds of route a listener of each protocol can serve.
var routeKinds = routeKindsOf()

// isStream reports a listener whose routes become streams (stream.go of
// the renderer): TLS (terminated or passed through), TCP and UDP.
func (l *Listener) isStream() bool {
	switch l.Protocol {
	case gatewayv1.TLSProtocolType, gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType:
		return true
	}
	return false
}

// terminatesTLS reports a listener that serves a certificate: HTTPS, and
// TLS in mode Terminate (Gateway API's default for TLS).
func terminatesTLS(l gatewayv1.Listener) bool {
	return l.Protocol == gatewayv1.HTTPSProtocolType || l.Protocol == gatewayv1.TLSProtocolType && !passesTLSThrough(l)
}

// passesTLSThrough reports a TLS listener in mode Passthrough.
func passesTLSThrough(l gatewayv1.Listener) bool {
	return l.Protocol == gatewayv1.TLSProtocolType && l.TLS != nil && ptr.Deref(l.TLS.Mode, gatewayv1.TLSModeTerminate) == gatewayv1.TLSModePassthrough
}

// mixedTermination is why TLS listeners of one port that terminate TLS
// and pass it through are not accepted: the class does not claim
// TLSRouteModeMixed, whose Gateway API contract is still experimental.
const mixedTermination = "TLS listeners of one port must all terminate TLS or all pass it through (TLSRouteModeMixed is not supported)"

// Group is the API group of Gateway API's kinds.
const Group = gatewayv1.Group(gatewayv1.GroupName)

// readListeners checks each listener of gw on its own (protocol, route
// kinds, certificates) and against the others (conflicts).
func readListeners(gw *gatewayv1.Gateway, refs references) []*Listener {
	out := make([]*Listener, len(gw.Spec.Listeners))
	for i, spec := range gw.Spec.Listeners {
		l := &Listener{Listener: spec}
		supported, ok := routeKinds[spec.Protocol]
		switch {
		case !ok:
			l.Unsupported, l.UnsupportedMessage = gatewayv1.ListenerReasonUnsupportedProtocol, fmt.Sprintf("protocol %s is not supported", spec.Protocol)
		case mixesTermination(spec, gw.Spec.Listeners):
			// A listener that is not accepted supports no kind.
			l.Unsupported, l.UnsupportedMessage, supported = gatewayv1.ListenerReasonProtocolConflict, mixedTermination, nil
		}
		l.Kinds, l.InvalidKinds = allowedKinds(spec.AllowedRoutes, supported)
		if terminatesTLS(spec) {
			l.Certificate, l.RefFault, l.RefMessage = refs.certificate(gw, spec.TLS)
			l.SecretName = l.Certificate.Name
			if l.RefFault == "" && l.Certificate.Namespace != gw.Namespace {
				l.SecretName = CertificateCopyName(gw.Name, l.Certificate)
			}
		}
		out[i] = l
	}
	markConflicts(out)
	return out
}

// mixesTermination reports a TLS listener that shares its port with a TLS
// listener of the other mode.
func mixesTermination(l gatewayv1.Listener, all []gatewayv1.Listener) bool {
	return l.Protocol == gatewayv1.TLSProtocolType && slices.ContainsFunc(all, func(o gatewayv1.Listener) bool {
		return o.Port == l.Port && o.Protocol == gatewayv1.TLSProtocolType && passesTLSThrough(o) != passesTLSThrough(l)
	})
}

// allowedKinds are the kinds of allowed the protocol supports (all it
// supports when allowed names none), and whether allowed names others.
func allowedKinds(allowed *gatewayv1.AllowedRoutes, supported []gatewayv1.Kind) ([]gatewayv1.RouteGroupKind, bool) {
	out := []gatewayv1.RouteGroupKind{}
	if allowed == nil || len(allowed.Kinds) == 0 {
		for _, k := range supported {
			out = append(out, gatewayv1.RouteGroupKind{Group: ptr.To(Group), Kind: k})
		}
		return out, false
	}
	invalid := false
	for _, k := range allowed.Kinds {
		group := Group
		if k.Group != nil {
			group = *k.Group
		}
		if group != Group || !slices.Contains(supported, k.Kind) {
			invalid = true
			continue
		}
		out = append(out, gatewayv1.RouteGroupKind{Group: ptr.To(Group), Kind: k.Kind})
	}
	return out, invalid
}

// markConflicts finds listeners that share a port with another of an
// incompatible protocol, or with another of a compatible one and the same
// hostname. Gateway API lets an implementation keep one of them; here
// neither is served, so that the choice never depends on the order of the
// list.
func markConflicts(ls []*Listener) {
	for i, a := range ls {
		for j, b := range ls {
			if i == j || a.Port != b.Port || !sameTransport(a.Protocol, b.Protocol) {
				continue
			}
			switch {
			case !compatible(a.Protocol, b.Protocol):
				a.Conflict = gatewayv1.ListenerReasonProtocolConflict
			case a.Conflict != "":
			case hostnameOf(a.Hostname) == hostnameOf(b.Hostname) || !carriesHostname(a.Protocol):
				a.Conflict = gatewayv1.ListenerReasonHostnameConflict
			}
		}
	}
}

// carriesHostname reports whether a protocol tells listeners of one port
// apart by hostname: TCP and UDP carry none, so two such listeners of a
// port always conflict.
func carriesHostname(p gatewayv1.ProtocolType) bool {
	return p != gatewayv1.TCPProtocolType && p != gatewayv1.UDPProtocolType
}

// sameTransport reports whether two protocols are both over UDP or both
// over TCP: a UDP listener shares its port number with any TCP one, as
// DNS's 53 does.
func sameTransport(a, b gatewayv1.ProtocolType) bool {
	return (a == gatewayv1.UDPProtocolType) == (b == gatewayv1.UDPProtocolType)
}

// compatible reports whether listeners of two protocols can share a port:
// the same protocol, or HTTPS and TLS, which nginx tells apart by the TLS
// server name (a stream router, see the renderer's stream.go).
func compatible(a, b gatewayv1.ProtocolType) bool {
	tlsBased := func(p gatewayv1.ProtocolType) bool {
		return p == gatewayv1.HTTPSProtocolType || p == gatewayv1.TLSProtocolType
	}
	return a == b || tlsBased(a) && tlsBased(b)
}

// hostnameOf is a listener's hostname, "" for any.
func hostnameOf(h *gatewayv1.Hostname) string {
	if h == nil {
		return ""
	}
	return string(*h)
}
