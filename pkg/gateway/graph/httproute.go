package graph

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/regex"
)

// KindHTTPRoute is Gateway API's HTTP route: its rules become locations
// of the servers of its listeners' ports and hostnames.
const KindHTTPRoute = gatewayv1.Kind("HTTPRoute")

var httpRouteKind = RouteKind{
	Kind: KindHTTPRoute, Protocols: []gatewayv1.ProtocolType{gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType},
	New:     func() Object { return &gatewayv1.HTTPRoute{} },
	NewList: func() ObjectList { return &gatewayv1.HTTPRouteList{} },
	parts: func(o Object) RouteParts {
		rt := o.(*gatewayv1.HTTPRoute)
		return RouteParts{Meta: &rt.ObjectMeta, Parents: rt.Spec.ParentRefs, Hostnames: rt.Spec.Hostnames, Status: &rt.Status.RouteStatus}
	},
}

// ruleOutcome is what one rule of a route becomes: a location for each
// of its matches, all with the rule's handler, and what is wrong with it.
type ruleOutcome struct {
	locations []v1beta1.Location
	// refFault is the rule's ResolvedRefs reason ("" when every backend
	// resolves) and refMessage says which.
	refFault   gatewayv1.RouteConditionReason
	refMessage string
	// unsupported says what of the rule this implementation cannot do
	// (its route is then not accepted); "" for nothing.
	unsupported string
}

// httpRule translates rule i of route rt, attached to Gateway gw.
func httpRule(gw *gatewayv1.Gateway, rt *gatewayv1.HTTPRoute, rule gatewayv1.HTTPRouteRule, refs references) ruleOutcome {
	var out ruleOutcome
	handler := v1beta1.Location{Name: routeName("httproute", rt.Namespace, rt.Name)}
	var mirrors []v1beta1.Mirror
	resolved := true
	for _, f := range rule.Filters {
		switch {
		case f.Type == gatewayv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil:
			mirrors = append(mirrors, out.mirror(gw, rt.Namespace, f.RequestMirror, refs)...)
		case isExtensionRef(f.Type, f.ExtensionRef):
			resolved = out.externalAuthFilter(&handler, rt.Namespace, f.ExtensionRef, refs) && resolved
		default:
			out.cannotServe(applyFilter(&handler, f))
		}
	}
	switch {
	case !resolved:
		handler = unresolvedFilter(handler)
	case handler.Redirect == nil:
		var backendRefs []gatewayv1.BackendRef
		for _, b := range rule.BackendRefs {
			backendRefs = append(backendRefs, out.backendRef(b.BackendRef, len(b.Filters)))
		}
		backends, fault, message := resolveBackends(gw, KindHTTPRoute, rt.Namespace, backendRefs, refs)
		out.refFailed(fault, message)
		backends, tls := out.backendTLS(gw, backends, refs.tls)
		handler = sendTo(handler, backends, "", tls)
		if handler.Proxy != nil {
			handler.Proxy.Mirrors = mirrors
			if rule.Timeouts != nil {
				handler.Proxy.Timeouts = timeouts(rule.Timeouts)
			}
		}
	}
	out.addLocations(rule.Matches, handler)
	return out
}

// refFailed records reason and message, unless the reason is empty, as
// why a reference of the rule does not resolve; the first one counts.
func (o *ruleOutcome) refFailed(reason gatewayv1.RouteConditionReason, message string) {
	if o.refFault == "" {
		o.refFault, o.refMessage = reason, message
	}
}

// mirror is the mirror of a RequestMirror filter, or none when its
// backend does not resolve: Gateway API then drops it and says why in
// ResolvedRefs, while the rule goes on serving.
func (o *ruleOutcome) mirror(gw *gatewayv1.Gateway, routeNamespace string, f *gatewayv1.HTTPRequestMirrorFilter, refs references) []v1beta1.Mirror {
	resolved, fault, message := resolveBackends(gw, KindHTTPRoute, routeNamespace, []gatewayv1.BackendRef{{BackendObjectReference: f.BackendRef}}, refs)
	o.refFailed(fault, message)
	if len(resolved) == 0 {
		return nil
	}
	b := resolved[0]
	svc := types.NamespacedName{Namespace: gw.Namespace, Name: b.Service}
	if b.Namespace != "" {
		svc.Namespace = b.Namespace
	}
	if _, _, found := refs.tls.of(svc, b.Port); found {
		o.cannotServe(fmt.Sprintf("mirror to Service %s, which has a BackendTLSPolicy: mirrors are sent in plain HTTP", svc))
		return nil
	}
	m := v1beta1.Mirror{Service: b.Service, Namespace: b.Namespace, Port: b.Port, Percent: f.Percent}
	if f.Fraction != nil {
		m.Fraction = &v1beta1.Fraction{Numerator: f.Fraction.Numerator, Denominator: ptr.Deref(f.Fraction.Denominator, 100)}
	}
	return []v1beta1.Mirror{m}
}

