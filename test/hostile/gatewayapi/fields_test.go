package gatewayapi

// The corpus: the hostile strings, regular expressions and numbers, the
// hostile tenant's route of each kind (valid and served as it is), the
// fields of each kind they are set in, a few structures, and the assembly
// of distinct cases from them.

import (
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"fmt"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// baseField is the field of the cases that send the hostile route of a
// kind as it is: each must be served, or the corpus proves nothing.
const baseField = "(the hostile route as it is)"

// routeCase is one hostile route: the base route of its kind with one
// field set to one value (or one structure changed).
type routeCase struct {
	id    int
	kind  gatewayv1.Kind
	field string
	show  string
	value any // the hostile value; nil for a structure
	// object is the route as JSON, without metadata (send adds it).
	object map[string]any
}

// routeField sets one field of a route of kind (its JSON) to each value.
type routeField struct {
	kind   gatewayv1.Kind
	name   string
	set    func(obj map[string]any, v any)
	values []any
}

// structure is a change to a route of kind no single value makes.
type structure struct {
	kind gatewayv1.Kind
	name string
	edit func(obj map[string]any)
}

// Strings that are syntax to nginx (quotes, ';', braces, '$', '#'), to a
// parser (newlines, NUL, a backslash) or to a terminal, or long: for every
// string field.
func hostileStrings() []string {
	return []string{
		"", " ", ";", "a;b", "{", "}", "a{b}", "} server { listen 80; } #", "#", `"`, `'`, `a"b`, `\`, `a\b`, `\"; deny all; #`,
		"a\nb", "a\r\nX-Evil: 1", "\x00", "\x7f", "$host", "${host}", "$1", "a$", "$http_x_match", "$args", "$arg_q", "$$",
		"ünïcødé", "日本語", "\u202egnp", "a\u00a0b",
		strings.Repeat("a", 300), strings.Repeat("a", 5000), strings.Repeat(`";{}$`, 200),
	}
}

// Regular expressions RE2 (Go's regexp, which the translation checks
// with) accepts and nginx's PCRE2 refuses (code points above 255 without
// UTF mode, a range from a class, duplicate names, a program too large,
// nesting deeper than 250), named groups that take the name of an nginx
// variable (host and uri, which nginx refuses to redefine; args, arg_q and
// http_x_match, which it lets a capture change for every use in the
// configuration, the other tenants' included), what the two read
// differently, and what neither reads.
func hostileRegexes() []string {
	return []string{
		`\x{100}`, `[^\x00-\x{10FFFF}]`, `[\d-z]`, `(?P<a>x)(?P<a>y)`, strings.Repeat(`(?:ab){1000}`, 10),
		strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300),
		`/(?P<host>x)`, `(?<uri>/x)`, `(?P<args>.*)`, `(?P<arg_q>.*)`, `(?P<http_x_match>.*)`, `(?P<x>.*)`, `(?'q'x)`,
		`[a-é]`, `\pL+`, `\p{Greek}`, `a{,3}`, `(?U)a+`, `(?i)ABC`, `(?s).`, `[[:word:]]+`, `\Q$host\E`, `\z`, `^v[0-9]+$`,
		`.*`, `/h/(.*)`, `(x)`, "(", ")", "a)|(b", `.*)\z|^(?:/x`, "[", `\C`, `(?#c)`, `(*LIMIT_MATCH=1)a`, `\`, `a{1001}`,
		"$host", "a\nb", strings.Repeat("a", 1024),
	}
}

// pathRegexes are the regexes as a path would hold them: most start with
// '/' in a path.
func pathRegexes() []string {
	var out []string
	for _, re := range hostileRegexes() {
		out = append(out, re)
		if !strings.HasPrefix(re, "/") && len(re) < 200 {
			out = append(out, "/"+re)
		}
	}
	return out
}

// hostilePaths are paths: each hostile string after '/', and what
// Gateway API's path characters allow that nginx reads otherwise.
func hostilePaths() []string {
	out := []string{"", "x", "*", "//", "/a/../b", "/./a", "/%2e%2e/", "/%00", "/%0a", "/%25", "/a%2fb", "/a'b", "/(x)", "/a*b", "/a+b",
		"/a=b", "/a@b", "/a:b", "/a!b", "/a&b", "/a,b", "/~", "/a$b", "/app", "/search", "/h/", "/H", "/" + strings.Repeat("a", 1023)}
	for _, s := range hostileStrings() {
		out = append(out, "/"+s)
	}
	return out
}

// longHostname is the longest name under domain Gateway API allows (253
// bytes), of labels of 63.
func longHostname(domain string) string {
	name := domain
	for len(name)+64 <= 253 {
		name = strings.Repeat("a", 63) + "." + name
	}
	return name
}

// hostileHostnames are hostnames: the other tenants' and the listeners',
// wildcards, long ones under each listener's domain, and what RFC 1123 or
// a server_name refuses.
func hostileHostnames() []string {
	return append([]string{webHostname, grpcHostname, tlsHostname, listenerHostname, passthroughHostname, "*", "example.com",
		"a.passthrough.example.com", "HOSTILE.example.com", "bücher.example.com", "xn--bcher-kva.example.com", "a..example.com",
		strings.Repeat("a", 63) + ".example.com", strings.Repeat("a", 64) + ".example.com", strings.Repeat("a.", 126) + "com",
		strings.Repeat("a", 63) + ".passthrough.example.com", longHostname("example.com"), longHostname("passthrough.example.com"),
		"*." + strings.Repeat("a", 63) + ".passthrough.example.com",
		"*.*.example.com", "x.*.example.com", "1.2.3.4", "[::1]", "localhost", "example.com:80", "_", "a_b.example.com", "~^.*$"},
		hostileStrings()...)
}

func hostileHeaderNames() []string {
	return append([]string{"X-Match", "x-match", "X_Match", "Host", "X-$host", "X!#$%&'*+-.^_`|~", "Content-Length", ":authority",
		"Cookie", "Connection", "X Match", "X;Match", "X-" + strings.Repeat("a", 300)}, hostileStrings()...)
}

