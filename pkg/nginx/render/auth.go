package render

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// External authentication: nginx's auth_request sends, in the access phase,
// a subrequest to an internal exact location of the server, which proxies
// it to the authentication service without the body; the subrequest's
// status decides. auth_request_set keeps headers of the answer in
// variables, which a proxy location sends on. An answer the service gives
// may be kept in a cache zone shared by the workers, per key.

// authPathPrefix starts the exact path of each authentication's internal
// location.
const authPathPrefix = "/nginx-operator-auth/"

// authCacheZone is the one cache zone every cached authentication shares:
// its keys start with the authentication's id.
const authCacheZone = "auth_cache"

// externalAuth is an authentication a location applies: its own, or its
// server's, named by the id of the one that states it.
type externalAuth struct {
	id   string
	spec *v1beta1.ExternalAuth
}

// authOf is the authentication location j of server number server applies:
// its own, unless disabled, or the server's.
func authOf(server int, s v1beta1.Server, j int, l v1beta1.Location) (externalAuth, bool) {
	switch {
	case l.ExternalAuth != nil:
		return externalAuth{locationID(server, j), l.ExternalAuth}, !l.ExternalAuth.Disabled
	case s.ExternalAuth != nil:
		return externalAuth{serverID(server), s.ExternalAuth}, !s.ExternalAuth.Disabled
	}
	return externalAuth{}, false
}

// authsOf are the authentications s's locations apply, each once, in the
// order of first use.
func authsOf(server int, s v1beta1.Server) []externalAuth {
	var out []externalAuth
	for j, l := range serverLocations(s) {
		if a, ok := authOf(server, s, j, l); ok && !slices.ContainsFunc(out, func(b externalAuth) bool { return b.id == a.id }) {
			out = append(out, a)
		}
	}
	return out
}

// upstreamID names the upstream of an authentication by a Service.
func (a externalAuth) upstreamID() string { return "auth_" + a.id }

// service is a location that proxies to the authentication's Service, for
// the upstream machinery.
func (a externalAuth) service() v1beta1.Location {
	if a.spec.Namespace != "" {
		// Only a backend names another namespace's Service.
		return v1beta1.Location{Proxy: &v1beta1.ProxyLocation{TLS: a.spec.TLS, Backends: []v1beta1.Backend{
			{Service: a.spec.Service, Namespace: a.spec.Namespace, Port: a.spec.Port, Weight: ptr.To[int32](1)}}}}
	}
	return v1beta1.Location{Proxy: &v1beta1.ProxyLocation{Service: a.spec.Service, Port: a.spec.Port, TLS: a.spec.TLS}}
}

// variable holds the k-th of the answer's responseHeaders.
func (a externalAuth) variable(k int) string { return "$auth_" + a.id + "_" + strconv.Itoa(k) }

// requestHeaders are the answer's responseHeaders, set on the request a
// proxy location sends (empty, and so dropped, where the answer lacks one).
func (a externalAuth) requestHeaders() []header {
	out := make([]header, 0, len(a.spec.ResponseHeaders))
	for k, name := range a.spec.ResponseHeaders {
		out = append(out, header{name, a.variable(k)})
	}
	return out
}

// authBlocks are the http-level blocks the authentications of spec's
// servers need: the upstream of each Service (shared as sharedUpstream
// shares), the cache zone, and the variables of the sign-in redirect.
func (r *renderer) authBlocks(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	var out []conf.Directive
	cached, signIn := false, false
	for i, s := range spec.Config.Servers {
		if s.RedirectToHTTPS != nil {
			continue
		}
		for _, a := range authsOf(i, s) {
			signIn = signIn || a.spec.SignIn != nil
			if a.spec.Cache != nil {
				cached = true
				for k := range a.spec.Cache.Key {
					_, blocks := cacheKeyPart(a, k)
					out = append(out, blocks...)
				}
			}
			to := a.service()
			if servers := r.upstreamServers(to.Proxy); len(servers) > 0 {
				if block, fresh := r.sharedUpstream(a.upstreamID(), to, servers); fresh {
					out = append(out, block)
				}
			}
		}
	}
	if cached {
		out = append(out, conf.D("proxy_cache_path", r.temp(authCacheZone), "levels=1:2",
			"keys_zone="+authCacheZone+":4m", "max_size=64m", "inactive=1d", "use_temp_path=off"))
	}
	if signIn {
		out = append(out, escapedRequestURI()...)
	}
	return out
}