// cannotServe records msg, unless empty, as what of the rule cannot be
// served; the first one counts.
func (o *ruleOutcome) cannotServe(msg string) {
	if o.unsupported == "" {
		o.unsupported = msg
	}
}

// backendRef is ref, whose own filters (n of them) cannot be served.
func (o *ruleOutcome) backendRef(ref gatewayv1.BackendRef, filters int) gatewayv1.BackendRef {
	if filters > 0 {
		o.cannotServe(backendFiltersUnsupported(ref.Name))
	}
	return ref
}

// addLocations adds a location of handler for each of matches (one
// matching every request when there are none).
func (o *ruleOutcome) addLocations(matches []gatewayv1.HTTPRouteMatch, handler v1beta1.Location) {
	if len(matches) == 0 {
		matches = []gatewayv1.HTTPRouteMatch{{}}
	}
	for _, m := range matches {
		l, msg := matchLocation(m, handler)
		if msg != "" {
			o.cannotServe(msg)
			continue
		}
		o.locations = append(o.locations, l)
	}
}

// sendTo is handler (which a URLRewrite may have begun) sending to
// backends with protocol ("" for HTTP, GRPC) over TLS when tls is set (a
// BackendTLSPolicy's), or, with none to send to, what Gateway API asks
// then: 500.
func sendTo(handler v1beta1.Location, backends []v1beta1.Backend, protocol string, tls *v1beta1.BackendTLS) v1beta1.Location {
	if len(backends) == 0 {
		return v1beta1.Location{Name: handler.Name, Respond: &v1beta1.RespondLocation{Status: 500}}
	}
	if handler.Proxy == nil {
		handler.Proxy = &v1beta1.ProxyLocation{}
	}
	if tls != nil {
		protocol = map[string]string{"": "HTTPS", "GRPC": "GRPCS"}[protocol]
	}
	handler.Proxy.Backends, handler.Proxy.BackendProtocol, handler.Proxy.TLS = backends, protocol, tls
	return handler
}

// timeouts are a rule's timeouts; Gateway API's CRD has checked their
// format and that backendRequest is within request.
func timeouts(t *gatewayv1.HTTPRouteTimeouts) *v1beta1.ProxyTimeouts {
	out := &v1beta1.ProxyTimeouts{}
	if t.Request != nil {
		out.Request = string(*t.Request)
	}
	if t.BackendRequest != nil {
		out.BackendRequest = string(*t.BackendRequest)
	}
	return out
}

// backendFiltersUnsupported says that the filters of a backendRef, which
// apply to its share of the requests only, are not served: ignoring them
// would send requests without the headers or rewrites the route asks for.
func backendFiltersUnsupported(name gatewayv1.ObjectName) string {
	return fmt.Sprintf("backendRef %s has filters of its own, which this implementation does not serve", name)
}

