package gatewayapi

// What tenancy asks of every case's instance: the other tenants' routes
// keep what they had (their locations and streams, their Accepted status),
// the hostile route is served or told why not, and no value of it defines
// or changes an nginx variable: no named group in a regular expression it
// supplied (nginx makes a capture of a group named args the $args of the
// whole configuration), no '$' of its values where nginx expands one.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// harness is what every case runs against.
type harness struct {
	tn       *tenancy
	ngx      *nginxEnv
	baseline *baseline // nil while the baseline's own instance is made
}

// baseline is the instance of the Gateway with the baseline routes alone:
// what each of them is served as, and the regular expressions of its
// nginx.conf.
type baseline struct {
	run     *send
	refs    []graph.RouteRef
	units   map[string]bool
	byRoute map[graph.RouteRef][]string
	regexes map[string]bool
}

// unitsOf are what spec serves, each as one string: every location a
// route made (by its server's port and names), every stream. The value is
// what it belongs to: a location's route (its name, routeName), a
// stream's backends' namespace.
func unitsOf(spec *v1beta1.NginxOperatorSpec) map[string]string {
	out := map[string]string{}
	for _, s := range spec.Config.Servers {
		server := s.Port + " " + strings.Join(s.ServerNames, ",")
		for _, l := range s.Locations {
			if l.Name == "" {
				continue // the 404s the translation adds
			}
			b, _ := json.Marshal(l)
			out["server "+server+" location "+string(b)] = l.Name
		}
	}
	for _, st := range spec.Config.Streams {
		b, _ := json.Marshal(st)
		owner := ""
		if len(st.Backends) > 0 {
			owner = st.Backends[0].Namespace
		}
		out["stream "+string(b)] = "stream " + owner
	}
	return out
}

// routeName is the name the translation gives the locations of route ref
// (pkg/gateway's routeName), or what unitsOf says a stream route's
// streams belong to.
func routeName(ref graph.RouteRef) string {
	switch ref.Kind {
	case graph.KindHTTPRoute, graph.KindGRPCRoute:
		return strings.ToLower(string(ref.Kind)) + "/" + ref.Key.Namespace + "/" + ref.Key.Name
	}
	return "stream " + ref.Key.Namespace
}

func refOf(rt client.Object) graph.RouteRef {
	var kind gatewayv1.Kind
	switch rt.(type) {
	case *gatewayv1.HTTPRoute:
		kind = graph.KindHTTPRoute
	case *gatewayv1.GRPCRoute:
		kind = graph.KindGRPCRoute
	case *gatewayv1.TLSRoute:
		kind = graph.KindTLSRoute
	case *gatewayv1.TCPRoute:
		kind = graph.KindTCPRoute
	case *gatewayv1.UDPRoute:
		kind = graph.KindUDPRoute
	}
	return graph.RouteRef{Kind: kind, Key: types.NamespacedName{Namespace: rt.GetNamespace(), Name: rt.GetName()}}
}

// newBaseline reads the baseline's own run: it must be clean, each route
// served and accepted, or no case can be judged against it.
func newBaseline(tn *tenancy, run *send) (*baseline, error) {
	if p := run.problems(); len(p) > 0 || run.config == nil {
		return nil, fmt.Errorf("the baseline alone: %s; %q", run.nginxVerdict(), p)
	}
	b := &baseline{run: run, units: map[string]bool{}, byRoute: map[graph.RouteRef][]string{}, regexes: map[string]bool{}}
	for _, rt := range tn.baseline {
		b.refs = append(b.refs, refOf(rt))
	}
	owners := map[string]graph.RouteRef{}
	for _, ref := range b.refs {
		owners[routeName(ref)] = ref
	}
	for unit, owner := range unitsOf(run.spec) {
		b.units[unit] = true
		if owner == "stream " {
			// A stream of no backend the translation makes of a listener
			// (a TLS listener's own hostname, closed where no route
			// takes it): the Gateway's, no route's.
			continue
		}
		ref, ok := owners[owner]
		if !ok {
			return nil, fmt.Errorf("the baseline's instance serves %s, of no baseline route (%s)", unit, owner)
		}
		b.byRoute[ref] = append(b.byRoute[ref], unit)
	}
	for _, ref := range b.refs {
		v := verdictOf(run.tr, ref, nil, nil)
		if len(b.byRoute[ref]) == 0 || !v.accepted || !v.resolved {
			return nil, fmt.Errorf("the baseline's %s %s: %d locations or streams, status %+v", ref.Kind, ref.Key, len(b.byRoute[ref]), v)
		}
	}
	for _, r := range regexesOf(run.tree) {
		b.regexes[r.regex] = true
	}
	return b, nil
}

