package render

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// locations renders the locations of server number server; with none, /
// serves the content. A block nginx picks by path holds its location's
// handler, or hands the request to the named location of the one whose
// match it meets (match.go).
func (r *renderer) locations(server int, s v1beta1.Server, inheritedBodySize string) []conf.Directive {
	locations := serverLocations(s)
	m := r.matching(server, locations)
	var out []conf.Directive
	named := make([]bool, len(locations))
	noRoute := false
	for k, b := range m.blocks {
		if b.inline() {
			j := b.candidates[0].route
			out = append(out, conf.B("location", b.args, r.handler(server, s, j, locations[j])...))
			continue
		}
		for _, c := range b.candidates {
			named[c.route] = true
		}
		noRoute = noRoute || len(b.candidates[len(b.candidates)-1].conditions) > 0
		out = append(out, conf.B("location", b.args, dispatch(routeVariable(m.id, k), b, locations, inheritedBodySize)...))
	}
	for j, l := range locations {
		if named[j] {
			out = append(out, conf.B("location", []string{routeLocation(locationID(server, j))}, r.handler(server, s, j, l)...))
		}
	}
	if noRoute {
		out = append(out, conf.B("location", []string{noRouteLocation(m.id)}, conf.D("return", "404")))
	}
	for j, l := range locations {
		if l.Proxy != nil && len(l.Proxy.Mirrors) > 0 && len(r.upstreamServers(l.Proxy)) > 0 {
			id := locationID(server, j)
			out = append(out, r.mirrorLocations(id, l, r.mirrorsOf(id, l.Proxy))...)
		}
	}
	if hasGRPC(locations) {
		out = append(out, grpcStatusLocations()...)
	}
	return out
}

// serverLocations are s's locations; with none, / serves the content.
func serverLocations(s v1beta1.Server) []v1beta1.Location {
	if len(s.Locations) == 0 {
		return []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}
	}
	return s.Locations
}

// dispatch is the body of a block that hands each request to the named
// location routeVariable names. try_files tests the content root, a
// directory, as a file, which always fails, and goes to its last
// argument, a named location, with the request's URI and method as they
// are. nginx checks a request body's announced size against the block's
// client_max_body_size before: the largest of the candidates', so that
// none refuses what its location allows. A candidate without a size of
// its own has the server's (or the instance's): inherited.
func dispatch(routeVariable string, b matchBlock, locations []v1beta1.Location, inherited string) []conf.Directive {
	var out []conf.Directive
	if size := largestBodySize(b, locations, inherited); size != "" {
		out = append(out, conf.D("client_max_body_size", size))
	}
	return append(out, conf.D("try_files", "", routeVariable))
}

// largestBodySize is the largest clientMaxBodySize of the block's
// candidates, or "" when none sets one: the block then inherits what they
// do.
func largestBodySize(b matchBlock, locations []v1beta1.Location, inherited string) string {
	largest, own := "", false
	for _, c := range b.candidates {
		size := locations[c.route].ClientMaxBodySize
		if size != "" {
			own = true
		} else {
			size = inherited
		}
		if largest == "" || bodyLimit(size) > bodyLimit(largest) {
			largest = size
		}
	}
	if !own {
		return ""
	}
	return largest
}

// bodyLimit is the bytes a clientMaxBodySize allows; "0", no limit, is the
// most.
func bodyLimit(size string) int64 {
	if n := sizeBytes(size); n > 0 {
		return n
	}
	return math.MaxInt64
}

// sizeBytes reads an nginx size (the CRD's pattern: digits and an optional
// k, m or g).
func sizeBytes(size string) int64 {
	unit := int64(1)
	switch size[len(size)-1] {
	case 'k', 'K':
		unit = 1 << 10
	case 'm', 'M':
		unit = 1 << 20
	case 'g', 'G':
		unit = 1 << 30
	}
	n, _ := strconv.ParseInt(strings.TrimRight(size, "kKmMgG"), 10, 64)
	return n * unit
}

