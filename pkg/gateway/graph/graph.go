// Package graph is the first stage of the Gateway wing: a Gateway and
// everything it reads (Inputs), each object judged once, and the routes
// placed on the instance's servers and streams as they are judged.
//
// It guarantees:
//   - purity: Build reads nothing but its Inputs, and imports no client,
//     no controller-runtime, no condition catalog and no nginx controller
//     (hack/structure holds it to that);
//   - isolation: each route's locations and streams are checked against
//     the NginxOperator's rules as they are made (validation.RoutedLocation
//     and RoutedStream, pkg/nginx/regex for every regular expression); a
//     route that breaks one is left out with its verdict, and the others
//     are placed as if it did not exist;
//   - precedence: routes are placed oldest first (then by namespace and
//     name), so a newer route never takes what an older one serves, and a
//     route the instance has no room for is refused whole.
//
// The instance stage (pkg/gateway/instance) makes the NginxOperator spec of
// what the graph placed; the status stage (pkg/gateway/status) makes every
// status of its verdicts.
package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// ControllerName is the controllerName of the GatewayClasses this operator
// implements.
const ControllerName = gatewayv1.GatewayController("nginx.operator.dev/gateway-controller")

// Inputs are what the graph of one Gateway reads.
type Inputs struct {
	Gateway *gatewayv1.Gateway
	// HTTPRoutes and GRPCRoutes are the routes with a parentRef naming the
	// Gateway.
	HTTPRoutes []*gatewayv1.HTTPRoute
	GRPCRoutes []*gatewayv1.GRPCRoute
	// StreamRoutes are the routes below HTTP naming the Gateway, of the
	// kinds the API server serves (the optional kinds of Kinds).
	StreamRoutes []Object
	// Grants are the ReferenceGrants of the namespaces the Gateway and its
	// routes refer to, by namespace.
	Grants map[string][]gatewayv1.ReferenceGrant
	// Secrets are the TLS Secrets that exist with a certificate and key.
	Secrets map[types.NamespacedName]bool
	// Services are the Services the routes refer to that exist.
	Services map[types.NamespacedName]bool
	// NamespaceLabels are the labels of the routes' namespaces.
	NamespaceLabels map[string]map[string]string
	// BackendTLSPolicies are the policies naming the Services the routes
	// refer to; CAConfigMaps tells which ConfigMaps they name exist with
	// PEM certificates under ca.crt; ServicePortNames are the port names
	// of the Services a policy names a port of (by sectionName), by
	// number.
	BackendTLSPolicies []gatewayv1.BackendTLSPolicy
	CAConfigMaps       map[types.NamespacedName]bool
	ServicePortNames   map[types.NamespacedName]map[int32]string
	// ExternalAuths are the specs of the NginxExternalAuths the routes'
	// ExtensionRef filters name that exist.
	ExternalAuths map[types.NamespacedName]*v1beta1.ExternalAuth
	// Parameters are the settings the Gateway's class and the Gateway name.
	Parameters Parameters
}

// Routes are the routes of in, as objects.
func (in Inputs) Routes() []Object {
	out := make([]Object, 0, len(in.HTTPRoutes)+len(in.GRPCRoutes)+len(in.StreamRoutes))
	for _, rt := range in.HTTPRoutes {
		out = append(out, rt)
	}
	for _, rt := range in.GRPCRoutes {
		out = append(out, rt)
	}
	return append(out, in.StreamRoutes...)
}

// Parameters are the settings a Gateway's class and the Gateway name.
type Parameters struct {
	// Spec is the class's parameters with each field the Gateway's set
	// replacing it; nil without any.
	Spec *v1beta1.NginxGatewayParametersSpec
	// Invalid says why a reference cannot be used (another kind, a missing
	// object); the Gateway is then not accepted.
	Invalid string
}

// Graph is a Gateway judged: its listeners, its routes and policies with
// their verdicts, and what the routes placed.
type Graph struct {
	Gateway   *gatewayv1.Gateway
	Listeners []*Listener
	// Routes are the verdicts on the routes naming the Gateway, in the
	// order they were placed.
	Routes []Route
	// Placed is what the routes placed on the instance.
	Placed Placed
	// CertificateCopies are the Secrets the instance's servers take from
	// other namespaces than the Gateway's, which the controller copies into
	// it: the copy's name (see CertificateCopyName) -> the Secret copied.
	// Only listeners that are served have one.
	CertificateCopies map[string]types.NamespacedName
	// Policies are the verdicts on the BackendTLSPolicies of the routes'
	// Services, for their status entries of this Gateway.
	Policies map[types.NamespacedName]PolicyVerdict
	// Parameters are the Inputs'.
	Parameters Parameters
}