// authLocations are the internal locations of the authentications server
// number server's locations apply, and their sign-in redirects.
func (r *renderer) authLocations(server int, s v1beta1.Server) []conf.Directive {
	var out []conf.Directive
	for _, a := range authsOf(server, s) {
		out = append(out, conf.B("location", []string{"=", authPathPrefix + a.id}, r.authLocation(a)...))
		if in := a.spec.SignIn; in != nil {
			target := in.URL + "?"
			if strings.Contains(in.URL, "?") {
				target = in.URL + "&"
			}
			target += in.RedirectParameter + "=" + varForwardedProto + "://" + varForwardedHost + varEscapedRequestURI
			out = append(out, conf.B("location", []string{signInLocation(a.id)}, conf.D("return", "302", target)))
		}
	}
	return out
}

func signInLocation(id string) string { return "@auth_sign_in_" + id }

// authLocation proxies an authentication's subrequest: a GET without
// body, with the client's headers, the forwarding headers, and what the
// request was. A Service without a ready endpoint answers 503, which the
// location asking turns into 500, as any answer but 2xx, 401 and 403.
func (r *renderer) authLocation(a externalAuth) []conf.Directive {
	body := []conf.Directive{conf.D("internal")}
	to := a.service()
	if len(r.upstreamServers(to.Proxy)) == 0 {
		return append(body, conf.D("return", "503"))
	}
	p := protocolOf(to.Proxy)
	target := p.scheme + r.upstreamOf(a.upstreamID()) + cmp.Or(a.spec.Path, "/")
	timeout := itoa(a.spec.TimeoutSeconds) + "s"
	body = append(body,
		conf.D("proxy_pass", target),
		conf.D("proxy_pass_request_body", "off"),
		conf.D("proxy_http_version", "1.1"),
	)
	for _, h := range authRequestHeaders(ServiceDNSName(a.spec.Service, cmp.Or(a.spec.Namespace, r.opts.Namespace))) {
		body = append(body, conf.D("proxy_set_header", h.Name, h.Value))
	}
	body = append(body,
		conf.D("proxy_connect_timeout", timeout),
		conf.D("proxy_send_timeout", timeout),
		conf.D("proxy_read_timeout", timeout),
		conf.D("proxy_next_upstream_timeout", timeout),
	)
	if p.tls {
		body = append(body, r.backendTLS("proxy", to.Proxy)...)
	}
	return append(body, authCache(a)...)
}

// authRequestHeaders are the headers of an authentication's subrequest
// besides the client's own: Host is the service's, Content-Length goes
// with the body, Upgrade and Connection are nginx's (keepalive).
func authRequestHeaders(host string) []header {
	return []header{
		{"Host", host},
		{"Content-Length", ""},
		{"Upgrade", ""},
		{"Connection", ""},
		{"X-Real-IP", "$remote_addr"},
		{"X-Forwarded-For", varForwardedFor},
		{"X-Forwarded-Proto", varForwardedProto},
		{"X-Forwarded-Host", varForwardedHost},
		{"X-Forwarded-Port", varForwardedPort},
		{"X-Forwarded-Method", "$request_method"},
		{"X-Forwarded-Uri", "$request_uri"},
		{"X-Original-Method", "$request_method"},
		{"X-Original-URL", varForwardedProto + "://" + varForwardedHost + "$request_uri"},
	}
}

