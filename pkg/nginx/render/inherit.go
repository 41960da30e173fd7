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

// inheritableNames is inheritable as a set, and inheritableBits gives
// each name a bit of its own.
var inheritableNames, inheritableBits = func() (map[string]bool, map[string]uint32) {
	names, bits := map[string]bool{}, map[string]uint32{}
	for k, name := range inheritable {
		names[name], bits[name] = true, 1<<k
	}
	return names, bits
}()

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
	// A name stated in http or a server, or that a block passing requests
	// on neither states nor sits in a location stating, stays where it is.
	kept := map[string]bool{}
	statedIn(http, kept)
	type location struct {
		server, index int
		values        map[string]string // name -> valueKey of what it states
	}
	var locations []location
	counts := map[string]map[string]int{}
	for s, server := range http {
		if server.Name != "server" {
			continue
		}
		statedIn(server.Block, kept)
		unstatedPasses(server.Block, 0, kept)
		for l, d := range server.Block {
			if d.Name != "location" {
				continue
			}
			values := statedValues(d.Block)
			for name, key := range values {
				if counts[name] == nil {
					counts[name] = map[string]int{}
				}
				counts[name][key]++
			}
			locations = append(locations, location{server: s, index: l, values: values})
		}
	}
	// The most shared value of each name, first found on a tie.
	chosen := map[string]string{}
	var hoisted []conf.Directive
	for _, name := range inheritable {
		if kept[name] {
			continue
		}
		best, bestCount := "", 0
		for _, l := range locations {
			if key, ok := l.values[name]; ok && counts[name][key] > bestCount {
				best, bestCount = key, counts[name][key]
			}
		}
		if bestCount < 2 {
			continue
		}
		chosen[name] = best
		for _, l := range locations {
			if l.values[name] == best {
				hoisted = append(hoisted, named(http[l.server].Block[l.index].Block, name)...)
				break
			}
		}
	}
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

// statedIn marks in kept the inheritable names ds states itself.
func statedIn(ds []conf.Directive, kept map[string]bool) {
	for _, d := range ds {
		if d.Block == nil && inheritableNames[d.Name] {
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
		if d.Block != nil || !inheritableNames[d.Name] {
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
