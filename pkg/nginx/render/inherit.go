package render

import (
	"slices"
	"strconv"
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

// inheritableBits gives each inheritable name a bit of its own.
var inheritableBits = func() map[string]uint32 {
	bits := map[string]uint32{}
	for k, name := range inheritable {
		bits[name] = 1 << k
	}
	return bits
}()

// isInheritable reports whether d is a simple directive of inheritable.
func isInheritable(d conf.Directive) bool {
	_, ok := inheritableBits[d.Name]
	return ok && d.Block == nil
}

// passOf is the directive that makes a block use name (proxy_pass for the
// proxy_ settings, grpc_pass for the grpc_ ones).
func passOf(name string) string {
	module, _, _ := strings.Cut(name, "_")
	return module + "_pass"
}

// inheritShared moves each inheritable directive that two or more of the
// servers' locations state alike into the http context (see above), and
// returns the main context with it moved. It reads every location once: a
// Gateway's instance has thousands.
func inheritShared(main []conf.Directive) []conf.Directive {
	i := slices.IndexFunc(main, func(d conf.Directive) bool { return d.Name == "http" })
	if i < 0 {
		return main
	}
	http := slices.Clone(main[i].Block)
	locations, kept := statedByLocations(http)
	chosen, hoisted := sharedValues(http, locations, kept)
	if len(hoisted) == 0 {
		return main
	}
	cloned := map[int]bool{}
	for _, l := range locations {
		drop := func(d conf.Directive) bool {
			k, ok := l.values[d.Name]
			return ok && d.Block == nil && chosen[d.Name] == k
		}
		if !slices.ContainsFunc(http[l.server].Block[l.index].Block, drop) {
			continue
		}
		if !cloned[l.server] {
			http[l.server].Block, cloned[l.server] = slices.Clone(http[l.server].Block), true
		}
		http[l.server].Block[l.index].Block = slices.DeleteFunc(slices.Clone(http[l.server].Block[l.index].Block), drop)
	}
	first := slices.IndexFunc(http, func(d conf.Directive) bool { return d.Name == "server" })
	out := slices.Clone(main)
	out[i].Block = slices.Concat(http[:first], hoisted, http[first:])
	return out
}

// statedLocation is what one location of the http context states: the
// key of each inheritable directive's value (statedValues).
type statedLocation struct {
	server, index int // in http, and in the server's block
	values        map[string]string
}

// statedByLocations reads what every location of the servers of http
// states, and which names must stay where they are (kept): those stated
// in http or a server, or that a block passing requests on neither states
// nor sits in a location stating.
func statedByLocations(http []conf.Directive) ([]statedLocation, map[string]bool) {
	kept := map[string]bool{}
	statedIn(http, kept)
	var locations []statedLocation
	for s, server := range http {
		if server.Name != "server" {
			continue
		}
		statedIn(server.Block, kept)
		unstatedPasses(server.Block, 0, kept)
		for l, d := range server.Block {
			if d.Name == "location" {
				locations = append(locations, statedLocation{server: s, index: l, values: statedValues(d.Block)})
			}
		}
	}
	return locations, kept
}

// sharedValues chooses, for each name not kept, the value most locations
// state (the first found on a tie), if two or more do: the key of each
// chosen value, and the directives to state in http.
func sharedValues(http []conf.Directive, locations []statedLocation, kept map[string]bool) (map[string]string, []conf.Directive) {
	counts := map[string]map[string]int{}
	for _, l := range locations {
		for name, key := range l.values {
			if counts[name] == nil {
				counts[name] = map[string]int{}
			}
			counts[name][key]++
		}
	}
	chosen := map[string]string{}
	var hoisted []conf.Directive
	for _, name := range inheritable {
		if kept[name] {
			continue
		}
		var best *statedLocation
		for k, l := range locations {
			if key, ok := l.values[name]; ok && (best == nil || counts[name][key] > counts[name][best.values[name]]) {
				best = &locations[k]
			}
		}
		if best == nil || counts[name][best.values[name]] < 2 {
			continue
		}
		chosen[name] = best.values[name]
		hoisted = append(hoisted, named(http[best.server].Block[best.index].Block, name)...)
	}
	return chosen, hoisted
}

// statedIn marks in kept the inheritable names ds states itself.
func statedIn(ds []conf.Directive, kept map[string]bool) {
	for _, d := range ds {
		if isInheritable(d) {
			kept[d.Name] = true
		}
	}
}

// unstatedPasses marks in kept each inheritable name that a block in
// blocks (or below) passing requests on for its module neither states nor
// sits in a block stating (stated, a bit per name of inheritable): it
// would inherit the http-level value instead of nginx's default.
func unstatedPasses(blocks []conf.Directive, stated uint32, kept map[string]bool) {
	for _, d := range blocks {
		if d.Block == nil {
			continue
		}
		inner := stated
		for _, c := range d.Block {
			if c.Block == nil {
				if bit, ok := inheritableBits[c.Name]; ok {
					inner |= bit
				}
			}
		}
		for _, c := range d.Block {
			if c.Block != nil || !strings.HasSuffix(c.Name, "_pass") {
				continue
			}
			for k, name := range inheritable {
				if inner&(1<<k) == 0 && passOf(name) == c.Name {
					kept[name] = true
				}
			}
		}
		unstatedPasses(d.Block, inner, kept)
	}
}

// statedValues are the inheritable names ds states, each with a key of
// its value (all its occurrences, in order).
func statedValues(ds []conf.Directive) map[string]string {
	var builders map[string]*strings.Builder
	for _, d := range ds {
		if !isInheritable(d) {
			continue
		}
		if builders == nil {
			builders = map[string]*strings.Builder{}
		}
		b := builders[d.Name]
		if b == nil {
			b = &strings.Builder{}
			builders[d.Name] = b
		}
		writeArgs(b, d.Args)
	}
	out := make(map[string]string, len(builders))
	for name, b := range builders {
		out[name] = b.String()
	}
	return out
}

// writeArgs adds args to a key, each preceded by its length, the list by
// its count: different arguments never make the same key.
func writeArgs(b *strings.Builder, args []string) {
	var n [20]byte
	b.Write(strconv.AppendInt(n[:0], int64(len(args)), 10))
	b.WriteByte(';')
	for _, a := range args {
		b.Write(strconv.AppendInt(n[:0], int64(len(a)), 10))
		b.WriteByte(':')
		b.WriteString(a)
	}
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