// applyFilter adds filter f to the handler, or says why it cannot.
func applyFilter(h *v1beta1.Location, f gatewayv1.HTTPRouteFilter) string {
	switch {
	case f.Type == gatewayv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil:
		h.RequestHeaders = headerModifier(f.RequestHeaderModifier)
		hostAsRewrite(h)
		return headerValuesFault(h.RequestHeaders)
	case f.Type == gatewayv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil:
		h.ResponseHeaders = headerModifier(f.ResponseHeaderModifier)
		return headerValuesFault(h.ResponseHeaders)
	case f.Type == gatewayv1.HTTPRouteFilterRequestRedirect && f.RequestRedirect != nil:
		h.Redirect = redirect(f.RequestRedirect)
	case f.Type == gatewayv1.HTTPRouteFilterCORS && f.CORS != nil:
		h.CORS = cors(f.CORS)
		return corsFault(h.CORS)
	case f.Type == gatewayv1.HTTPRouteFilterURLRewrite && f.URLRewrite != nil:
		if h.Proxy == nil {
			h.Proxy = &v1beta1.ProxyLocation{}
		}
		rw := &v1beta1.URLRewrite{Path: pathModifier(f.URLRewrite.Path)}
		switch {
		case f.URLRewrite.Hostname != nil:
			rw.Hostname = string(*f.URLRewrite.Hostname)
		case h.Proxy.URLRewrite != nil: // a Host a header modifier set
			rw.Hostname = h.Proxy.URLRewrite.Hostname
		}
		h.Proxy.URLRewrite = rw
	default:
		return fmt.Sprintf("filter %s is not supported", f.Type)
	}
	return ""
}

// maxCORSMaxAge is the longest a preflight's answer is kept: a day,
// what Firefox allows (Chromium keeps two hours at most).
const maxCORSMaxAge = 86400

// cors is a CORS filter as the location's CORS; Gateway API's CRD
// defaults maxAge to 5 seconds, as this one does where it is unset, and a
// longer one than a day is sent as a day.
func cors(f *gatewayv1.HTTPCORSFilter) *v1beta1.CORS {
	c := &v1beta1.CORS{AllowCredentials: ptr.Deref(f.AllowCredentials, false), MaxAgeSeconds: min(f.MaxAge, maxCORSMaxAge)}
	if c.MaxAgeSeconds < 1 {
		c.MaxAgeSeconds = 5
	}
	for _, o := range f.AllowOrigins {
		c.AllowOrigins = append(c.AllowOrigins, string(o))
	}
	for _, m := range f.AllowMethods {
		c.AllowMethods = append(c.AllowMethods, string(m))
	}
	for _, h := range f.AllowHeaders {
		c.AllowHeaders = append(c.AllowHeaders, string(h))
	}
	for _, h := range f.ExposeHeaders {
		c.ExposeHeaders = append(c.ExposeHeaders, string(h))
	}
	return c
}

// corsHeaderName is what a CORS header list may name: Gateway API's
// header names but for '$', which nginx would expand, and '`'.
var corsHeaderName = regexp.MustCompile(`^[A-Za-z0-9!#%&'*+.^_|~-]+$`)

// corsFault says what of c nginx cannot serve as Gateway API allows it.
func corsFault(c *v1beta1.CORS) string {
	switch {
	case len(c.AllowOrigins) == 0:
		return "CORS without allowOrigins allows nothing: name the origins, or \"*\""
	case slices.Contains(c.ExposeHeaders, "*") && c.AllowCredentials:
		return "CORS exposeHeaders \"*\" with allowCredentials: browsers then read \"*\" as a header's name; name the headers"
	}
	for _, h := range append(slices.Clone(c.AllowHeaders), c.ExposeHeaders...) {
		if !corsHeaderName.MatchString(h) {
			return fmt.Sprintf("CORS header %q: names with '$' or '`' are not supported", h)
		}
	}
	return ""
}

// rewriteHostname is what the instance's urlRewrite.hostname may be.
var rewriteHostname = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// hostAsRewrite turns a Host that h's request header modifier sets into
// the hostname of its URL rewrite, which is how the instance sets the
// Host a Service gets (ingress-nginx's upstream-vhost, which
// ingress2gateway writes as such a modifier). A URLRewrite's own hostname,
// and a Host that is no plain hostname, are left as they are: the latter
// is then refused, as the instance's rules refuse it.
func hostAsRewrite(h *v1beta1.Location) {
	m := h.RequestHeaders
	i := slices.IndexFunc(m.Set, func(x v1beta1.Header) bool { return strings.EqualFold(x.Name, "Host") })
	if i < 0 {
		return
	}
	host := strings.ToLower(m.Set[i].Value)
	if !rewriteHostname.MatchString(host) {
		return
	}
	if h.Proxy == nil {
		h.Proxy = &v1beta1.ProxyLocation{}
	}
	if h.Proxy.URLRewrite == nil {
		h.Proxy.URLRewrite = &v1beta1.URLRewrite{}
	}
	if h.Proxy.URLRewrite.Hostname == "" {
		h.Proxy.URLRewrite.Hostname = host
	}
	m.Set = slices.Delete(m.Set, i, i+1)
}

