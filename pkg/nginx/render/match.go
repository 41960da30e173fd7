package render

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// Request matching: which location of a server answers a request.
//
// nginx chooses a location block by path alone: an exact path, then the
// regular expressions in order, then the longest prefix. Each location of
// the spec becomes one or two such blocks (a PathPrefix /a is "= /a" and
// "/a/"). A block whose requests several locations may answer (locations
// of the same path with different matches, or a match the request may fail
// so that a shorter prefix answers) holds no handler of its own: a map
// computes, from the request's method, headers, query and path, the first
// location in Gateway API's order whose match the request meets, and
// try_files hands the request to that location's handler, a named
// location, with its URI and method untouched.

// pathRoute is one location of a server as request matching sees it.
type pathRoute struct {
	index int // in the server's list of locations
	kind  string
	path  string // PathPrefix: without its trailing '/'; "" for "/"
	match *v1beta1.RequestMatch
}

// matchBlock is one nginx location block and the locations that may answer
// its requests, most specific first. A candidate's conditions are those the
// block does not already imply.
type matchBlock struct {
	args       []string
	candidates []candidate
}

type candidate struct {
	route      int // index into the server's locations
	conditions []condition
}

// condition is one test of a request, rendered as a map from source to "1"
// when the regular expression matches. A query parameter is first taken
// out of $args (param names the parameter).
type condition struct {
	source, pattern, param string
}

// inline reports a block with a single handler and nothing to test.
func (b matchBlock) inline() bool {
	return len(b.candidates) == 1 && len(b.candidates[0].conditions) == 0
}

// pathRoutes reads the path type of each location.
func pathRoutes(locations []v1beta1.Location) []pathRoute {
	out := make([]pathRoute, len(locations))
	for i, l := range locations {
		kind := v1beta1.PathTypeOf(l)
		path := l.Path
		if kind == v1beta1.PathPrefixElements {
			path = strings.TrimRight(path, "/")
		}
		out[i] = pathRoute{index: i, kind: kind, path: path, match: l.Match}
	}
	return out
}

// matchBlocks are the location blocks of a server's locations, in the order
// their first location appears (which orders the regular expressions).
func matchBlocks(locations []v1beta1.Location) []matchBlock {
	routes := pathRoutes(locations)
	var blocks []matchBlock
	index := map[string]int{}
	add := func(route int, args ...string) {
		key := strings.Join(args, " ")
		i, ok := index[key]
		if !ok {
			i = len(blocks)
			index[key] = i
			blocks = append(blocks, matchBlock{args: args})
		}
		blocks[i].candidates = append(blocks[i].candidates, candidate{route: route})
	}
	for _, rt := range routes {
		switch rt.kind {
		case v1beta1.PathExact:
			add(rt.index, "=", rt.path)
		case v1beta1.PathRegularExpression:
			add(rt.index, "~", wholeMatch(rt.path))
		case v1beta1.PathPrefixElements:
			if rt.path != "" {
				add(rt.index, "=", rt.path)
			}
			add(rt.index, rt.path+"/")
		default:
			add(rt.index, rt.path)
		}
	}
	if !slices.ContainsFunc(routes, pathRoute.conditional) {
		// Nothing to test: each block's most specific own location
		// answers, and no other can (the common case, kept cheap).
		for i := range blocks {
			first := slices.MinFunc(blocks[i].candidates, func(a, b candidate) int { return precedence(routes[a.route], routes[b.route]) })
			blocks[i].candidates = []candidate{first}
		}
		return blocks
	}
	p := newPrefixIndex(routes)
	for i := range blocks {
		blocks[i].candidates = p.candidatesOf(blocks, i)
	}
	return blocks
}

// conditional reports a location whose match or regular expression asks
// something of a request beyond the block nginx picks for it.
func (rt pathRoute) conditional() bool {
	return rt.match != nil || rt.kind == v1beta1.PathRegularExpression
}

// prefixIndex finds the locations that may answer a block's requests.
type prefixIndex struct {
	routes         []pathRoute
	strings, elems map[string][]int // prefix -> routes
	regexes        []int            // routes, in order
}

