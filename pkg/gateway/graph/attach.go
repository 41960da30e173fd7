package graph

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// route is what attachment needs of a route of any kind.
type route struct {
	kind      gatewayv1.Kind
	meta      metav1.ObjectMeta
	parents   []gatewayv1.ParentReference
	hostnames []gatewayv1.Hostname
}

func (r route) ref() RouteRef {
	return RouteRef{Kind: r.kind, Key: types.NamespacedName{Namespace: r.meta.Namespace, Name: r.meta.Name}}
}

// Attachment is where one parentRef of a route attaches to the Gateway:
// the listeners it is accepted by, with the hostnames it serves on each,
// or why it is not accepted (Refused, a reason of Accepted, and Message).
type Attachment struct {
	Ref       gatewayv1.ParentReference
	Listeners []*Listener
	// Hostnames[i] are the hostnames the route serves on Listeners[i]; ""
	// is any.
	Hostnames [][]string
	Refused   gatewayv1.RouteConditionReason
	Message   string
	// NoRoom says why the instance has no room for the route, which is
	// then refused on every parentRef it would attach by; "" when it has.
	NoRoom string
}

// Accepted reports an attachment the route is accepted by.
func (a Attachment) Accepted() bool { return a.Refused == "" && a.NoRoom == "" }

// RefersTo reports whether ref names gw.
func RefersTo(ref gatewayv1.ParentReference, routeNamespace string, gw *gatewayv1.Gateway) bool {
	group, kind, ns := Group, gatewayv1.Kind("Gateway"), routeNamespace
	if ref.Group != nil {
		group = *ref.Group
	}
	if ref.Kind != nil {
		kind = *ref.Kind
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return group == Group && kind == "Gateway" && ns == gw.Namespace && string(ref.Name) == gw.Name
}

// attach works out each of r's parentRefs to gw against its listeners.
// namespaceLabels are the labels of the route's namespace (for a
// listener's namespace selector).
func attach(r route, gw *gatewayv1.Gateway, ls []*Listener, namespaceLabels map[string]string) []Attachment {
	var out []Attachment
	for _, ref := range r.parents {
		if !RefersTo(ref, r.meta.Namespace, gw) {
			continue
		}
		out = append(out, attachOne(r, ref, gw, ls, namespaceLabels))
	}
	return out
}

func attachOne(r route, ref gatewayv1.ParentReference, gw *gatewayv1.Gateway, ls []*Listener, namespaceLabels map[string]string) Attachment {
	a := Attachment{Ref: ref, Refused: gatewayv1.RouteReasonNoMatchingParent, Message: "no listener matches the parentRef's sectionName and port"}
	for _, l := range ls {
		if ref.SectionName != nil && *ref.SectionName != l.Name || ref.Port != nil && *ref.Port != l.Port {
			continue
		}
		if !l.Attachable() || !kindAllowed(l, r.kind) || !namespaceAllowed(l, gw.Namespace, r.meta.Namespace, namespaceLabels) {
			if a.Refused == gatewayv1.RouteReasonNoMatchingParent {
				a.Refused, a.Message = gatewayv1.RouteReasonNotAllowedByListeners, "the matching listeners do not allow this route (kind, namespace) or are not valid"
			}
			continue
		}
		hosts := intersectHostnames(hostnameOf(l.Hostname), r.hostnames)
		if len(hosts) == 0 {
			a.Refused, a.Message = gatewayv1.RouteReasonNoMatchingListenerHostname, "no hostname of the route matches the listener's"
			continue
		}
		a.Listeners = append(a.Listeners, l)
		a.Hostnames = append(a.Hostnames, hosts)
	}
	if len(a.Listeners) > 0 {
		a.Refused, a.Message = "", ""
	}
	return a
}

func kindAllowed(l *Listener, kind gatewayv1.Kind) bool {
	for _, k := range l.Kinds {
		if k.Kind == kind {
			return true
		}
	}
	return false
}

// namespaceAllowed applies the listener's allowedRoutes.namespaces (Same
// when unset).
func namespaceAllowed(l *Listener, gatewayNamespace, routeNamespace string, namespaceLabels map[string]string) bool {
	from := gatewayv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	if a := l.AllowedRoutes; a != nil && a.Namespaces != nil {
		if a.Namespaces.From != nil {
			from = *a.Namespaces.From
		}
		selector = a.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSelector:
		s, err := metav1.LabelSelectorAsSelector(selector)
		return err == nil && selector != nil && s.Matches(labels.Set(namespaceLabels))
	case gatewayv1.NamespacesFromNone:
		return false
	}
	return routeNamespace == gatewayNamespace
}

// intersectHostnames are the hostnames a route serves on a listener of
// hostname listenerHost ("" for any): the route's own that the listener
// accepts, the listener's where a route's wildcard covers it, and [""]
// (any) when neither names one.
func intersectHostnames(listenerHost string, routeHosts []gatewayv1.Hostname) []string {
	if len(routeHosts) == 0 {
		return []string{listenerHost}
	}
	var out []string
	for _, h := range routeHosts {
		host := string(h)
		switch {
		case listenerHost == "" || host == listenerHost || covers(listenerHost, host):
			out = append(out, host)
		case covers(host, listenerHost):
			out = append(out, listenerHost)
		}
	}
	return out
}

// covers reports whether wildcard, a hostname like *.example.com, matches
// host: a name of one or more labels more, or a longer wildcard.
func covers(wildcard, host string) bool {
	suffix, ok := strings.CutPrefix(wildcard, "*")
	return ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix)
}

// takenByAMoreSpecificListener reports whether every request for host, a
// hostname a route serves on listener l, belongs to another listener of
// l's port whose hostname is more specific than l's: Gateway API's
// listener isolation gives such a request to that listener's routes only.
// (Where host is wider than that listener's hostname, nginx's choice of
// the most specific server_name already sends the listener's requests to
// its own server.)
func takenByAMoreSpecificListener(l *Listener, host string, ls []*Listener) bool {
	own := hostnameOf(l.Hostname)
	for _, other := range ls {
		theirs := hostnameOf(other.Hostname)
		if other == l || other.Port != l.Port || !other.Serves() || theirs == own {
			continue
		}
		if within(theirs, own) && within(host, theirs) {
			return true
		}
	}
	return false
}

// within reports whether every name host matches, a hostname or a
// wildcard, is one that pattern matches ("" matches any).
func within(host, pattern string) bool {
	return pattern == "" || host == pattern || host != "" && covers(pattern, host)
}
