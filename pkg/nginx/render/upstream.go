package render

import (
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// upstreamKeepalive is how many idle connections each worker keeps open to
// a location's Services for reuse when the location does not say.
const upstreamKeepalive = "32"

// upstream is the group of the location's Services: one, or several with
// their weights (nginx's smooth weighted round robin unless the location
// picks another method). The method and keepalive directives hold whatever
// the server lines (upstreamServers) are, one address per Service or one
// per endpoint; nginx wants the method before keepalive.
func upstream(id string, l v1beta1.Location, servers []conf.Directive) conf.Directive {
	body := append(balancing(id, l), servers...)
	return conf.B("upstream", []string{upstreamName(id)}, append(body, keepalive(l.Proxy.KeepAlive)...)...)
}

// sharedUpstream is location id's upstream block, and whether it is the
// first of its kind: locations that would have the same upstream (the same
// servers, balancing and keepalive) and speak to it alike (the same scheme
// and backend TLS settings, since nginx reuses a kept-alive connection by
// the peer's address alone) share the first one's block. A Gateway's
// routes to one Service would otherwise each repeat its endpoints: with
// 1,000 routes, the configuration's largest part. Balancing state and
// idle connections are then the Service's, not each route's.
func (r *renderer) sharedUpstream(id string, l v1beta1.Location, servers []conf.Directive) (conf.Directive, bool) {
	block := upstream(id, l, servers)
	p := protocolOf(l.Proxy)
	speech := []conf.Directive{conf.D(p.module, p.scheme)}
	if p.tls {
		speech = append(speech, r.backendTLS(p.module, l.Proxy)...)
	}
	key := directivesKey(speech) + directivesKey(block.Block)
	if r.upstreams == nil {
		r.upstreams, r.upstreamsByKey = map[string]string{}, map[string]string{}
	}
	name, shared := r.upstreamsByKey[key]
	if !shared {
		name = block.Args[0]
		r.upstreamsByKey[key] = name
	}
	r.upstreams[id] = name
	return block, !shared
}

// upstreamOf is the name of location id's upstream block.
func (r *renderer) upstreamOf(id string) string {
	if name, ok := r.upstreams[id]; ok {
		return name
	}
	return upstreamName(id)
}

// directivesKey is ds as one string that differs whenever the directives
// differ: every name and argument is preceded by its length (writeArgs),
// and a block is in braces.
func directivesKey(ds []conf.Directive) string {
	var b strings.Builder
	var add func(ds []conf.Directive)
	add = func(ds []conf.Directive) {
		for _, d := range ds {
			writeArgs(&b, append([]string{d.Name}, d.Args...))
			if d.Block == nil {
				b.WriteByte('-')
				continue
			}
			b.WriteByte('{')
			add(d.Block)
			b.WriteByte('}')
		}
	}
	add(ds)
	return b.String()
}

// balancingMethods are nginx's directive and arguments for each of NGINX
// Gateway Fabric's method names but round_robin, nginx's default. A table,
// not the name's words: a name the CRD does not know renders nothing.
var balancingMethods = map[string][]string{
	"least_conn":            {"least_conn"},
	"ip_hash":               {"ip_hash"},
	"hash":                  {"hash"},
	"hash consistent":       {"hash", "consistent"},
	"random":                {"random"},
	"random two":            {"random", "two"},
	"random two least_conn": {"random", "two", "least_conn"},
}

// balancing is the upstream's method directive: none for round robin; a
// consistent hash on the affinity cookie with session affinity; the hash
// key goes after "hash".
func balancing(id string, l v1beta1.Location) []conf.Directive {
	p := l.Proxy
	if p.SessionAffinity != nil {
		return []conf.Directive{conf.D("hash", varAffinityKey+id, "consistent")}
	}
	words, ok := balancingMethods[p.LoadBalancingMethod]
	if !ok {
		return nil
	}
	args := slices.Clone(words[1:])
	if words[0] == "hash" && p.HashKey != nil {
		key := hashKeyVariable(*p.HashKey)
		if mayBeEmpty(*p.HashKey) {
			key = varHashKey + id // hashKeyMap
		}
		args = append([]string{key}, args...)
	}
	return []conf.Directive{conf.D(words[0], args...)}
}

// varHashKey (suffixed with the location's id) is a hash key that is never
// empty (hashKeyMap).
const varHashKey = "$hash_key_"

// mayBeEmpty tells whether a request may lack k: a header, a cookie or a
// query parameter.
func mayBeEmpty(k v1beta1.HashKey) bool { return k.Source != "ClientIP" && k.Source != "RequestURI" }

// hashKeyMap gives the requests without the hash key one key of their
// own, "-": nginx's hash falls back to round robin on an empty key, which
// would spread them over every endpoint, while the API promises that they
// all go to one. A request with the key hashes what it did before.
func hashKeyMap(id string, p *v1beta1.ProxyLocation) []conf.Directive {
	if p.HashKey == nil || p.SessionAffinity != nil || !mayBeEmpty(*p.HashKey) {
		return nil
	}
	if words := balancingMethods[p.LoadBalancingMethod]; len(words) == 0 || words[0] != "hash" {
		return nil
	}
	key, out := partVariable("hash_"+id, p.HashKey.Source, p.HashKey.Name)
	return append(out, conf.B("map", []string{key, varHashKey + id},
		conf.D("default", key),
		conf.D("", "-"),
	))
}

// hashKeyVariable is the nginx variable holding a key that every request
// has: the client's address or the request URI (see hashKeyMap for the
// others).
func hashKeyVariable(k v1beta1.HashKey) string {
	if k.Source == "ClientIP" {
		return "$remote_addr"
	}
	return "$request_uri"
}

// Variables of a location's session affinity (suffixed with its id): the
// hash key, and the Set-Cookie value for a request that came without the
// cookie.
const (
	varAffinityKey       = "$affinity_"
	varAffinitySetCookie = "$affinity_cookie_"
)

// affinityKeyMap declares the key a location with session affinity hashes
// consistently on (see balancing): the cookie's value, or for a request
// without it the request's own id ($request_id, 32 random hex digits),
// which the response then sets as the cookie (affinityCookieMap), so the
// client's next request hashes to the same endpoint.
func affinityKeyMap(id string, c v1beta1.SessionCookie) conf.Directive {
	cookie := "$cookie_" + c.Name
	return conf.B("map", []string{cookie, varAffinityKey + id},
		conf.D("default", cookie),
		conf.D("", "$request_id"),
	)
}

// affinityCookie sets the cookie (affinityCookieMap) on every response
// (errors too) to a request that came without it; add_header skips an
// empty value.
func affinityCookie(id string) conf.Directive {
	return conf.D("add_header", "Set-Cookie", varAffinitySetCookie+id, "always")
}

// affinityCookieMap is the Set-Cookie value for a request without the
// cookie. The attributes come from typed fields whose patterns hold no '$'
// or ';'.
func affinityCookieMap(id, locationPath string, c v1beta1.SessionCookie) conf.Directive {
	path := c.Path
	if path == "" {
		path = locationPath
	}
	value := c.Name + "=$request_id; Path=" + path
	if c.MaxAgeSeconds != nil {
		value += "; Max-Age=" + itoa(*c.MaxAgeSeconds)
	}
	if c.Secure {
		value += "; Secure"
	}
	if ptr.Deref(c.HTTPOnly, false) {
		value += "; HttpOnly"
	}
	if c.SameSite != "" {
		value += "; SameSite=" + c.SameSite
	}
	return conf.B("map", []string{"$cookie_" + c.Name, varAffinitySetCookie + id},
		conf.D("default", ""),
		conf.D("", value),
	)
}

// keepalive is the upstream's connection reuse: today's 32 connections
// when the location does not say, none with connections 0.
func keepalive(k *v1beta1.UpstreamKeepAlive) []conf.Directive {
	if k == nil {
		return []conf.Directive{conf.D("keepalive", upstreamKeepalive)}
	}
	n := ptr.Deref(k.Connections, 0) // the CRD defaults it
	if n == 0 {
		return nil
	}
	return []conf.Directive{
		conf.D("keepalive", itoa(n)),
		conf.D("keepalive_requests", itoa(k.Requests)),
		conf.D("keepalive_time", itoa(k.TimeSeconds)+"s"),
		conf.D("keepalive_timeout", itoa(k.TimeoutSeconds)+"s"),
	}
}

// cookiePath is the Path of a location's affinity cookie when the spec sets
// none: the location's path, or / for a regular expression.
func cookiePath(l v1beta1.Location) string {
	if v1beta1.PathTypeOf(l) == v1beta1.PathRegularExpression {
		return "/"
	}
	return l.Path
}