var numbers = []any{int64(-1), int64(0), int64(1), int64(80), int64(443), int64(1000), int64(1001), int64(65535), int64(65536),
	int64(1000000), int64(1000001), int64(2147483647), int64(2147483648), "80", 1.5}

var methods = []any{"GET", "get", "FOO", "*", "", "GET;", "CONNECT", "TRACE", "PATCH", "OPTIONS", "GET POST", "$request_method"}

var durations = []any{"1s", "0s", "1ms", "10000h", "99999h", "1h1m1s1ms", "-1s", "1d", "1s;", "1.5s", "1", "", "$host", "1s\n", "1s 2s"}

func strs(lists ...[]string) []any {
	var out []any
	for _, l := range lists {
		for _, s := range l {
			out = append(out, s)
		}
	}
	return out
}

func withStrings(extra ...string) []any { return strs(hostileStrings(), extra) }

func withNumbers(extra ...int64) []any {
	out := append([]any{}, numbers...)
	for _, n := range extra {
		out = append(out, n)
	}
	return out
}

// Hostnames of the hostile tenant's routes: names no other tenant has.
const (
	hostileHTTPHostname = "hostile.example.com"
	hostileGRPCHostname = "hgrpc.example.com"
	hostileTLSHostname  = "hostile.passthrough.example.com"
)