// verdictOf is what translation tr says of route ref: its status entries
// for the Gateway, and, when units and known are given, whether the
// instance's units hold one of it that known (the baseline's) does not.
func verdictOf(tr gateway.Translation, ref graph.RouteRef, units map[string]string, known map[string]bool) routeVerdict {
	var v routeVerdict
	v.resolved = true
	for _, rp := range tr.Routes {
		if rp.Kind != ref.Kind || rp.Key != ref.Key {
			continue
		}
		for _, p := range rp.Parents {
			v.entries++
			accepted := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted))
			resolved := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs))
			if accepted != nil && accepted.Status == metav1.ConditionTrue {
				v.accepted = true
				v.overridden = v.overridden || accepted.Message == conditions.RouteAcceptedOverridden(0).Message
			} else if v.message == "" && accepted != nil {
				v.message = accepted.Reason + ": " + accepted.Message
			}
			if resolved == nil || resolved.Status != metav1.ConditionTrue {
				v.resolved = false
				if v.message == "" && resolved != nil {
					v.message = resolved.Reason + ": " + resolved.Message
				}
			}
		}
	}
	for unit := range units {
		if !known[unit] {
			v.served = true
			break
		}
	}
	return v
}

// judge sets the tenancy verdicts of case s, whose instance rendered.
func (h *harness) judge(ctx context.Context, s *send) {
	b := h.baseline
	units := unitsOf(s.spec)
	for _, ref := range b.refs {
		missing := 0
		for _, unit := range b.byRoute[ref] {
			if _, ok := units[unit]; !ok {
				missing++
			}
		}
		if missing > 0 {
			s.lost = append(s.lost, fmt.Sprintf("%s %s: %d of its %d locations or streams are no longer in the instance", ref.Kind, ref.Key, missing, len(b.byRoute[ref])))
		}
		if v := verdictOf(s.tr, ref, nil, nil); !v.accepted || !v.resolved {
			s.lost = append(s.lost, fmt.Sprintf("%s %s is told %s", ref.Kind, ref.Key, v.message))
		}
	}
	if s.route != nil {
		s.hostile = verdictOf(s.tr, refOf(s.route), units, b.units)
	}
	s.variables = h.variables(ctx, s)
}

// regexInFile is a regular expression of nginx.conf and where it is.
type regexInFile struct{ regex, where string }

// regexesOf are the regular expressions of a configuration: of locations,
// of map entries (a '~' key), of if conditions, of rewrites and of server
// names.
func regexesOf(tree []conf.Directive) []regexInFile {
	var out []regexInFile
	var walk func(dirs []conf.Directive, parent string)
	walk = func(dirs []conf.Directive, parent string) {
		for _, d := range dirs {
			switch {
			case parent == "map" && strings.HasPrefix(d.Name, "~"):
				out = append(out, regexInFile{strings.TrimPrefix(strings.TrimPrefix(d.Name, "~*"), "~"), "map entry"})
			case d.Name == "location" && len(d.Args) == 2 && (d.Args[0] == "~" || d.Args[0] == "~*"):
				out = append(out, regexInFile{d.Args[1], "location"})
			case d.Name == "if":
				for i, a := range d.Args {
					if (a == "~" || a == "~*" || a == "!~" || a == "!~*") && i+1 < len(d.Args) {
						out = append(out, regexInFile{strings.TrimSuffix(d.Args[i+1], ")"), "if"})
					}
				}
			case d.Name == "rewrite" && len(d.Args) > 0:
				out = append(out, regexInFile{d.Args[0], "rewrite"})
			case d.Name == "server_name":
				for _, a := range d.Args {
					if strings.HasPrefix(a, "~") {
						out = append(out, regexInFile{strings.TrimPrefix(a, "~"), "server_name"})
					}
				}
			}
			walk(d.Block, d.Name)
		}
	}
	walk(tree, "")
	return out
}

// namedGroup finds the start of a named group: (?P<name>, (?<name> or
// (?'name'; a lookbehind's (?<= and (?<! have no name.
var namedGroup = regexp.MustCompile(`\(\?(?:P?<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')`)

// namedGroups are the names of the groups of re, but for a '(' a
// backslash escapes.
func namedGroups(re string) []string {
	var out []string
	for _, m := range namedGroup.FindAllStringSubmatchIndex(re, -1) {
		backslashes := 0
		for i := m[0] - 1; i >= 0 && re[i] == '\\'; i-- {
			backslashes++
		}
		if backslashes%2 == 1 {
			continue
		}
		var name string
		if m[2] >= 0 {
			name = re[m[2]:m[3]]
		} else {
			name = re[m[4]:m[5]]
		}
		out = append(out, name)
	}
	return out
}

