package render

import (
	"slices"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// Settings every proxy location repeats are said once, at the http level,
// and inherited.
//
// Each proxy location states its forwarding headers, HTTP version and
// timeouts: eight headers and five settings, about 600 bytes, the same in
// nearly every location. A Gateway with 1,000 routes repeated them 2,000
// times (a path prefix is two location blocks), which made most of its
// configuration, and nginx parsed and kept each copy. nginx inherits a
// directive from the enclosing level where a block does not state it (a
// repeatable one such as proxy_set_header as a whole: a block with one
// proxy_set_header inherits none), so each of these directives is stated
// once in the http context with the value most locations have, and a
// location with that very value leaves it out. What every location
// applies stays exactly what it was (TestInheritingChangesNoLocationsSettings).

// inheritable are the directives stated once where most locations share
// them: the settings of proxy.go's locations that every one of them has.
var inheritable = []string{
	"proxy_http_version", "proxy_set_header",
	"proxy_connect_timeout", "proxy_send_timeout", "proxy_read_timeout", "proxy_next_upstream_timeout",
	"grpc_set_header",
	"grpc_connect_timeout", "grpc_send_timeout", "grpc_read_timeout", "grpc_next_upstream_timeout",
}

// passOf is the directive that makes a block use name (proxy_pass for the
// proxy_ settings, grpc_pass for the grpc_ ones).
func passOf(name string) string {
	module, _, _ := strings.Cut(name, "_")
	return module + "_pass"
}

// inheritShared moves each inheritable directive that two or more of the
// servers' locations state alike into the http context (see above), and
// returns the main context with it moved.
func inheritShared(main []conf.Directive) []conf.Directive {
	i := slices.IndexFunc(main, func(d conf.Directive) bool { return d.Name == "http" })
	if i < 0 {
		return main
	}
	http := slices.Clone(main[i].Block)
	var hoisted []conf.Directive
	for _, name := range inheritable {
		value, ok := sharedValue(http, name)
		if !ok {
			continue
		}
		hoisted = append(hoisted, value...)
		key := directivesKey(value)
		for s := range http {
			if http[s].Name != "server" {
				continue
			}
			server := slices.Clone(http[s].Block)
			for l := range server {
				if server[l].Name == "location" && directivesKey(named(server[l].Block, name)) == key {
					server[l].Block = slices.DeleteFunc(slices.Clone(server[l].Block), func(d conf.Directive) bool { return d.Name == name })
				}
			}
			http[s].Block = server
		}
	}
	if len(hoisted) == 0 {
		return main
	}
	first := slices.IndexFunc(http, func(d conf.Directive) bool { return d.Name == "server" })
	out := slices.Clone(main)
	out[i].Block = slices.Concat(http[:first], hoisted, http[first:])
	return out
}

// sharedValue is the value of directive name (all its occurrences, in
// order) that most of the servers' locations state, first found on a tie,
// if stating it in the http context changes no block's setting: neither
// the http context nor any server states it, two or more locations share
// the value, and every block that passes requests on (passOf) states it or
// sits in a location that does, since such a block would otherwise
// inherit the new http-level value instead of nginx's default.
func sharedValue(http []conf.Directive, name string) ([]conf.Directive, bool) {
	if len(named(http, name)) > 0 {
		return nil, false
	}
	counts := map[string]int{}
	var best []conf.Directive
	bestCount := 0
	for _, server := range http {
		if server.Name != "server" {
			continue
		}
		if len(named(server.Block, name)) > 0 || !everyPassStates(server.Block, name, false) {
			return nil, false
		}
		for _, l := range server.Block {
			value := named(l.Block, name)
			if l.Name != "location" || len(value) == 0 {
				continue
			}
			key := directivesKey(value)
			counts[key]++
			if counts[key] > bestCount {
				best, bestCount = value, counts[key]
			}
		}
	}
	return best, bestCount >= 2
}

// everyPassStates reports whether every block in blocks (and below) that
// passes requests on for name's module states name, or is inside a block
// that does (stated).
func everyPassStates(blocks []conf.Directive, name string, stated bool) bool {
	for _, d := range blocks {
		if d.Block == nil {
			continue
		}
		inner := stated || len(named(d.Block, name)) > 0
		if len(named(d.Block, passOf(name))) > 0 && !inner {
			return false
		}
		if !everyPassStates(d.Block, name, inner) {
			return false
		}
	}
	return true
}

// named are the simple directives called name among ds, in order.
func named(ds []conf.Directive, name string) []conf.Directive {
	var out []conf.Directive
	for _, d := range ds {
		if d.Name == name && d.Block == nil {
			out = append(out, d)
		}
	}
	return out
}