func newPrefixIndex(routes []pathRoute) *prefixIndex {
	p := &prefixIndex{routes: routes, strings: map[string][]int{}, elems: map[string][]int{}}
	for _, rt := range routes {
		switch rt.kind {
		case v1beta1.PathPrefixString:
			p.strings[rt.path] = append(p.strings[rt.path], rt.index)
		case v1beta1.PathPrefixElements:
			p.elems[rt.path] = append(p.elems[rt.path], rt.index)
		case v1beta1.PathRegularExpression:
			p.regexes = append(p.regexes, rt.index)
		}
	}
	return p
}

// candidatesOf block i: the locations whose path matches every request
// nginx gives the block, and those whose path may match one (tested by a
// condition on $uri), in precedence order, up to the first with nothing
// left to test.
func (p *prefixIndex) candidatesOf(blocks []matchBlock, i int) []candidate {
	b := blocks[i]
	implied := map[int]bool{}
	for _, c := range b.candidates {
		implied[c.route] = true
	}
	var maybe []int
	switch b.args[0] {
	case "=":
		p.prefixesOf(b.args[1], true, implied)
		for _, r := range p.regexes {
			if mayMatch(p.routes[r].path, b.args[1]) {
				maybe = append(maybe, r)
			}
		}
	case "~":
		// The request matched no earlier regular expression (nginx would
		// have chosen it), and may match a later one or a prefix.
		for _, r := range p.regexes {
			if !implied[r] && blockOfRoute(blocks, r) > i {
				maybe = append(maybe, r)
			}
		}
		literal := regexLiteralPrefix(p.routes[b.candidates[0].route].path)
		p.prefixesOf(literal, false, implied)
		for _, rt := range p.routes {
			if (rt.kind == v1beta1.PathPrefixString || rt.kind == v1beta1.PathPrefixElements) && strings.HasPrefix(rt.path, literal) {
				maybe = append(maybe, rt.index)
			}
		}
	default:
		// Every prefix of the block's path that a location has: nginx
		// picked the longest block, so the shorter ones hold for every
		// request here.
		p.prefixesOf(b.args[0], false, implied)
	}
	var out []candidate
	for r := range implied {
		out = append(out, candidate{route: r, conditions: requestConditions(p.routes[r].match)})
	}
	for _, r := range maybe {
		if implied[r] {
			continue
		}
		conds := append([]condition{pathCondition(p.routes[r])}, requestConditions(p.routes[r].match)...)
		if conds[0].pattern == "" { // the root prefix: every path
			conds = conds[1:]
		}
		out = append(out, candidate{route: r, conditions: conds})
	}
	slices.SortFunc(out, func(a, b candidate) int { return precedence(p.routes[a.route], p.routes[b.route]) })
	for k, c := range out {
		if len(c.conditions) == 0 {
			return out[:k+1]
		}
	}
	return out
}

// prefixesOf marks the prefix locations whose path matches path and every
// path that starts with it (exact: path alone).
func (p *prefixIndex) prefixesOf(path string, exact bool, into map[int]bool) {
	for _, r := range p.elems[""] {
		into[r] = true
	}
	for k := 1; k <= len(path); k++ {
		for _, r := range p.strings[path[:k]] {
			into[r] = true
		}
		// An element prefix q holds for q's block "q/" and below, and
		// for the exact path q.
		if k < len(path) && path[k] == '/' || exact && k == len(path) {
			for _, r := range p.elems[path[:k]] {
				into[r] = true
			}
		}
	}
}

// mayMatch reports whether the regular expression re may match all of
// path: false only when RE2, whose syntax the controller holds re to and
// whose matching PCRE shares, says it does not.
func mayMatch(re, path string) bool {
	compiled, err := regexp.Compile(wholeMatch(re))
	return err != nil || compiled.MatchString(path)
}

// regexLiteralPrefix is the text every path re matches starts with
// ("" when RE2 cannot compile it): a prefix location whose path starts
// with it may match such a path, one that is a prefix of it matches them
// all, and any other matches none.
func regexLiteralPrefix(re string) string {
	compiled, err := regexp.Compile(re)
	if err != nil {
		return ""
	}
	prefix, _ := compiled.LiteralPrefix()
	return prefix
}