// handler is the body of location j of a server: what answers its
// requests.
func (r *renderer) handler(server int, s v1beta1.Server, j int, l v1beta1.Location) []conf.Directive {
	id, tls := locationID(server, j), s.TLS
	auth, authenticated := authOf(server, s, j, l)
	body := r.requestLabels(l)
	var corsHeaders []conf.Directive
	if l.CORS != nil {
		// The preflight's answer comes first: nginx runs a location's
		// if and return in their order, before its handler.
		var preflight conf.Directive
		preflight, corsHeaders = corsAnswers(id, l.CORS, hideDirective(l))
		preflight.Block = slices.Insert(preflight.Block, len(preflight.Block)-1, hsts(tls)...)
		body = append(body, preflight)
	}
	switch {
	case l.Static != nil:
		body = append(body, static(l.Static)...)
	case l.Proxy != nil:
		var authHeaders []header
		if authenticated {
			authHeaders = auth.requestHeaders()
		}
		body = append(body, r.proxy(id, l, authHeaders)...)
	case l.Redirect != nil:
		body = append(body, r.redirect(id, l)...)
	case l.Respond != nil:
		body = append(body, respond(l.Respond)...)
	}
	body = append(body, clientBody(l.ClientMaxBodySize, l.ClientBodyBufferKiB)...)
	if l.Expires != "" {
		body = append(body, conf.D("expires", l.Expires))
	}
	if headers := append(responseHeaders(l), corsHeaders...); len(headers) > 0 || slices.ContainsFunc(body, isAddHeader) {
		// Headers of its own (its own, or a proxy's affinity cookie)
		// hide the server's from the location.
		body = append(body, headers...)
		body = append(body, hsts(tls)...)
	}
	body = append(body, r.access(id, locationGuards(l))...)
	if authenticated {
		grpc := l.Proxy != nil && protocolOf(l.Proxy).grpc()
		body = append(body, authDirectives(auth, grpc, errorPageDirectives(server, s.ErrorPages))...)
	}
	if l.DisableAccessLog {
		// The request is still counted: the reloader's log stays.
		if r.countRequests {
			body = append(body, r.requestLogDirective())
		} else {
			body = append(body, conf.D("access_log", "off"))
		}
	}
	return body
}

// serverID names the blocks of server number i (its limits' zones).
func serverID(i int) string { return "s" + strconv.Itoa(i) }

// locationID names the blocks of location j of server i: its upstream,
// maps and limits' zones.
func locationID(i, j int) string { return serverID(i) + "_l" + strconv.Itoa(j) }

func isAddHeader(d conf.Directive) bool { return d.Name == "add_header" }

func static(s *v1beta1.StaticLocation) []conf.Directive {
	autoindex := "off"
	if s.Autoindex {
		autoindex = "on"
	}
	last := "=404"
	if s.Fallback != "" {
		// try_files' last argument is an internal redirect: the fallback
		// file is served by whichever location matches it, with status 200.
		last = s.Fallback
	}
	return []conf.Directive{conf.D("try_files", "$uri", "$uri/", last), conf.D("autoindex", autoindex)}
}

// responseHeaders add to every response of the location; set and remove
// hide what the Service sent first (proxy_hide_header, grpc_hide_header),
// so they act on proxied responses only, which the CRD requires.
func responseHeaders(l v1beta1.Location) []conf.Directive {
	hide := hideDirective(l)
	var out []conf.Directive
	add := func(h v1beta1.Header) {
		// "always": error responses carry the header too.
		out = append(out, conf.D("add_header", h.Name, h.Value, "always"))
	}
	for _, h := range l.Headers {
		add(h)
	}
	m := l.ResponseHeaders
	if m == nil {
		return out
	}
	for _, h := range m.Set {
		out = append(out, conf.D(hide, h.Name))
		add(h)
	}
	for _, name := range m.Remove {
		out = append(out, conf.D(hide, name))
	}
	for _, h := range m.Add {
		add(h)
	}
	return out
}

// hideDirective is the directive that hides a header the location's
// Service sends: proxy_hide_header, grpc_hide_header for a gRPC Service,
// "" for a location that proxies nothing.
func hideDirective(l v1beta1.Location) string {
	switch {
	case l.Proxy == nil:
		return ""
	case protocolOf(l.Proxy).grpc():
		return "grpc_hide_header"
	}
	return "proxy_hide_header"
}

// respond answers with the fixed status and body: the body is a literal
// (the CRD allows no "$"), as text/plain.
func respond(rs *v1beta1.RespondLocation) []conf.Directive {
	if rs.Body == "" {
		return []conf.Directive{conf.D("return", itoa(rs.Status))}
	}
	return []conf.Directive{conf.D("default_type", "text/plain"), conf.D("return", itoa(rs.Status), rs.Body)}
}
