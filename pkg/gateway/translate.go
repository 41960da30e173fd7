package gateway

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// ControllerName is the controllerName of the GatewayClasses this operator
// implements.
const ControllerName = gatewayv1.GatewayController("nginx.operator.dev/gateway-controller")

// Inputs are what the translation of one Gateway reads.
type Inputs struct {
	Gateway *gatewayv1.Gateway
	// HTTPRoutes and GRPCRoutes are the routes with a parentRef naming the
	// Gateway.
	HTTPRoutes []*gatewayv1.HTTPRoute
	GRPCRoutes []*gatewayv1.GRPCRoute
	// StreamRoutes are the routes below HTTP naming the Gateway, of the
	// kinds the API server serves (kindTable's optional kinds).
	StreamRoutes []client.Object
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

// RouteRef names a route of a kind.
type RouteRef struct {
	Kind gatewayv1.Kind
	Key  types.NamespacedName
}

// Translation is the NginxOperator spec a Gateway becomes, and what it and
// its routes are told.
type Translation struct {
	Spec      v1beta1.NginxOperatorSpec
	listeners []*listener
	// Routes are the status entries this Gateway owes each route.
	Routes []RouteParents
	// CertificateCopies are the Secrets the instance's servers take from
	// other namespaces than the Gateway's, which the controller copies into
	// it: the copy's name (see CertificateCopyName) -> the Secret copied.
	// Only listeners that are served have one.
	CertificateCopies map[string]types.NamespacedName
	// Policies are the verdicts on the BackendTLSPolicies of the routes'
	// Services, for their status entries of this Gateway.
	Policies map[types.NamespacedName]policyVerdict
	// invalidParameters says why the parameters the Gateway's class or the
	// Gateway name cannot be used; "" when they can, or without any.
	invalidParameters string
}

// RouteParents are the parent statuses of one route for the parentRefs
// that name the Gateway.
type RouteParents struct {
	Kind    gatewayv1.Kind
	Key     types.NamespacedName
	Parents []gatewayv1.RouteParentStatus
}

// Translate computes the instance of in.Gateway and the statuses of its
// routes. It is pure: everything it reads is in in. Each route's
// locations and streams are judged by the NginxOperator's rules as they
// are made (validation.RoutedLocation and RoutedStream): a route that
// breaks one is left out and told why, and the others are served.
func Translate(ctx context.Context, in Inputs) Translation {
	gw := in.Gateway
	refs := references{grants: in.Grants, secrets: in.Secrets, services: in.Services, externalAuths: in.ExternalAuths,
		tls: judgePolicies(in.BackendTLSPolicies, in.CAConfigMaps, in.ServicePortNames)}
	ls := readListeners(gw, refs)
	b := newServerBuilder(ctx, ls)
	var routes []RouteParents
	// HTTPRoutes first: of an HTTPRoute and a GRPCRoute with the same
	// path and match on one host (which Gateway API leaves to the
	// implementation), the HTTPRoute's serves.
	for _, rt := range sortedRoutes(in.HTTPRoutes) {
		outcomes := make([]ruleOutcome, len(rt.Spec.Rules))
		for i, rule := range rt.Spec.Rules {
			outcomes[i] = httpRule(gw, rt, rule, refs)
		}
		r := route{kind: KindHTTPRoute, meta: rt.ObjectMeta, parents: rt.Spec.ParentRefs, hostnames: rt.Spec.Hostnames}
		routes = append(routes, b.place(r, gw, ls, in.NamespaceLabels[rt.Namespace], outcomes))
	}
	for _, rt := range sortedRoutes(in.GRPCRoutes) {
		outcomes := make([]ruleOutcome, len(rt.Spec.Rules))
		for i, rule := range rt.Spec.Rules {
			outcomes[i] = grpcRule(gw, rt, rule, refs)
		}
		r := route{kind: KindGRPCRoute, meta: rt.ObjectMeta, parents: rt.Spec.ParentRefs, hostnames: rt.Spec.Hostnames}
		routes = append(routes, b.place(r, gw, ls, in.NamespaceLabels[rt.Namespace], outcomes))
	}
	for _, r := range streamRoutes(in) {
		routes = append(routes, b.placeStream(r, gw, ls, in.NamespaceLabels[r.meta.Namespace], refs))
	}
	b.holdRouters(ls)
	tr := Translation{Spec: b.spec(), listeners: ls, Routes: routes, CertificateCopies: certificateCopies(gw, ls),
		Policies: refs.tls.verdicts}
	tr.Spec.ChildMetadata = childMetadata(gw)
	applyParameters(&tr.Spec, in.Parameters.Spec)
	if why := in.Parameters.Invalid; why != "" {
		// Gateway API asks that a Gateway whose parameters cannot be used
		// be refused rather than run with other settings than it asked for.
		tr.invalidParameters = why
		pendRoutes(tr.Routes, "the Gateway is not accepted: "+why)
	}
	return tr
}

// childMetadata are the labels and annotations of every object of gw's
// instance: its spec.infrastructure's, and the gateway-name label, by which
// Gateway API finds the objects a Gateway made.
func childMetadata(gw *gatewayv1.Gateway) v1beta1.ChildMetadata {
	out := v1beta1.ChildMetadata{Labels: map[string]string{LabelGatewayName: gw.Name}}
	infra := gw.Spec.Infrastructure
	if infra == nil {
		return out
	}
	for k, v := range infra.Labels {
		if k != LabelGatewayName {
			out.Labels[string(k)] = string(v)
		}
	}
	for k, v := range infra.Annotations {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[string(k)] = string(v)
	}
	return out
}

// pendRoutes makes every route's entry for the Gateway not accepted,
// reason Pending, with msg: the Gateway they attach to is not served.
func pendRoutes(routes []RouteParents, msg string) {
	for i := range routes {
		for j := range routes[i].Parents {
			p := &routes[i].Parents[j]
			meta.SetStatusCondition(&p.Conditions, conditions.RoutePending(acceptedGeneration(p.Conditions), msg))
		}
	}
}

// acceptedGeneration is the observedGeneration of a route entry's Accepted
// condition.
func acceptedGeneration(conds []metav1.Condition) int64 {
	if c := meta.FindStatusCondition(conds, string(gatewayv1.RouteConditionAccepted)); c != nil {
		return c.ObservedGeneration
	}
	return 0
}

// place attaches route r, whose rules became outcomes, to the listeners
// of gw it may attach to, adds its locations to their servers (unless the
// route is not accepted), and returns the route's status entries.
func (b *serverBuilder) place(r route, gw *gatewayv1.Gateway, ls []*listener, namespaceLabels map[string]string, outcomes []ruleOutcome) RouteParents {
	attachments := attach(r, gw, ls, namespaceLabels)
	unsupported := firstUnsupported(outcomes)
	if unsupported == "" {
		unsupported = b.breaksLocationRules(outcomes)
	}
	var adds []addition
	for _, a := range attachments {
		if a.refused != "" || unsupported != "" {
			continue
		}
		for i, l := range a.listeners {
			if !l.serves() {
				continue
			}
			for _, host := range a.hostnames[i] {
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
		refuseForRoom(attachments, noRoomMessage)
		adds = nil
	}
	countAttached(attachments, unsupported)
	placed := 0
	for _, add := range adds {
		placed += b.add(add)
	}
	return RouteParents{Kind: r.kind, Key: types.NamespacedName{Namespace: r.meta.Namespace, Name: r.meta.Name},
		Parents: parentStatuses(r.meta.Generation, attachments, outcomes, unsupported, len(adds) > 0 && placed == 0)}
}

// certificateCopies are the copies the served listeners of gw need, by
// name; nil for none.
func certificateCopies(gw *gatewayv1.Gateway, ls []*listener) map[string]types.NamespacedName {
	var out map[string]types.NamespacedName
	for _, l := range ls {
		if !l.serves() || !terminatesTLS(l.Listener) || l.certificate.Namespace == gw.Namespace {
			continue
		}
		if out == nil {
			out = map[string]types.NamespacedName{}
		}
		out[l.secretName] = l.certificate
	}
	return out
}

// Accepted reports whether the Gateway has a listener of a supported
// protocol; Gateway API does not accept one without.
func (t Translation) Accepted() bool {
	return t.invalidParameters == "" && slices.ContainsFunc(t.listeners, (*listener).attachable)
}

// AllListenersAccepted reports whether every listener has a supported
// protocol.
func (t Translation) AllListenersAccepted() bool {
	return !slices.ContainsFunc(t.listeners, func(l *listener) bool { return !l.attachable() })
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

// breaksLocationRules says which rule of the NginxOperator's a location
// of outcomes breaks, and how; "" when none does.
func (b *serverBuilder) breaksLocationRules(outcomes []ruleOutcome) string {
	for _, o := range outcomes {
		for _, l := range o.locations {
			if _, errs := validation.RoutedLocation(b.ctx, l); len(errs) > 0 {
				return cannotHold(errs)
			}
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

// refuseForRoom refuses each attachment not refused already, with message:
// the instance has no room for the route.
func refuseForRoom(attachments []attachment, message string) {
	for i := range attachments {
		if attachments[i].refused == "" {
			attachments[i].refused, attachments[i].message = conditions.RouteReasonNoRoom, message
		}
	}
}

// countAttached counts a route on each listener it is attached to: every
// one of its accepted attachments, unless it is not accepted at all
// (unsupported).
func countAttached(attachments []attachment, unsupported string) {
	if unsupported != "" {
		return
	}
	for _, a := range attachments {
		if a.refused == "" {
			for _, l := range a.listeners {
				l.attached++
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

// parentStatuses are the route's conditions for each of its parentRefs to
// the Gateway; overridden when older routes take all the route would
// serve.
func parentStatuses(gen int64, attachments []attachment, outcomes []ruleOutcome, unsupported string, overridden bool) []gatewayv1.RouteParentStatus {
	resolved := conditions.RouteResolvedRefs(gen)
	for _, o := range outcomes {
		if o.refFault != "" {
			resolved = conditions.RouteRefNotResolved(gen, o.refFault, o.refMessage)
			break
		}
	}
	var out []gatewayv1.RouteParentStatus
	for _, a := range attachments {
		accepted := conditions.RouteAccepted(gen)
		if overridden {
			accepted = conditions.RouteAcceptedOverridden(gen)
		}
		switch {
		case a.refused != "":
			accepted = conditions.RouteNotAccepted(gen, a.refused, a.message)
		case unsupported != "":
			accepted = conditions.RouteUnsupportedValue(gen, unsupported)
		}
		out = append(out, gatewayv1.RouteParentStatus{
			ParentRef: a.ref, ControllerName: ControllerName,
			Conditions: []metav1.Condition{accepted, resolved},
		})
	}
	return out
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

func newServerBuilder(ctx context.Context, ls []*listener) *serverBuilder {
	b := &serverBuilder{ctx: ctx, index: map[string]int{}, seen: map[string]bool{}, httpPorts: map[string]bool{}}
	// A TCP and a UDP port may share a number (containerPort).
	taken := map[bool]map[int32]bool{false: {}, true: {}}
	for _, l := range ls {
		taken[l.Protocol == gatewayv1.UDPProtocolType][int32(l.Port)] = true
	}
	for _, l := range ls {
		if !l.serves() {
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
func portNameOf(l *listener) string {
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
func (b *serverBuilder) server(l *listener, host string) int {
	key := serverKey(l, host)
	if i, ok := b.index[key]; ok {
		return i
	}
	s := v1beta1.Server{Port: portName(l.Port), DefaultServer: host == ""}
	if host != "" {
		s.ServerNames = []string{host}
	}
	if l.Protocol == gatewayv1.HTTPSProtocolType {
		s.TLS = &v1beta1.TLS{SecretName: l.secretName}
	}
	b.index[key] = len(b.servers)
	b.servers = append(b.servers, s)
	return b.index[key]
}

// serverKey identifies the server of listener l for host in index.
func serverKey(l *listener, host string) string { return portName(l.Port) + " " + host }

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
	listener  *listener
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
	notFoundKey := v1beta1.LocationMatchKey(notFoundLocation)
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

// notFoundLocation answers 404 to a request no route matches, rather than
// a file of nginx's root: the last location of every server, tied with a
// route's / and after it in the list.
var notFoundLocation = v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}}

// spec is the instance's spec: its ports, its servers, and on each port
// a default server answering 404 where no listener takes any host.
func (b *serverBuilder) spec() v1beta1.NginxOperatorSpec {
	servers := slices.Clone(b.servers)
	for _, p := range b.ports {
		if b.httpPorts[p.Name] && !slices.ContainsFunc(servers, func(s v1beta1.Server) bool { return s.Port == p.Name && s.DefaultServer }) {
			var tls *v1beta1.TLS
			if i := slices.IndexFunc(servers, func(s v1beta1.Server) bool { return s.Port == p.Name }); i >= 0 {
				tls = servers[i].TLS
			}
			servers = append(servers, v1beta1.Server{Port: p.Name, DefaultServer: true, TLS: tls})
		}
	}
	for i := range servers {
		if !slices.ContainsFunc(servers[i].Locations, func(l v1beta1.Location) bool {
			return v1beta1.LocationMatchKey(l) == v1beta1.LocationMatchKey(notFoundLocation)
		}) {
			servers[i].Locations = append(servers[i].Locations, notFoundLocation)
		}
	}
	ports := slices.Clone(b.ports)
	for i := range ports {
		ports[i].H2C = servesGRPCInPlainText(servers, ports[i].Name)
	}
	return v1beta1.NginxOperatorSpec{Ports: ports, Config: v1beta1.NginxConfig{Servers: servers, Streams: slices.Clone(b.streams)}}
}

// servesGRPCInPlainText reports whether a plain-text server of port sends
// gRPC: its clients then speak HTTP/2 without TLS (h2c), which the port
// must accept (nginx 1.25.1 and later keep HTTP/1.1 on it too).
func servesGRPCInPlainText(servers []v1beta1.Server, port string) bool {
	for _, s := range servers {
		if s.Port != port || s.TLS != nil {
			continue
		}
		for _, l := range s.Locations {
			if l.Proxy != nil && l.Proxy.BackendProtocol == "GRPC" {
				return true
			}
		}
	}
	return false
}