// hostileBases are the hostile tenant's routes as they are, each valid
// and served on its own names or listener, as JSON without metadata.
func hostileBases(t *testing.T, ns map[string]string) map[gatewayv1.Kind]map[string]any {
	t.Helper()
	gwNS := ns[roleGateway]
	typeMeta := func(kind gatewayv1.Kind) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: string(kind)}
	}
	objs := map[gatewayv1.Kind]any{
		graph.KindHTTPRoute: &gatewayv1.HTTPRoute{TypeMeta: typeMeta(graph.KindHTTPRoute), Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, "")}},
			Hostnames:       []gatewayv1.Hostname{hostileHTTPHostname},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/h")}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef(svcHostile, 8080)}},
			}},
		}},
		graph.KindGRPCRoute: &gatewayv1.GRPCRoute{TypeMeta: typeMeta(graph.KindGRPCRoute), Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, "")}},
			Hostnames:       []gatewayv1.Hostname{hostileGRPCHostname},
			Rules: []gatewayv1.GRPCRouteRule{{
				Matches:     []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("h.Svc"), Method: ptr.To("Get")}}},
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef(svcHostile, 50051)}},
			}},
		}},
		graph.KindTLSRoute: &gatewayv1.TLSRoute{TypeMeta: typeMeta(graph.KindTLSRoute), Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, listenerPassthrough)}},
			Hostnames:       []gatewayv1.Hostname{hostileTLSHostname},
			Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(svcHostile, 8443)}}},
		}},
		graph.KindTCPRoute: &gatewayv1.TCPRoute{TypeMeta: typeMeta(graph.KindTCPRoute), Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, listenerTCPHostile)}},
			Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(svcHostile, 6432)}}},
		}},
		graph.KindUDPRoute: &gatewayv1.UDPRoute{TypeMeta: typeMeta(graph.KindUDPRoute), Spec: gatewayv1.UDPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, listenerUDPHostile)}},
			Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(svcHostile, 6353)}}},
		}},
	}
	out := map[gatewayv1.Kind]map[string]any{}
	for kind, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		delete(u, "metadata")
		delete(u, "status")
		out[kind] = u
	}
	return out
}

// then is a setter that first makes the route's structure what edits
// say (each sets a path to a fixed value), then sets path to the value.
func then(edits []func(map[string]any), path ...any) func(obj map[string]any, v any) {
	return func(obj map[string]any, v any) {
		for _, e := range edits {
			e(obj)
		}
		hostiletest.SetAt(path...)(obj, v)
	}
}

func fixed(v any, path ...any) func(map[string]any) {
	return func(obj map[string]any) { hostiletest.SetAt(path...)(obj, runtime.DeepCopyJSONValue(v)) }
}

func remove(key string, path ...any) func(map[string]any) {
	return func(obj map[string]any) {
		var cur any = obj
		for _, p := range path {
			switch k := p.(type) {
			case string:
				cur = cur.(map[string]any)[k]
			case int:
				cur = cur.([]any)[k]
			}
		}
		delete(cur.(map[string]any), key)
	}
}

// Paths into the routes' JSON.
var (
	rule0  = []any{"spec", "rules", 0}
	match0 = []any{"spec", "rules", 0, "matches", 0}
)