func blockOfRoute(blocks []matchBlock, route int) int {
	for i, b := range blocks {
		for _, c := range b.candidates {
			if c.route == route {
				return i
			}
		}
	}
	return -1
}

// precedence orders two locations as Gateway API orders the rules of
// HTTPRoutes: an exact path, then (here) a regular expression, then the
// longest prefix; then a method; then more headers; then more query
// parameters; then the first in the list.
func precedence(a, b pathRoute) int {
	rank := func(r pathRoute) int {
		switch r.kind {
		case v1beta1.PathExact:
			return 0
		case v1beta1.PathRegularExpression:
			return 1
		}
		return 2
	}
	counts := func(r pathRoute) (method, headers, query int) {
		if r.match == nil {
			return 0, 0, 0
		}
		if r.match.Method != "" {
			method = 1
		}
		return method, len(r.match.Headers), len(r.match.QueryParams)
	}
	if c := rank(a) - rank(b); c != 0 {
		return c
	}
	if rank(a) == 2 {
		if c := len(b.path) - len(a.path); c != 0 {
			return c
		}
	}
	am, ah, aq := counts(a)
	bm, bh, bq := counts(b)
	for _, c := range []int{bm - am, bh - ah, bq - aq} {
		if c != 0 {
			return c
		}
	}
	return a.index - b.index
}

// requestConditions are the tests of a match beyond its path.
func requestConditions(m *v1beta1.RequestMatch) []condition {
	if m == nil {
		return nil
	}
	var out []condition
	if m.Method != "" {
		out = append(out, condition{source: "$request_method", pattern: literalMatch(m.Method)})
	}
	for _, h := range m.Headers {
		out = append(out, condition{source: headerVariable(h.Name), pattern: valueMatch(h.Type, h.Value)})
	}
	for _, q := range m.QueryParams {
		out = append(out, condition{source: "$args", param: q.Name, pattern: valueMatch(q.Type, q.Value)})
	}
	return out
}

// pathCondition tests $uri, the path nginx matches locations against, as
// rt's path type says. The root prefix has no pattern: every path has it.
func pathCondition(rt pathRoute) condition {
	c := condition{source: "$uri"}
	switch rt.kind {
	case v1beta1.PathExact:
		c.pattern = literalMatch(rt.path)
	case v1beta1.PathRegularExpression:
		c.pattern = wholeMatch(rt.path)
	case v1beta1.PathPrefixElements:
		if rt.path != "" {
			c.pattern = "^" + regexp.QuoteMeta(rt.path) + `(?:/|\z)`
		}
	default:
		if rt.path != "/" {
			c.pattern = "^" + regexp.QuoteMeta(rt.path)
		}
	}
	return c
}