func headerModifier(f *gatewayv1.HTTPHeaderFilter) *v1beta1.HeaderModifier {
	m := &v1beta1.HeaderModifier{Remove: f.Remove}
	for _, h := range f.Set {
		m.Set = append(m.Set, v1beta1.Header{Name: string(h.Name), Value: h.Value})
	}
	for _, h := range f.Add {
		m.Add = append(m.Add, v1beta1.Header{Name: string(h.Name), Value: h.Value})
	}
	return m
}

// nativeHeaderValue is what a header a filter sets may hold: nginx would
// expand a '$'.
var nativeHeaderValue = regexp.MustCompile(`^[^\x00-\x1f\x7f$]*$`)

// headerValuesFault says which header of m nginx cannot send as given.
func headerValuesFault(m *v1beta1.HeaderModifier) string {
	for _, h := range append(slices.Clone(m.Set), m.Add...) {
		if !nativeHeaderValue.MatchString(h.Value) {
			return fmt.Sprintf("header %s: a value with '$' or control characters is not supported", h.Name)
		}
	}
	return ""
}

func redirect(f *gatewayv1.HTTPRequestRedirectFilter) *v1beta1.RedirectLocation {
	r := &v1beta1.RedirectLocation{Code: 302, Path: pathModifier(f.Path)}
	if f.StatusCode != nil {
		r.Code = int32(*f.StatusCode)
	}
	if f.Scheme != nil {
		r.Scheme = *f.Scheme
	}
	if f.Hostname != nil {
		r.Hostname = string(*f.Hostname)
	}
	if f.Port != nil {
		r.Port = ptr.To(int32(*f.Port))
	}
	return r
}

func pathModifier(m *gatewayv1.HTTPPathModifier) *v1beta1.PathModifier {
	if m == nil {
		return nil
	}
	return &v1beta1.PathModifier{Type: string(m.Type), ReplaceFullPath: m.ReplaceFullPath, ReplacePrefixMatch: m.ReplacePrefixMatch}
}

// resolveBackends are the backends of a rule that resolve: Services that
// exist, in a namespace the route may refer to. The reason and message
// name the first that does not.
func resolveBackends(gw *gatewayv1.Gateway, kind gatewayv1.Kind, routeNamespace string, refs []gatewayv1.BackendRef, known references) ([]v1beta1.Backend, gatewayv1.RouteConditionReason, string) {
	var out []v1beta1.Backend
	var fault gatewayv1.RouteConditionReason
	var message string
	fail := func(reason gatewayv1.RouteConditionReason, format string, args ...any) {
		if fault == "" {
			fault, message = reason, fmt.Sprintf(format, args...)
		}
	}
	for _, ref := range refs {
		key := types.NamespacedName{Namespace: routeNamespace, Name: string(ref.Name)}
		if ref.Namespace != nil {
			key.Namespace = string(*ref.Namespace)
		}
		switch {
		case ref.Group != nil && *ref.Group != "" || ref.Kind != nil && *ref.Kind != "Service":
			fail(gatewayv1.RouteReasonInvalidKind, "backendRef %s is not a Service", ref.Name)
		case key.Namespace != routeNamespace && !known.granted(kind, routeNamespace, "", "Service", key):
			fail(gatewayv1.RouteReasonRefNotPermitted, "no ReferenceGrant in namespace %s lets %ss of %s refer to Service %s", key.Namespace, kind, routeNamespace, key.Name)
		case !known.services[key]:
			fail(gatewayv1.RouteReasonBackendNotFound, "Service %s not found", key)
		case ref.Port == nil:
			fail(gatewayv1.RouteReasonUnsupportedValue, "backendRef %s has no port", key)
		default:
			weight := int32(1)
			if ref.Weight != nil {
				weight = *ref.Weight
			}
			b := v1beta1.Backend{Service: key.Name, Port: int32(*ref.Port), Weight: ptr.To(weight)}
			if key.Namespace != gw.Namespace {
				// The instance may send there: ServiceGrants checks this
				// route's permission again.
				b.Namespace = key.Namespace
			}
			out = append(out, b)
		}
	}
	return scaledWeights(out), fault, message
}