func join(parts ...[]any) []any {
	var out []any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func p(parts ...any) []any { return parts }

// httpFilter makes rule 0's filters one filter of type typ, whose field
// key holds base, and sets path (within it) to the value. A redirect
// replaces the backends (Gateway API allows no backendRefs beside it).
func httpFilter(typ, key string, base map[string]any, path ...any) func(obj map[string]any, v any) {
	edits := []func(map[string]any){fixed([]any{map[string]any{"type": typ, key: base}}, join(rule0, p("filters"))...)}
	if typ == "RequestRedirect" {
		edits = append(edits, remove("backendRefs", rule0...))
	}
	return then(edits, join(rule0, p("filters", 0, key), path)...)
}

func corpusFields(ns map[string]string) []routeField {
	http, grpc := graph.KindHTTPRoute, graph.KindGRPCRoute
	regexType := func(at []any) func(map[string]any) { return fixed("RegularExpression", join(at, p("type"))...) }
	pathOfType := func(t string) func(obj map[string]any, v any) {
		return then([]func(map[string]any){fixed(t, join(match0, p("path", "type"))...)}, join(match0, p("path", "value"))...)
	}
	header := func(regex bool, field string) func(obj map[string]any, v any) {
		typ := "Exact"
		if regex {
			typ = "RegularExpression"
		}
		h := map[string]any{"type": typ, "name": "X-H", "value": "1"}
		return then([]func(map[string]any){fixed([]any{h}, join(match0, p("headers"))...)}, join(match0, p("headers", 0, field))...)
	}
	query := func(regex bool, field string) func(obj map[string]any, v any) {
		typ := "Exact"
		if regex {
			typ = "RegularExpression"
		}
		q := map[string]any{"type": typ, "name": "hq", "value": "1"}
		return then([]func(map[string]any){fixed([]any{q}, join(match0, p("queryParams"))...)}, join(match0, p("queryParams", 0, field))...)
	}
	headerFilter := func(typ, key, list, field string) func(obj map[string]any, v any) {
		base := map[string]any{list: []any{map[string]any{"name": "X-H", "value": "1"}}}
		if list == "remove" {
			base = map[string]any{"remove": []any{"X-H"}}
			return httpFilter(typ, key, base, "remove", 0)
		}
		return httpFilter(typ, key, base, list, 0, field)
	}
	redirect := func(path ...any) func(obj map[string]any, v any) {
		return httpFilter("RequestRedirect", "requestRedirect", map[string]any{"hostname": "r.example.com"}, path...)
	}
	redirectPath := func(typ, field string) func(obj map[string]any, v any) {
		return httpFilter("RequestRedirect", "requestRedirect", map[string]any{"path": map[string]any{"type": typ}}, "path", field)
	}
	rewrite := func(path ...any) func(obj map[string]any, v any) {
		return httpFilter("URLRewrite", "urlRewrite", map[string]any{}, path...)
	}
	rewritePath := func(typ, field string) func(obj map[string]any, v any) {
		return httpFilter("URLRewrite", "urlRewrite", map[string]any{"path": map[string]any{"type": typ}}, "path", field)
	}
	mirror := func(extra map[string]any, path ...any) func(obj map[string]any, v any) {
		base := map[string]any{"backendRef": map[string]any{"name": svcHostile, "port": int64(8080)}}
		for k, v := range extra {
			base[k] = v
		}
		return httpFilter("RequestMirror", "requestMirror", base, path...)
	}
	cors := func(path ...any) func(obj map[string]any, v any) {
		return httpFilter("CORS", "cors", map[string]any{"allowOrigins": []any{"https://a.example.com"}}, path...)
	}
	corsList := func(key string) func(obj map[string]any, v any) {
		return func(obj map[string]any, v any) { cors(key)(obj, []any{v}) }
	}
	// backendRefs[0] of rule 0 (an HTTPRoute's and a GRPCRoute's are
	// HTTPBackendRef and GRPCBackendRef, of the same JSON).
	backend := join(rule0, p("backendRefs", 0))
	backendNamespace := func(name string) func(obj map[string]any, v any) {
		return then([]func(map[string]any){fixed(name, join(backend, p("name"))...)}, join(backend, p("namespace"))...)
	}
	namespaces := []string{ns[roleWeb], ns[roleHostile], ns[roleGateway], ns[roleTCP], "default", "kube-system"}
	sections := []string{listenerHTTP, listenerHTTPS, listenerPassthrough, listenerTCP, listenerTCPHostile, listenerUDP, listenerUDPHostile, "nope"}
	sectionName := p("spec", "parentRefs", 0, "sectionName")
	parentPort := p("spec", "parentRefs", 0, "port")
	hostnames := func(obj map[string]any, v any) { hostiletest.SetAt("spec", "hostnames")(obj, []any{v}) }

	// Fields every kind has: the parent's section and port, the backend's
	// weight, port, name and namespace.
	common := func(kind gatewayv1.Kind) []routeField {
		return []routeField{
			{kind, "parentRefs[].sectionName", hostiletest.SetAt(sectionName...), withStrings(sections...)},
			{kind, "parentRefs[].port (experimental: pruned by the standard channel)", hostiletest.SetAt(parentPort...), withNumbers(5432, 6432)},
			{kind, "rules[].backendRefs[].weight", hostiletest.SetAt(join(backend, p("weight"))...), withNumbers(999999)},
			{kind, "rules[].backendRefs[].port", hostiletest.SetAt(join(backend, p("port"))...), withNumbers(8443, 6353)},
			{kind, "rules[].backendRefs[].name", hostiletest.SetAt(join(backend, p("name"))...), withStrings(svcShared, svcWeb, svcDB, "H-SVC", "h-svc.other", "../h-svc")},
			{kind, "rules[].backendRefs[].namespace (name h-svc)", hostiletest.SetAt(join(backend, p("namespace"))...), withStrings(namespaces...)},
			{kind, "rules[].backendRefs[].namespace (name shared, granted from web)", backendNamespace(svcShared), strs(namespaces, []string{"", "$host"})},
			{kind, "rules[].backendRefs[].kind", hostiletest.SetAt(join(backend, p("kind"))...), strs([]string{"Service", "service", "Pod", "ServiceImport", "$host", ""})},
		}
	}

	fields := []routeField{
		{http, "hostnames[]", hostnames, strs(hostileHostnames())},
		{http, "rules[].matches[].path.value (Exact)", pathOfType("Exact"), strs(hostilePaths())},
		{http, "rules[].matches[].path.value (PathPrefix)", pathOfType("PathPrefix"), strs(hostilePaths())},
		{http, "rules[].matches[].path.value (RegularExpression)", pathOfType("RegularExpression"), strs(pathRegexes(), []string{"/h", "/h/[0-9]+"})},
		{http, "rules[].matches[].path.type", hostiletest.SetAt(join(match0, p("path", "type"))...), withStrings("Exact", "PathPrefix", "RegularExpression", "exact", "Regex")},
		{http, "rules[].matches[].headers[].name (Exact)", header(false, "name"), strs(hostileHeaderNames())},
		{http, "rules[].matches[].headers[].value (Exact)", header(false, "value"), withStrings("yes", "v1")},
		{http, "rules[].matches[].headers[].name (RegularExpression)", header(true, "name"), strs(hostileHeaderNames())},
		{http, "rules[].matches[].headers[].value (RegularExpression)", header(true, "value"), strs(hostileRegexes())},
		{http, "rules[].matches[].queryParams[].name (Exact)", query(false, "name"), withStrings("q", "Q", "a=b", "a&b", "arg_q", "a[]")},
		{http, "rules[].matches[].queryParams[].value (Exact)", query(false, "value"), withStrings("1", "a&q=1", "a=b")},
		{http, "rules[].matches[].queryParams[].name (RegularExpression)", query(true, "name"), withStrings("q", "arg_q")},
		{http, "rules[].matches[].queryParams[].value (RegularExpression)", query(true, "value"), strs(hostileRegexes())},
		{http, "rules[].matches[].method", hostiletest.SetAt(join(match0, p("method"))...), methods},
		{http, "filters[].requestRedirect.hostname", redirect("hostname"), strs(hostileHostnames())},
		{http, "filters[].requestRedirect.scheme", redirect("scheme"), withStrings("http", "https", "HTTP", "ftp", "javascript", "https://x")},
		{http, "filters[].requestRedirect.port", redirect("port"), withNumbers(8080, 8443)},
		{http, "filters[].requestRedirect.statusCode", redirect("statusCode"), withNumbers(301, 302, 303, 307, 308, 200)},
		{http, "filters[].requestRedirect.path.replaceFullPath", redirectPath("ReplaceFullPath", "replaceFullPath"), strs(hostilePaths())},
		{http, "filters[].requestRedirect.path.replacePrefixMatch", redirectPath("ReplacePrefixMatch", "replacePrefixMatch"), strs(hostilePaths())},
		{http, "filters[].urlRewrite.hostname", rewrite("hostname"), strs(hostileHostnames())},
		{http, "filters[].urlRewrite.path.replaceFullPath", rewritePath("ReplaceFullPath", "replaceFullPath"), strs(hostilePaths())},
		{http, "filters[].urlRewrite.path.replacePrefixMatch", rewritePath("ReplacePrefixMatch", "replacePrefixMatch"), strs(hostilePaths())},
		{http, "filters[].requestHeaderModifier.set[].name", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "set", "name"), strs(hostileHeaderNames())},
		{http, "filters[].requestHeaderModifier.set[].value", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "set", "value"), withStrings("$remote_addr", "${request_uri}")},
		{http, "filters[].requestHeaderModifier.add[].name", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "add", "name"), strs(hostileHeaderNames())},
		{http, "filters[].requestHeaderModifier.add[].value", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "add", "value"), withStrings()},
		{http, "filters[].requestHeaderModifier.remove[]", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "remove", ""), strs(hostileHeaderNames())},
		{http, "filters[].responseHeaderModifier.set[].name", headerFilter("ResponseHeaderModifier", "responseHeaderModifier", "set", "name"), strs(hostileHeaderNames())},
		{http, "filters[].responseHeaderModifier.set[].value", headerFilter("ResponseHeaderModifier", "responseHeaderModifier", "set", "value"), withStrings()},
		{http, "filters[].responseHeaderModifier.remove[]", headerFilter("ResponseHeaderModifier", "responseHeaderModifier", "remove", ""), strs(hostileHeaderNames())},
		{http, "filters[].requestMirror.backendRef.name", mirror(nil, "backendRef", "name"), withStrings(svcShared, svcWeb)},
		{http, "filters[].requestMirror.backendRef.port", mirror(nil, "backendRef", "port"), withNumbers()},
		{http, "filters[].requestMirror.backendRef.namespace (name shared)", mirror(map[string]any{"backendRef": map[string]any{"name": svcShared, "port": int64(8080)}}, "backendRef", "namespace"), strs(namespaces, []string{"", "$host"})},
		{http, "filters[].requestMirror.percent", mirror(nil, "percent"), withNumbers(100, 101)},
		{http, "filters[].requestMirror.fraction.numerator", mirror(map[string]any{"fraction": map[string]any{"denominator": int64(100)}}, "fraction", "numerator"), withNumbers(100, 101)},
		{http, "filters[].requestMirror.fraction.denominator", mirror(map[string]any{"fraction": map[string]any{"numerator": int64(1)}}, "fraction", "denominator"), withNumbers()},
		{http, "filters[].cors.allowOrigins[]", corsList("allowOrigins"), withStrings("*", "https://a.example.com", "http://*.example.com", "null", "https://a.example.com:8443", "https://a.example.com/p", "https://$host", "https://a.example.com;", "https://*")},
		{http, "filters[].cors.allowMethods[]", corsList("allowMethods"), methods},
		{http, "filters[].cors.allowHeaders[]", corsList("allowHeaders"), strs(hostileHeaderNames(), []string{"*"})},
		{http, "filters[].cors.exposeHeaders[]", corsList("exposeHeaders"), strs(hostileHeaderNames(), []string{"*"})},
		{http, "filters[].cors.maxAge", cors("maxAge"), withNumbers(86400, 86401)},
		{http, "filters[].cors.allowCredentials", cors("allowCredentials"), []any{true, false, "true", int64(1)}},
		{http, "rules[].timeouts.request", hostiletest.SetAt(join(rule0, p("timeouts", "request"))...), durations},
		{http, "rules[].timeouts.backendRequest", then([]func(map[string]any){fixed("100h", join(rule0, p("timeouts", "request"))...)}, join(rule0, p("timeouts", "backendRequest"))...), durations},
		{http, "rules[].name", hostiletest.SetAt(join(rule0, p("name"))...), withStrings("r1", "R1", "a.b")},

		{grpc, "hostnames[]", hostnames, strs(hostileHostnames())},
		{grpc, "rules[].matches[].method.service (Exact)", hostiletest.SetAt(join(match0, p("method", "service"))...), withStrings("echo.Echo", ".a.B", "a..b", "_", "a/b")},
		{grpc, "rules[].matches[].method.method (Exact)", hostiletest.SetAt(join(match0, p("method", "method"))...), withStrings("Say", "_", "a.b", "a/b")},
		{grpc, "rules[].matches[].method.service (RegularExpression)", then([]func(map[string]any){regexType(join(match0, p("method")))}, join(match0, p("method", "service"))...),
			strs(hostileRegexes(), []string{`a)|(.*`, `echo\.Echo`, `[^/]+`})},
		{grpc, "rules[].matches[].method.method (RegularExpression)", then([]func(map[string]any){regexType(join(match0, p("method")))}, join(match0, p("method", "method"))...),
			strs(hostileRegexes(), []string{`a)|(.*`, `Say`})},
		{grpc, "rules[].matches[].method.service (RegularExpression, no method)", then([]func(map[string]any){regexType(join(match0, p("method"))), remove("method", join(match0, p("method"))...)}, join(match0, p("method", "service"))...),
			strs(hostileRegexes())},
		{grpc, "rules[].matches[].method.method (no service)", then([]func(map[string]any){remove("service", join(match0, p("method"))...)}, join(match0, p("method", "method"))...),
			withStrings("Say")},
		{grpc, "rules[].matches[].headers[].name (Exact)", header(false, "name"), strs(hostileHeaderNames())},
		{grpc, "rules[].matches[].headers[].value (Exact)", header(false, "value"), withStrings("yes")},
		{grpc, "rules[].matches[].headers[].value (RegularExpression)", header(true, "value"), strs(hostileRegexes())},
		{grpc, "filters[].requestHeaderModifier.set[].name", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "set", "name"), strs(hostileHeaderNames())},
		{grpc, "filters[].requestHeaderModifier.set[].value", headerFilter("RequestHeaderModifier", "requestHeaderModifier", "set", "value"), withStrings()},

		{graph.KindTLSRoute, "hostnames[]", hostnames, strs(hostileHostnames())},
	}
	for _, kind := range []gatewayv1.Kind{http, grpc, graph.KindTLSRoute, graph.KindTCPRoute, graph.KindUDPRoute} {
		fields = append(fields, common(kind)...)
	}
	return fields
}

