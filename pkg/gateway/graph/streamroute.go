package graph

import (
	"slices"
	"strconv"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// Gateway API's routes below HTTP (tlsroute.go, tcproute.go and the like)
// become the instance's streams (v1beta1.Stream).

// streamRoute is what the graph reads of a route below HTTP: how
// it attaches, and the backends of its rules.
type streamRoute struct {
	route
	backendRefs []gatewayv1.BackendRef
}

// streamRoutes are the routes of in below HTTP, kind by kind in
// kindTable's order, each kind oldest first.
func streamRoutes(in Inputs) []streamRoute {
	byKind := map[gatewayv1.Kind][]Object{}
	for _, rt := range in.StreamRoutes {
		if k := KindOf(rt); k != nil {
			byKind[k.Kind] = append(byKind[k.Kind], rt)
		}
	}
	var out []streamRoute
	for _, k := range kindTable {
		for _, rt := range sortedRoutes(byKind[k.Kind]) {
			p := k.parts(rt)
			out = append(out, streamRoute{backendRefs: p.BackendRefs, route: route{kind: k.Kind, meta: *p.Meta, parents: p.Parents, hostnames: p.Hostnames}})
		}
	}
	return out
}

// streamAddition is what a route adds on one listener: the names it takes
// there (a TLS listener's; none on TCP and UDP), and its backends.
type streamAddition struct {
	listener *Listener
	hosts    []string
	backends []v1beta1.Backend
}

// placeStream attaches r to the listeners of gw it may attach to, makes its
// streams (unless the route is not accepted), and returns its status
// entries. On a TCP or UDP listener the oldest route takes the port, and
// the others are attached without traffic, as Gateway API has it; on a TLS
// listener each name goes to the oldest route that has it.
func (b *serverBuilder) placeStream(r streamRoute, gw *gatewayv1.Gateway, ls []*Listener, namespaceLabels map[string]string, refs references) Route {
	attachments := attach(r.route, gw, ls, namespaceLabels)
	backends, fault, message := resolveBackends(gw, r.kind, r.meta.Namespace, r.backendRefs, refs)
	outcome := ruleOutcome{refFault: fault, refMessage: message}
	var adds []streamAddition
	for _, a := range attachments {
		if a.Refused != "" {
			continue
		}
		for i, l := range a.Listeners {
			if !l.Serves() {
				continue
			}
			add := streamAddition{listener: l, backends: backends}
			for _, host := range a.Hostnames[i] {
				if l.Protocol == gatewayv1.TLSProtocolType && !takenByAMoreSpecificListener(l, host, ls) {
					add.hosts = append(add.hosts, host)
				}
			}
			adds = append(adds, add)
		}
	}
	unsupported := b.breaksStreamRules(adds)
	if unsupported != "" {
		adds = nil
	}
	if !b.fitsStreams(adds) {
		noRoomFor(attachments, noStreamRoomMessage)
		adds = nil
	}
	countAttached(attachments, unsupported)
	var placed Placement
	for _, add := range adds {
		placed.Streams += b.addStream(add)
	}
	return r.verdict(attachments, []ruleOutcome{outcome}, unsupported, len(adds) > 0 && placed.Streams == 0, placed)
}

var noStreamRoomMessage = "the Gateway's nginx instance has no room for this route's streams: it holds at most " +
	strconv.Itoa(v1beta1.MaxStreams) + " (one per TCP or UDP listener, one per TLS route and listener, of at most " +
	strconv.Itoa(v1beta1.MaxStreamServerNames) + " names each); older routes keep theirs"

// breaksStreamRules says which rule of the NginxOperator's a stream adds
// would make breaks, and how; "" when none does. Each add is judged by
// its first stream: the others differ only in their names.
func (b *serverBuilder) breaksStreamRules(adds []streamAddition) string {
	for _, add := range adds {
		s := add.stream(add.hosts[:min(len(add.hosts), v1beta1.MaxStreamServerNames)])
		if _, errs := validation.RoutedStream(b.ctx, s); len(errs) > 0 {
			return cannotHold(errs)
		}
	}
	return ""
}

// stream is a stream of add with names, on its listener's port.
func (add streamAddition) stream(names []string) v1beta1.Stream {
	var tls *v1beta1.StreamTLS
	if terminatesTLS(add.listener.Listener) {
		tls = &v1beta1.StreamTLS{SecretName: add.listener.SecretName}
	}
	return v1beta1.Stream{Port: portNameOf(add.listener), ServerNames: names, TLS: tls, Backends: add.backends}
}

// addStream makes add's streams: the port of a TCP or UDP listener, unless
// an older route took it; on a TLS listener, the names no older route
// took, in streams of at most v1beta1.MaxStreamServerNames names. A route
// whose backends all failed to resolve takes what it may with a stream of
// no backend: nginx closes its port, or its names, to clients. It returns
// how many streams it made.
func (b *serverBuilder) addStream(add streamAddition) (streams int32) {
	port := portNameOf(add.listener)
	if add.listener.Protocol != gatewayv1.TLSProtocolType {
		if b.seen[port] {
			return 0
		}
		b.seen[port] = true
		b.streams = append(b.streams, v1beta1.Stream{Port: port, Backends: add.backends})
		return 1
	}
	var names []string
	for _, host := range add.hosts {
		if key := port + " " + host; !b.seen[key] {
			b.seen[key] = true
			names = append(names, host)
		}
	}
	for chunk := range slices.Chunk(names, v1beta1.MaxStreamServerNames) {
		b.streams = append(b.streams, add.stream(chunk))
		streams++
	}
	return streams
}

// holdRouters gives each served TLS listener that shares its port with
// HTTPS servers a stream for its own hostname, with no backend, unless a
// route took that very name: nginx closes connections for a name of the
// listener that no route takes, as Gateway API has it, rather than hand
// them to the HTTPS servers. And the port keeps its router (render's
// stream.go) while the listener is there, whatever its routes do: were
// the last route's removal to take the router away, the HTTPS servers
// would move from the router's socket to the port, and the requests of
// connections the old workers still route would be lost in the reload.
func (b *serverBuilder) holdRouters(ls []*Listener) {
	for _, l := range ls {
		port := portNameOf(l)
		if l.Protocol != gatewayv1.TLSProtocolType || !l.Serves() || !b.httpPorts[port] || len(b.streams) >= v1beta1.MaxStreams {
			continue
		}
		host := hostnameOf(l.Hostname)
		if host == "" || b.seen[port+" "+host] {
			continue
		}
		b.seen[port+" "+host] = true
		b.streams = append(b.streams, streamAddition{listener: l}.stream([]string{host}))
	}
}

// fitsStreams reports whether the instance holds the streams adds would
// make (an upper bound: names an older route took count too).
func (b *serverBuilder) fitsStreams(adds []streamAddition) bool {
	n := len(b.streams)
	for _, a := range adds {
		n += (len(a.hosts) + v1beta1.MaxStreamServerNames - 1) / v1beta1.MaxStreamServerNames
		if a.listener.Protocol != gatewayv1.TLSProtocolType {
			n++
		}
	}
	return n <= v1beta1.MaxStreams
}