// maxWeight is the largest weight of an instance's backend (the CRD's
// bound on v1beta1.Backend); Gateway API allows up to 1,000,000.
const maxWeight = 1000

// scaledWeights keeps the shares of backends within the instance's bound:
// when a weight is above it, every weight is scaled in proportion so that
// the largest is the bound, rounded to the nearest, and one above 0 stays
// above 0 (a share of at least 1 in 1,000 of the largest's is then kept).
func scaledWeights(backends []v1beta1.Backend) []v1beta1.Backend {
	var top int64
	for _, b := range backends {
		top = max(top, int64(*b.Weight))
	}
	if top <= maxWeight {
		return backends
	}
	for i, b := range backends {
		if w := int64(*b.Weight); w > 0 {
			backends[i].Weight = ptr.To(int32(max(1, (w*maxWeight+top/2)/top)))
		}
	}
	return backends
}

// nativeHeaderName is what nginx can match a request header by: it drops
// a header with any other character in its name.
var nativeHeaderName = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// nativeValue is what a native match value may hold.
var nativeValue = regexp.MustCompile(`^[ -~]+$`)

// matchLocation is the location of one match with the rule's handler, or
// why the match cannot be served.
func matchLocation(m gatewayv1.HTTPRouteMatch, handler v1beta1.Location) (v1beta1.Location, string) {
	l := handler
	l.Path, l.PathType = "/", v1beta1.PathPrefixElements
	if m.Path != nil {
		if m.Path.Value != nil {
			l.Path = *m.Path.Value
		}
		if m.Path.Type != nil {
			l.PathType = string(*m.Path.Type)
		}
	}
	if l.PathType == v1beta1.PathRegularExpression {
		if err := regex.Check(l.Path); err != nil {
			return l, fmt.Sprintf("path %q %v", l.Path, err)
		}
	} else if strings.ContainsAny(l.Path, "$;") {
		return l, fmt.Sprintf("path %q holds '$' or ';', which nginx cannot match", l.Path)
	}
	if len(m.Headers) == 0 && len(m.QueryParams) == 0 && m.Method == nil {
		return l, ""
	}
	match := &v1beta1.RequestMatch{}
	seen := map[string]bool{}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue // Gateway API: the first of a name counts
		}
		seen[name] = true
		if !nativeHeaderName.MatchString(string(h.Name)) || !nativeValue.MatchString(h.Value) {
			return l, fmt.Sprintf("header match %s: nginx matches names of letters, digits and '-' and printable values only", h.Name)
		}
		match.Headers = append(match.Headers, v1beta1.HeaderMatch{Type: matchType(h.Type), Name: string(h.Name), Value: h.Value})
	}
	seenQuery := map[string]bool{}
	for _, q := range m.QueryParams {
		if seenQuery[string(q.Name)] {
			continue
		}
		seenQuery[string(q.Name)] = true
		if strings.Contains(string(q.Name), "`") || !nativeValue.MatchString(q.Value) {
			return l, fmt.Sprintf("query parameter match %s cannot be served", q.Name)
		}
		match.QueryParams = append(match.QueryParams, v1beta1.QueryParamMatch{Type: matchType(q.Type), Name: string(q.Name), Value: q.Value})
	}
	if m.Method != nil {
		match.Method = string(*m.Method)
	}
	for _, re := range regexesOf(match) {
		if err := regex.Check(re); err != nil {
			return l, fmt.Sprintf("%q %v", re, err)
		}
	}
	l.Match = match
	return l, ""
}

func matchType[T ~string](t *T) string {
	if t == nil || string(*t) == "Exact" {
		return ""
	}
	return string(*t)
}

func regexesOf(m *v1beta1.RequestMatch) []string {
	var out []string
	for _, h := range m.Headers {
		if h.Type == v1beta1.MatchRegularExpression {
			out = append(out, h.Value)
		}
	}
	for _, q := range m.QueryParams {
		if q.Type == v1beta1.MatchRegularExpression {
			out = append(out, q.Value)
		}
	}
	return out
}