// variableRef finds nginx variable references, $name and ${name}.
var variableRef = regexp.MustCompile(`\$(\{[^}]*\}?|[A-Za-z0-9_]+)`)

// walkArgs calls f for every argument of every directive of tree, with
// the names of the blocks it is in; i is -1 for the directive's name (a
// map's or geo's entry: its key).
func walkArgs(tree []conf.Directive, f func(path []string, d conf.Directive, i int)) {
	var walk func(dirs []conf.Directive, path []string)
	walk = func(dirs []conf.Directive, path []string) {
		for _, d := range dirs {
			f(path, d, -1)
			for i := range d.Args {
				f(path, d, i)
			}
			walk(d.Block, append(slices.Clip(path), d.Name))
		}
	}
	walk(tree, nil)
}

// expands reports whether nginx expands variables in argument i of d (its
// name for -1) in the blocks path: where it reads a complex value, not a
// regular expression, a location, a name it defines or a header's name.
func expands(path []string, d conf.Directive, i int) bool {
	parent := ""
	if len(path) > 0 {
		parent = path[len(path)-1]
	}
	switch {
	case parent == "map" || parent == "geo" || parent == "types" || parent == "upstream":
		// A map's values are complex values; its keys, a geo's entries
		// and an upstream's servers are not.
		return parent == "map" && i >= 0
	case i < 0:
		return false
	}
	switch d.Name {
	case "location", "server_name", "listen", "include", "rewrite_log", "types_hash_max_size":
		return false
	case "rewrite":
		return i > 0
	case "if":
		return i == 0 || !slices.Contains([]string{"~", "~*", "!~", "!~*"}, d.Args[i-1])
	case "map", "geo":
		return i == 0 // the source; the other is the variable defined
	case "set":
		return i == 1
	case "add_header", "proxy_set_header", "grpc_set_header", "proxy_hide_header", "grpc_hide_header", "add_trailer":
		return i > 0
	}
	return true
}

// variables are what of case s's values defines or changes a variable, or
// expands one: a named group in a regular expression of the file the
// baseline's does not have (the route supplied it); and, for a value with
// a variable reference, more expansions of it than in the file of the same
// route with the value's '$' made '_' (the control): the value reached an
// argument nginx expands.
func (h *harness) variables(ctx context.Context, s *send) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range regexesOf(s.tree) {
		if h.baseline.regexes[r.regex] || seen[r.regex] {
			continue
		}
		seen[r.regex] = true
		for _, name := range slices.Compact(slices.Sorted(slices.Values(namedGroups(r.regex)))) {
			out = append(out, fmt.Sprintf("the %s regex %s holds the group named %q: a match sets $%s, which every $%s of nginx.conf reads, the other tenants' included",
				r.where, showValue(r.regex), name, name, name))
		}
	}
	v, ok := s.c.value.(string)
	refs := variableRef.FindAllString(v, -1)
	if !ok || len(refs) == 0 || s.route == nil {
		return out
	}
	control, err := h.control(ctx, s.route, v)
	if err != nil {
		return append(out, "the control (the value's '$' made '_') could not be rendered: "+err.Error())
	}
	for _, ref := range slices.Compact(slices.Sorted(slices.Values(refs))) {
		if n, c := expansions(s.tree, ref), expansions(control, ref); n > c {
			out = append(out, fmt.Sprintf("%s is expanded %d times where nginx expands variables, %d times with the value's '$' made '_': the value reached nginx as a variable",
				ref, n, c))
		}
	}
	return out
}

// control is the parsed nginx.conf of the instance with route rt whose
// string fields holding v hold it with '_' for each '$'.
func (h *harness) control(ctx context.Context, rt client.Object, v string) ([]conf.Directive, error) {
	b, err := json.Marshal(rt)
	if err != nil {
		return nil, err
	}
	from, _ := json.Marshal(v)
	to, _ := json.Marshal(strings.ReplaceAll(v, "$", "_"))
	b = bytes.ReplaceAll(b, from, to)
	neutral := rt.DeepCopyObject().(client.Object)
	if err := json.Unmarshal(b, neutral); err != nil {
		return nil, err
	}
	spec, _, err := instanceOf(ctx, h.tn.inputs(neutral))
	if err != nil {
		return nil, err
	}
	config, err := h.ngx.render(spec)
	if err != nil {
		return nil, err
	}
	return conf.Parse(config)
}

// expansions counts ref in the arguments of tree nginx expands variables
// in.
func expansions(tree []conf.Directive, ref string) int {
	n := 0
	walkArgs(tree, func(path []string, d conf.Directive, i int) {
		if i >= 0 && expands(path, d, i) {
			n += strings.Count(d.Args[i], ref)
		}
	})
	return n
}