// structures are changes of several fields at once: weights whose sum
// overflows 32 bits, several backends of the largest weight on a stream,
// hostnames many and duplicated.
func structures() []structure {
	backends := func(n int, weight int64, port int64) []any {
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, map[string]any{"name": svcHostile, "port": port, "weight": weight})
		}
		return out
	}
	var out []structure
	ports := map[gatewayv1.Kind]int64{graph.KindHTTPRoute: 8080, graph.KindGRPCRoute: 50051, graph.KindTLSRoute: 8443,
		graph.KindTCPRoute: 6432, graph.KindUDPRoute: 6353}
	for _, kind := range kinds {
		port := ports[kind]
		out = append(out,
			structure{kind, "rules[].backendRefs: 16 of weight 1000000", func(obj map[string]any) {
				hostiletest.SetAt(join(rule0, p("backendRefs"))...)(obj, backends(16, 1000000, port))
			}},
			structure{kind, "rules[].backendRefs: 2 of weight 0", func(obj map[string]any) {
				hostiletest.SetAt(join(rule0, p("backendRefs"))...)(obj, backends(2, 0, port))
			}},
			structure{kind, "rules[].backendRefs: 1001 and 1", func(obj map[string]any) {
				b := backends(2, 1, port)
				b[0].(map[string]any)["weight"] = int64(1001)
				hostiletest.SetAt(join(rule0, p("backendRefs"))...)(obj, b)
			}},
			structure{kind, "rules[].backendRefs: none", func(obj map[string]any) {
				remove("backendRefs", rule0...)(obj)
			}},
		)
	}
	hosts := func(names ...string) func(obj map[string]any) {
		return func(obj map[string]any) { hostiletest.SetAt("spec", "hostnames")(obj, strs(names)) }
	}
	own := map[gatewayv1.Kind]string{graph.KindHTTPRoute: hostileHTTPHostname, graph.KindGRPCRoute: hostileGRPCHostname}
	for _, kind := range kinds[:2] {
		own := own[kind]
		out = append(out,
			structure{kind, "hostnames: its own and the web tenant's", hosts(own, webHostname)},
			structure{kind, "hostnames: its own and the grpc tenant's", hosts(own, grpcHostname)},
			structure{kind, "hostnames: the same twice", hosts(own, own)},
			structure{kind, "hostnames: none (every listener's names)", remove("hostnames", "spec")},
		)
	}
	out = append(out,
		structure{graph.KindTLSRoute, "hostnames: its own and the tls tenant's", hosts(hostileTLSHostname, tlsHostname)},
		structure{graph.KindTLSRoute, "hostnames: 1024 names", func(obj map[string]any) {
			var names []string
			for i := 0; i < 1024; i++ {
				names = append(names, fmt.Sprintf("h%d.passthrough.example.com", i))
			}
			hosts(names...)(obj)
		}},
		structure{graph.KindHTTPRoute, "rules[].matches: the web tenant's /app match, same headers", func(obj map[string]any) {
			hostiletest.SetAt(join(rule0, p("matches"))...)(obj, []any{map[string]any{
				"path": map[string]any{"type": "PathPrefix", "value": "/app"},
				"headers": []any{map[string]any{"type": "RegularExpression", "name": "X-Version", "value": "^v[0-9]+$"},
					map[string]any{"type": "Exact", "name": "X-Match", "value": "yes"}}}})
			hosts(webHostname)(obj)
		}},
		structure{graph.KindHTTPRoute, "rules[].matches: every path of web.example.com by a named group", func(obj map[string]any) {
			hostiletest.SetAt(join(rule0, p("matches"))...)(obj, []any{map[string]any{"path": map[string]any{"type": "RegularExpression", "value": "/(?P<args>.*)"}}})
			hosts(webHostname)(obj)
		}},
		structure{graph.KindHTTPRoute, "rules[].matches: X-Match by a named group on web.example.com", func(obj map[string]any) {
			hostiletest.SetAt(join(rule0, p("matches"))...)(obj, []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/app"},
				"headers": []any{map[string]any{"type": "RegularExpression", "name": "X-Other", "value": "(?P<http_x_match>.*)"}}}})
			hosts(webHostname)(obj)
		}},
		structure{graph.KindHTTPRoute, "rules: 16 rules of 8 regex matches each", func(obj map[string]any) {
			var rules []any
			for i := 0; i < 16; i++ {
				var matches []any
				for j := 0; j < 8; j++ {
					matches = append(matches, map[string]any{"path": map[string]any{"type": "RegularExpression", "value": fmt.Sprintf("/h/%d/%d/(a|b)+", i, j)}})
				}
				rules = append(rules, map[string]any{"matches": matches, "backendRefs": backends(1, 1, 8080)})
			}
			hostiletest.SetAt("spec", "rules")(obj, rules)
		}},
	)
	return out
}