// Route is the verdict on one route for the Gateway.
type Route struct {
	Kind       gatewayv1.Kind
	Key        types.NamespacedName
	Generation int64
	// Attachments are where each of its parentRefs naming the Gateway
	// attaches, or why it does not.
	Attachments []Attachment
	// Unsupported says what of the route this implementation cannot serve,
	// or which rule of the NginxOperator its locations or streams break
	// (it is then not accepted); "" for nothing.
	Unsupported string
	// RefFault is the ResolvedRefs reason of its first reference that does
	// not resolve ("" when all do), and RefMessage says which.
	RefFault   gatewayv1.RouteConditionReason
	RefMessage string
	// Overridden: older routes take every match it would serve.
	Overridden bool
	// Placed is what it has on the instance.
	Placed Placement
}

// Placement is what one route placed on the instance: its locations and
// on how many servers, its streams.
type Placement struct {
	Servers, Locations, Streams int32
}

// RouteRef names a route of a kind.
type RouteRef struct {
	Kind gatewayv1.Kind
	Key  types.NamespacedName
}

// Build judges in.Gateway and everything it reads, and places its routes.
// It is pure: everything it reads is in in. Each route's locations and
// streams are judged by the NginxOperator's rules as they are made
// (validation.RoutedLocation and RoutedStream): a route that breaks one is
// left out and told why, and the others are served.
func Build(ctx context.Context, in Inputs) Graph {
	gw := in.Gateway
	refs := references{grants: in.Grants, secrets: in.Secrets, services: in.Services, externalAuths: in.ExternalAuths,
		tls: judgePolicies(in.BackendTLSPolicies, in.CAConfigMaps, in.ServicePortNames)}
	ls := readListeners(gw, refs)
	b := newServerBuilder(ctx, ls)
	routes := make([]Route, 0, len(in.HTTPRoutes)+len(in.GRPCRoutes)+len(in.StreamRoutes))
	// HTTPRoutes first: of an HTTPRoute and a GRPCRoute with the same
	// path and match on one host (which Gateway API leaves to the
	// implementation), the HTTPRoute's serves.
	for _, rt := range sortedRoutes(in.HTTPRoutes) {
		r := route{kind: KindHTTPRoute, meta: rt.ObjectMeta, parents: rt.Spec.ParentRefs, hostnames: rt.Spec.Hostnames}
		outcomes := outcomesOf(rt.Spec.Rules, func(rule gatewayv1.HTTPRouteRule) ruleOutcome { return httpRule(gw, rt, rule, refs) })
		routes = append(routes, b.place(r, gw, ls, in.NamespaceLabels[rt.Namespace], outcomes))
	}
	for _, rt := range sortedRoutes(in.GRPCRoutes) {
		r := route{kind: KindGRPCRoute, meta: rt.ObjectMeta, parents: rt.Spec.ParentRefs, hostnames: rt.Spec.Hostnames}
		outcomes := outcomesOf(rt.Spec.Rules, func(rule gatewayv1.GRPCRouteRule) ruleOutcome { return grpcRule(gw, rt, rule, refs) })
		routes = append(routes, b.place(r, gw, ls, in.NamespaceLabels[rt.Namespace], outcomes))
	}
	for _, r := range streamRoutes(in) {
		routes = append(routes, b.placeStream(r, gw, ls, in.NamespaceLabels[r.meta.Namespace], refs))
	}
	b.holdRouters(ls)
	return Graph{Gateway: gw, Listeners: ls, Routes: routes, Placed: b.placed(), CertificateCopies: certificateCopies(gw, ls),
		Policies: refs.tls.verdicts, Parameters: in.Parameters}
}

// outcomesOf are what each of a route's rules becomes, by translate.
func outcomesOf[R any](rules []R, translate func(R) ruleOutcome) []ruleOutcome {
	out := make([]ruleOutcome, len(rules))
	for i, rule := range rules {
		out[i] = translate(rule)
	}
	return out
}