// headerVariable is nginx's variable of a request header: its name in lower
// case with '-' as '_' (the CRD allows letters, digits and '-' only).
func headerVariable(name string) string {
	return "$http_" + strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

func valueMatch(kind, value string) string {
	if kind == v1beta1.MatchRegularExpression {
		return wholeMatch(value)
	}
	return literalMatch(value)
}

// literalMatch matches exactly s; \z, unlike $, does not also match before
// a final newline (which a decoded path can end with).
func literalMatch(s string) string { return "^" + regexp.QuoteMeta(s) + `\z` }

// wholeMatch makes the regular expression re match the whole subject. The
// controller has compiled re (RE2): its groups are balanced, so it cannot
// close the group it is put in.
func wholeMatch(re string) string { return "^(?:" + re + `)\z` }

// queryVariable holds the first value of query parameter k of server id.
func queryVariable(server string, k int) string {
	return "$query_" + server + "_" + strconv.Itoa(k)
}

// matchVariable is "1" when condition k of server id holds, else "0".
func matchVariable(server string, k int) string {
	return "$match_" + server + "_" + strconv.Itoa(k)
}

// routeVariable names the location that answers a request of block k.
func routeVariable(server string, k int) string {
	return "$route_" + server + "_b" + strconv.Itoa(k)
}

// routeLocation is the named location of location id, which a block hands
// its requests to.
func routeLocation(id string) string { return "@route_" + id }

// noRouteLocation answers 404 for a request of server id no location
// matches.
func noRouteLocation(server string) string { return "@route_" + server + "_none" }

// serverMatch is the request matching of one server: its blocks, and its
// conditions and query parameters numbered once for all its blocks.
type serverMatch struct {
	server  int
	id      string
	blocks  []matchBlock
	conds   []condition
	condID  map[condition]int
	params  []string
	paramID map[string]int
}

// matching is the request matching of server number i, computed once for
// the http-level maps and the server's locations.
func (r *renderer) matching(i int, locations []v1beta1.Location) *serverMatch {
	if m, ok := r.matches[i]; ok {
		return m
	}
	m := &serverMatch{server: i, id: serverID(i), blocks: matchBlocks(locations), condID: map[condition]int{}, paramID: map[string]int{}}
	for _, b := range m.blocks {
		if b.inline() {
			continue
		}
		for _, c := range b.candidates {
			for _, cond := range c.conditions {
				if _, ok := m.condID[cond]; !ok {
					m.condID[cond] = len(m.conds)
					m.conds = append(m.conds, cond)
				}
				if _, ok := m.paramID[cond.param]; cond.param != "" && !ok {
					m.paramID[cond.param] = len(m.params)
					m.params = append(m.params, cond.param)
				}
			}
		}
	}
	if r.matches == nil {
		r.matches = map[int]*serverMatch{}
	}
	r.matches[i] = m
	return m
}

// maps are the http-level maps of the server's matching: each query
// parameter's first value, each condition, and each dispatching block's
// choice of location.
func (m *serverMatch) maps() []conf.Directive {
	var out []conf.Directive
	for k, name := range m.params {
		// The value runs to the next '&'; (?:^|&) keeps "xname" from
		// matching "name".
		out = append(out, conf.B("map", []string{"$args", queryVariable(m.id, k)},
			conf.D("~(?:^|&)"+regexp.QuoteMeta(name)+"=([^&]*)", "$1"),
			conf.D("default", ""),
		))
	}
	for k, c := range m.conds {
		source := c.source
		if c.param != "" {
			source = queryVariable(m.id, m.paramID[c.param])
		}
		out = append(out, conf.B("map", []string{source, matchVariable(m.id, k)},
			conf.D("~"+c.pattern, "1"),
			conf.D("default", "0"),
		))
	}
	for k, b := range m.blocks {
		if !b.inline() {
			out = append(out, m.routeMap(k, b))
		}
	}
	return out
}

// routeMap names the location that answers a request of block k: the
// block's conditions are concatenated, one character each, and each
// candidate in turn asks for '1' where its own are.
func (m *serverMatch) routeMap(k int, b matchBlock) conf.Directive {
	var used []int // condition ids, in the order of the source string
	position := map[int]int{}
	for _, c := range b.candidates {
		for _, cond := range c.conditions {
			id := m.condID[cond]
			if _, ok := position[id]; !ok {
				position[id] = len(used)
				used = append(used, id)
			}
		}
	}
	var source strings.Builder
	for _, id := range used {
		source.WriteString(matchVariable(m.id, id))
	}
	var entries []conf.Directive
	seen := map[string]bool{}
	fallback := noRouteLocation(m.id)
	for _, c := range b.candidates {
		target := routeLocation(locationID(m.server, c.route))
		if len(c.conditions) == 0 {
			fallback = target
			break
		}
		want := []byte(strings.Repeat(".", len(used)))
		for _, cond := range c.conditions {
			want[position[m.condID[cond]]] = '1'
		}
		pattern := "~^" + strings.TrimRight(string(want), ".")
		if seen[pattern] {
			continue // an earlier candidate asks for the same: this one never answers
		}
		seen[pattern] = true
		entries = append(entries, conf.D(pattern, target))
	}
	entries = append(entries, conf.D("default", fallback))
	return conf.B("map", []string{source.String(), routeVariable(m.id, k)}, entries...)
}