// corpus is every case, each distinct: the base route of each kind, then
// each field with each of its values, then the structures.
func corpus(t *testing.T, ns map[string]string) []*routeCase {
	t.Helper()
	bases := hostileBases(t, ns)
	var out []*routeCase
	seen := map[string]bool{}
	add := func(kind gatewayv1.Kind, field, show string, v any, obj map[string]any) {
		key := string(kind) + "\x00" + field + "\x00" + show
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, &routeCase{id: len(out), kind: kind, field: field, show: show, value: v, object: obj})
	}
	for _, kind := range kinds {
		add(kind, baseField, "-", nil, runtime.DeepCopyJSON(bases[kind]))
	}
	for _, f := range corpusFields(ns) {
		for _, v := range f.values {
			obj := runtime.DeepCopyJSON(bases[f.kind])
			f.set(obj, v)
			add(f.kind, f.name, showValue(v), v, obj)
		}
	}
	for _, st := range structures() {
		obj := runtime.DeepCopyJSON(bases[st.kind])
		st.edit(obj)
		add(st.kind, st.name, "(structure)", nil, obj)
	}
	return out
}

// kinds are the route kinds, in the report's order.
var kinds = []gatewayv1.Kind{graph.KindHTTPRoute, graph.KindGRPCRoute, graph.KindTLSRoute, graph.KindTCPRoute, graph.KindUDPRoute}

func showValue(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return strconv.Quote(v[:24]) + fmt.Sprintf("…(%d bytes)", len(v))
		}
		return strconv.Quote(v)
	case []any:
		if len(v) == 1 {
			return showValue(v[0])
		}
	}
	return fmt.Sprint(v)
}