// place attaches route r, whose rules became outcomes, to the listeners
// of gw it may attach to, adds its locations to their servers (unless the
// route is not accepted), and returns its verdict.
func (b *serverBuilder) place(r route, gw *gatewayv1.Gateway, ls []*Listener, namespaceLabels map[string]string, outcomes []ruleOutcome) Route {
	attachments := attach(r, gw, ls, namespaceLabels)
	unsupported := firstUnsupported(outcomes)
	if unsupported == "" {
		unsupported = b.checkLocations(outcomes)
	}
	var adds []addition
	for _, a := range attachments {
		if a.Refused != "" || unsupported != "" {
			continue
		}
		for i, l := range a.Listeners {
			if !l.Serves() {
				continue
			}
			for _, host := range a.Hostnames[i] {
				if takenByAMoreSpecificListener(l, host, ls) {
					continue
				}
				for _, o := range outcomes {
					adds = append(adds, addition{l, host, o.locations})
				}
			}
		}
	}
	// A route the instance has no room for is refused as a whole, so
	// that the routes placed before it (older ones: see sortedRoutes)
	// keep serving and later changes to them still apply.
	if !b.fits(adds) {
		noRoomFor(attachments, noRoomMessage)
		adds = nil
	}
	countAttached(attachments, unsupported)
	var placed Placement
	servers := map[int]bool{}
	for _, add := range adds {
		if n := b.add(add); n > 0 {
			placed.Locations += int32(n)
			servers[b.server(add.listener, add.host)] = true
		}
	}
	placed.Servers = int32(len(servers))
	return r.verdict(attachments, outcomes, unsupported, len(adds) > 0 && placed.Locations == 0, placed)
}

// verdict is r's: where it attaches, what of it is unsupported, its first
// reference of outcomes that does not resolve, whether older routes
// override it, and what it placed.
func (r route) verdict(attachments []Attachment, outcomes []ruleOutcome, unsupported string, overridden bool, placed Placement) Route {
	out := Route{Kind: r.kind, Key: types.NamespacedName{Namespace: r.meta.Namespace, Name: r.meta.Name}, Generation: r.meta.Generation,
		Attachments: attachments, Unsupported: unsupported, Overridden: overridden, Placed: placed}
	for _, o := range outcomes {
		if o.refFault != "" {
			out.RefFault, out.RefMessage = o.refFault, o.refMessage
			break
		}
	}
	return out
}

// certificateCopies are the copies the served listeners of gw need, by
// name; nil for none.
func certificateCopies(gw *gatewayv1.Gateway, ls []*Listener) map[string]types.NamespacedName {
	var out map[string]types.NamespacedName
	for _, l := range ls {
		if !l.Serves() || !terminatesTLS(l.Listener) || l.Certificate.Namespace == gw.Namespace {
			continue
		}
		if out == nil {
			out = map[string]types.NamespacedName{}
		}
		out[l.SecretName] = l.Certificate
	}
	return out
}

// Accepted reports whether the Gateway's parameters can be used and it
// has a listener of a supported protocol; Gateway API does not accept one
// without.
func (g Graph) Accepted() bool {
	return g.Parameters.Invalid == "" && slices.ContainsFunc(g.Listeners, (*Listener).Attachable)
}

// AllListenersAccepted reports whether every listener has a supported
// protocol.
func (g Graph) AllListenersAccepted() bool {
	return !slices.ContainsFunc(g.Listeners, func(l *Listener) bool { return !l.Attachable() })
}

