package gatewayapi

// The test's report: the outcome counts by route kind, the failing cases
// by field, and the failure table.

import (
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// problemKind is the kind of a problem, for the counts: what comes before
// its first ':'.
func problemKind(p string) string {
	k, _, _ := strings.Cut(p, ":")
	return k
}

func summary(sends []*send) string {
	counts := map[string]map[gatewayv1.Kind]int{}
	failing := map[gatewayv1.Kind]int{}
	byProblem := map[string]map[gatewayv1.Kind]int{}
	total := map[gatewayv1.Kind]int{}
	var outcomes []string
	for _, s := range sends {
		o := s.outcome()
		if counts[o] == nil {
			counts[o] = map[gatewayv1.Kind]int{}
			outcomes = append(outcomes, o)
		}
		counts[o][s.c.kind]++
		total[s.c.kind]++
		p := s.problems()
		if len(p) == 0 {
			continue
		}
		failing[s.c.kind]++
		kinds := map[string]bool{}
		for _, x := range p {
			kinds[problemKind(x)] = true
		}
		for k := range kinds {
			if byProblem[k] == nil {
				byProblem[k] = map[gatewayv1.Kind]int{}
			}
			byProblem[k][s.c.kind]++
		}
	}
	sort.Strings(outcomes)
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(label string, n func(gatewayv1.Kind) int) {
		fmt.Fprintf(w, "%s\t", label)
		sum := 0
		for _, k := range kinds {
			fmt.Fprintf(w, "%d\t", n(k))
			sum += n(k)
		}
		fmt.Fprintf(w, "%d\t\n", sum)
	}
	fmt.Fprint(w, "outcome\t")
	for _, k := range kinds {
		fmt.Fprintf(w, "%s\t", k)
	}
	fmt.Fprint(w, "all\t\n")
	for _, o := range outcomes {
		row(o, func(k gatewayv1.Kind) int { return counts[o][k] })
	}
	row("cases", func(k gatewayv1.Kind) int { return total[k] })
	row("FAILING (any outcome)", func(k gatewayv1.Kind) int { return failing[k] })
	var ps []string
	for p := range byProblem {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for _, p := range ps {
		row("  of which "+p, func(k gatewayv1.Kind) int { return byProblem[p][k] })
	}
	_ = w.Flush()
	return b.String()
}

// byField is one line per field with failing cases: how many of its cases
// fail, and of which problems.
func byField(sends []*send) string {
	type line struct {
		kind            gatewayv1.Kind
		field           string
		cases, failures int
		problems        map[string]int
	}
	lines := map[string]*line{}
	var keys []string
	for _, s := range sends {
		key := string(s.c.kind) + " " + s.c.field
		l := lines[key]
		if l == nil {
			l = &line{kind: s.c.kind, field: s.c.field, problems: map[string]int{}}
			lines[key] = l
			keys = append(keys, key)
		}
		l.cases++
		p := s.problems()
		if len(p) == 0 {
			continue
		}
		l.failures++
		kinds := map[string]bool{}
		for _, x := range p {
			kinds[problemKind(x)] = true
		}
		for k := range kinds {
			l.problems[k]++
		}
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "kind\tfield\tfailing/cases\tproblems")
	for _, key := range keys {
		l := lines[key]
		if l.failures == 0 {
			continue
		}
		var ps []string
		for p, n := range l.problems {
			ps = append(ps, fmt.Sprintf("%s %d", p, n))
		}
		sort.Strings(ps)
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\n", l.kind, l.field, l.failures, l.cases, strings.Join(ps, ", "))
	}
	_ = w.Flush()
	return b.String()
}

// severity orders the failure table: what stops every tenant first (the
// instance refused, nginx refusing the file), then what takes another
// tenant's traffic or variables, then what leaves the hostile tenant
// untold, then the rest.
func severity(s *send) int {
	switch {
	case s.instanceErr != nil, s.renderErr != nil, s.panicked != "":
		return 0
	case s.config != nil && s.nginxSaid != "":
		return 1
	case len(s.lost) > 0:
		return 2
	case len(s.variables) > 0:
		return 3
	default:
		return 4
	}
}

// failureTable is one line per failing case: the case, its kind, field
// and value, what nginx made of the instance, and the problems.
func failureTable(failing []*send) string {
	sort.SliceStable(failing, func(i, j int) bool {
		a, b := failing[i], failing[j]
		if sa, sb := severity(a), severity(b); sa != sb {
			return sa < sb
		}
		return a.c.id < b.c.id
	})
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tkind\tfield\tvalue\tnginx\tproblems")
	for _, s := range failing {
		var short []string
		for _, p := range s.problems() {
			short = append(short, hostiletest.OneLine(p, 220))
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", s.c.id, s.c.kind, s.c.field, hostiletest.OneLine(s.c.show, 60),
			hostiletest.OneLine(s.nginxVerdict(), 150), strings.Join(short, " ; "))
	}
	_ = w.Flush()
	return b.String()
}