// authCache keeps an authentication's answers per key: its id and the
// values of its key's parts, each on a line of its own (no header or
// cookie value holds a line feed, so no two combinations share a key).
// What the service says about caching is ignored: the spec decides.
func authCache(a externalAuth) []conf.Directive {
	c := a.spec.Cache
	if c == nil {
		return nil
	}
	key := a.id
	for k := range c.Key {
		part, _ := cacheKeyPart(a, k)
		key += "\n" + part
	}
	duration := itoa(c.DurationSeconds) + "s"
	return []conf.Directive{
		conf.D("proxy_cache", authCacheZone),
		conf.D("proxy_cache_key", key),
		conf.D("proxy_cache_valid", "200", "201", "202", "204", "401", "403", duration),
		conf.D("proxy_ignore_headers", "Cache-Control", "Expires", "Set-Cookie", "Vary", "X-Accel-Expires"),
	}
}

// cacheKeyPart is the variable of the k-th part of a's cache key, and the
// map defining it where nginx has none (see partVariable).
func cacheKeyPart(a externalAuth, k int) (string, []conf.Directive) {
	part := a.spec.Cache.Key[k]
	if part.Source == "ClientIP" {
		return "$remote_addr", nil
	}
	return partVariable("auth_key_"+a.id+"_"+strconv.Itoa(k), part.Source, part.Name)
}

// authDirectives make a location ask a: the subrequest, the variables of
// the answer's headers and, where the location answers HTTP, the sign-in
// redirect for 401. A location's error_page hides the server's: it states
// them again after its own.
func authDirectives(a externalAuth, grpc bool, serverPages []conf.Directive) []conf.Directive {
	out := []conf.Directive{conf.D("auth_request", authPathPrefix+a.id)}
	for k, name := range a.spec.ResponseHeaders {
		answer := "$upstream_http_" + strings.TrimPrefix(headerVariable(name), "$http_")
		out = append(out, conf.D("auth_request_set", a.variable(k), answer))
	}
	if a.spec.SignIn != nil && !grpc {
		out = append(out, conf.D("error_page", "401", "=", signInLocation(a.id)))
		out = append(out, serverPages...)
	}
	return out
}

// The sign-in redirect carries the request's URI percent-encoded. nginx
// has no function for it, so a chain of maps does it: each piece is the
// URI up to its next character that a query value cannot hold as it is
// (% & + ; #), with that character encoded, and the rest goes on to the
// next map. nginx evaluates the maps only for a redirect. A URI with more
// than signInPieces such characters is cut before the first one left (the
// tail): cut, a URL cannot smuggle a parameter of its own into the sign-in
// page's.
const (
	signInPieces         = 16
	varEscapedRequestURI = "$sign_in_uri"
	signInSpecial        = "%&+;#"
)

// escapedRequestURI are the maps defining varEscapedRequestURI.
func escapedRequestURI() []conf.Directive {
	var out []conf.Directive
	rest, pieces := "$request_uri", ""
	for k := 1; k <= signInPieces; k++ {
		piece := "$sign_in_piece_" + strconv.Itoa(k)
		entries := make([]conf.Directive, 0, len(signInSpecial)+1)
		for _, c := range signInSpecial {
			entries = append(entries, conf.D("~^([^"+signInSpecial+"]*)"+regexp.QuoteMeta(string(c)), "$1"+percentEncoded(c)))
		}
		out = append(out, conf.B("map", []string{rest, piece}, append(entries, conf.D("default", rest))...))
		next := "$sign_in_rest_" + strconv.Itoa(k)
		out = append(out, conf.B("map", []string{rest, next},
			conf.D("~^[^"+signInSpecial+"]*["+signInSpecial+"](.*)$", "$1"),
			conf.D("default", ""),
		))
		rest, pieces = next, pieces+piece
	}
	tail := "$sign_in_tail"
	out = append(out, conf.B("map", []string{rest, tail}, conf.D("~^([^"+signInSpecial+"]*)", "$1")))
	return append(out, conf.B("map", []string{"$request_uri", varEscapedRequestURI}, conf.D("default", pieces+tail)))
}

func percentEncoded(c rune) string { return fmt.Sprintf("%%%02X", c) }