// sortedRoutes orders routes as Gateway API breaks ties between them: the
// oldest first, then by namespace and name.
func sortedRoutes[T metav1.Object](routes []T) []T {
	out := slices.Clone(routes)
	slices.SortStableFunc(out, func(a, b T) int {
		if c := a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}

// checkLocations puts each location of outcomes in the form the
// NginxOperator's rules give it (the schema's defaults), the form the
// instance's check takes it in (validation.RoutedNginxOperatorOf-
// CheckedLocations), and says which rule one of them breaks, and how; ""
// when none does.
func (b *serverBuilder) checkLocations(outcomes []ruleOutcome) string {
	for _, o := range outcomes {
		for i, l := range o.locations {
			checked, errs := validation.RoutedLocation(b.ctx, l)
			if len(errs) > 0 {
				return cannotHold(errs)
			}
			o.locations[i] = checked
		}
	}
	return ""
}

// cannotHold is the message of a route whose location or stream breaks
// the rules of the NginxOperator its Gateway becomes: errs, whose paths
// start at the location or stream.
func cannotHold(errs field.ErrorList) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.ErrorBody()
		if e.Field != "" && e.Field != "<nil>" {
			msg = e.Field + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	return "the NginxOperator this Gateway becomes cannot hold what this route makes: " + strings.Join(msgs, "; ")
}

// noRoomFor marks each attachment not refused already as one the
// instance has no room for, saying so with message.
func noRoomFor(attachments []Attachment, message string) {
	for i := range attachments {
		if attachments[i].Refused == "" && attachments[i].NoRoom == "" {
			attachments[i].NoRoom = message
		}
	}
}

// countAttached counts a route on each listener it is attached to: every
// one of its accepted attachments, unless it is not accepted at all
// (unsupported).
func countAttached(attachments []Attachment, unsupported string) {
	if unsupported != "" {
		return
	}
	for _, a := range attachments {
		if a.Accepted() {
			for _, l := range a.Listeners {
				l.Attached++
			}
		}
	}
}

func firstUnsupported(outcomes []ruleOutcome) string {
	for _, o := range outcomes {
		if o.unsupported != "" {
			return o.unsupported
		}
	}
	return ""
}

// serverBuilder collects the servers of the instance: one per port and
// hostname, in the order they first appear; and its streams
// (streamroute.go).
type serverBuilder struct {
	// ctx bounds the checks of the NginxOperator's rules.
	ctx     context.Context
	ports   []v1beta1.Port
	servers []v1beta1.Server
	index   map[string]int // port name + " " + hostname -> server
	// seen are the locations placed (server index + " " + match key), the
	// TCP and UDP ports a route took (port name) and the TLS names
	// (port name + " " + hostname).
	seen    map[string]bool
	streams []v1beta1.Stream
	// httpPorts are the ports of HTTP and HTTPS listeners, which get a
	// default server.
	httpPorts map[string]bool
}

func newServerBuilder(ctx context.Context, ls []*Listener) *serverBuilder {
	b := &serverBuilder{ctx: ctx, index: map[string]int{}, seen: map[string]bool{}, httpPorts: map[string]bool{}}
	// A TCP and a UDP port may share a number (containerPort).
	taken := map[bool]map[int32]bool{false: {}, true: {}}
	for _, l := range ls {
		taken[l.Protocol == gatewayv1.UDPProtocolType][int32(l.Port)] = true
	}
	for _, l := range ls {
		if !l.Serves() {
			continue
		}
		name := portNameOf(l)
		if !slices.ContainsFunc(b.ports, func(p v1beta1.Port) bool { return p.Name == name }) {
			port := v1beta1.Port{Name: name, ContainerPort: containerPort(l.Port, taken[l.Protocol == gatewayv1.UDPProtocolType]), ServicePort: int32(l.Port)}
			if l.Protocol == gatewayv1.UDPProtocolType {
				port.Protocol = corev1.ProtocolUDP
			}
			b.ports = append(b.ports, port)
		}
		if !l.isStream() {
			b.httpPorts[name] = true
			b.server(l, hostnameOf(l.Hostname))
		}
	}
	return b
}

// portName names the instance's port of a listener port over TCP.
func portName(port gatewayv1.PortNumber) string { return "p" + strconv.Itoa(int(port)) }

// portNameOf names the instance's port of listener l: a UDP listener's
// port is another than a TCP listener's of the same number.
func portNameOf(l *Listener) string {
	if l.Protocol == gatewayv1.UDPProtocolType {
		return "u" + strconv.Itoa(int(l.Port))
	}
	return portName(l.Port)
}

// containerPort is where nginx listens for a listener port: the port
// itself when an unprivileged process may bind it, else one above 8000
// (80 on 8080) that no listener uses and the operator does not reserve.
func containerPort(port gatewayv1.PortNumber, taken map[int32]bool) int32 {
	p := int32(port)
	if p >= 1024 {
		return p
	}
	for c := 8000 + p; ; c++ {
		if !taken[c] && !layout.Reserved(c) {
			taken[c] = true
			return c
		}
	}
}

// server is the index of the server of listener l for host ("" for any
// host), made on first use.
func (b *serverBuilder) server(l *Listener, host string) int {
	key := serverKey(l, host)
	if i, ok := b.index[key]; ok {
		return i
	}
	s := v1beta1.Server{Port: portName(l.Port), DefaultServer: host == ""}
	if host != "" {
		s.ServerNames = []string{host}
	}
	if l.Protocol == gatewayv1.HTTPSProtocolType {
		s.TLS = &v1beta1.TLS{SecretName: l.SecretName}
	}
	b.index[key] = len(b.servers)
	b.servers = append(b.servers, s)
	return b.index[key]
}

// serverKey identifies the server of listener l for host in index.
func serverKey(l *Listener, host string) string { return portName(l.Port) + " " + host }

// add appends a's locations to the server of its listener and host, but
// for one whose path, type and match an older route's location already
// has there.
func (b *serverBuilder) add(a addition) (placed int) {
	i := b.server(a.listener, a.host)
	for _, loc := range a.locations {
		key := strconv.Itoa(i) + " " + v1beta1.LocationMatchKey(loc)
		if b.seen[key] {
			continue
		}
		b.seen[key] = true
		b.servers[i].Locations = append(b.servers[i].Locations, loc)
		placed++
	}
	return placed
}

var noRoomMessage = fmt.Sprintf("the Gateway's nginx instance has no room for this route: it holds at most %d servers "+
	"(one per listener port and hostname, and a default one per port) and %d locations per server (one per match of a rule), "+
	"404 included; older routes keep theirs", MaxServers, MaxLocations)

// MaxServers and MaxLocations are the room of a Gateway's instance: its
// servers and the locations of each. Its servers are not in the
// NginxOperator's spec, whose CRD holds v1beta1.MaxServers of
// v1beta1.MaxLocations (pkg/routetable), so what bounds them is the
// rendered nginx.conf, which a Secret of 1 MiB carries: a route to a
// Service others use too takes about 220 bytes of it (Documentation/
// performance.md), and 2,048 of them leave room for matches, filters and
// upstreams of their own. A Gateway's 64 listeners (Gateway API's limit)
// take at most 128 servers, so the room limits routes only.
const (
	MaxServers   = 2048
	MaxLocations = 2048
)

// addition is locations a route adds to the server of a listener and host.
type addition struct {
	listener  *Listener
	host      string
	locations []v1beta1.Location
}

// fits reports whether the instance's spec holds what adds would make of
// it: at most MaxServers servers, counting the default server spec
// adds to each port that has none, and at most MaxLocations
// locations in each, counting the 404 location spec adds to a server
// without one for /.
func (b *serverBuilder) fits(adds []addition) bool {
	servers := len(b.servers)
	for _, p := range b.ports {
		if b.httpPorts[p.Name] && !slices.ContainsFunc(b.servers, func(s v1beta1.Server) bool { return s.Port == p.Name && s.DefaultServer }) {
			servers++
		}
	}
	added := map[string]map[string]bool{} // server key -> match keys of its new locations
	for _, a := range adds {
		key := serverKey(a.listener, a.host)
		i, exists := b.index[key]
		if added[key] == nil {
			added[key] = map[string]bool{}
			if !exists {
				servers++
			}
		}
		for _, loc := range a.locations {
			match := v1beta1.LocationMatchKey(loc)
			if !exists || !b.seen[strconv.Itoa(i)+" "+match] {
				added[key][match] = true
			}
		}
	}
	if servers > MaxServers {
		return false
	}
	notFoundKey := v1beta1.LocationMatchKey(NotFoundLocation)
	for key, matches := range added {
		n, hasNotFound := len(matches), matches[notFoundKey]
		if i, ok := b.index[key]; ok {
			n += len(b.servers[i].Locations)
			hasNotFound = hasNotFound || b.seen[strconv.Itoa(i)+" "+notFoundKey]
		}
		if !hasNotFound {
			n++
		}
		if n > MaxLocations {
			return false
		}
	}
	return true
}

// NotFoundLocation answers 404 to a request no route matches, rather than
// a file of nginx's root: the last location the instance gives every
// server, tied with a route's / and after it in the list. The room of a
// server (fits) counts it.
var NotFoundLocation = v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}}

// Placed is what the routes of a Gateway placed on its instance: the
// ports of its served listeners, the servers of each listener port and
// hostname with the routes' locations (none added for the instance's own:
// see NotFoundLocation), and the streams.
type Placed struct {
	Ports   []v1beta1.Port
	Servers []v1beta1.Server
	Streams []v1beta1.Stream
	// HTTPPorts are the ports of HTTP and HTTPS listeners, each of which
	// the instance gives a default server.
	HTTPPorts map[string]bool
}

// placed hands what b placed over to the Graph, without a copy: b is not
// used after.
func (b *serverBuilder) placed() Placed {
	return Placed{Ports: b.ports, Servers: b.servers, Streams: b.streams, HTTPPorts: b.httpPorts}
}

// Name is the route as kubectl names it, <resource>/<namespace>/<name>:
// its locations' name, the route label of the request metrics.
func (r Route) Name() string {
	return routeName(strings.ToLower(string(r.Kind)), r.Key.Namespace, r.Key.Name)
}
