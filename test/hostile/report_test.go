package hostile

// The test's report: the outcome counts and the failure table.

import (
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
)

func summary(sends []*send) string {
	counts := map[string]map[string]int{}
	failing, childRefused := map[string]int{}, map[string]int{}
	kinds := map[string]map[string]int{}
	var outcomes []string
	for _, s := range sends {
		o := s.outcome()
		if counts[o] == nil {
			counts[o] = map[string]int{}
			outcomes = append(outcomes, o)
		}
		counts[o][s.path]++
		if s.childRefused != "" {
			childRefused[s.path]++
		}
		if p := s.problems(); len(p) > 0 {
			failing[s.path]++
			for _, k := range p {
				k, _, _ = strings.Cut(k, ":")
				if kinds[k] == nil {
					kinds[k] = map[string]int{}
				}
				kinds[k][s.path]++
			}
		}
	}
	sort.Strings(outcomes)
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "outcome\t%s\t%s\n", pathBeta, pathAlpha)
	for _, o := range outcomes {
		fmt.Fprintf(w, "%s\t%d\t%d\n", o, counts[o][pathBeta], counts[o][pathAlpha])
	}
	fmt.Fprintf(w, "  b by a child's API server (the short list)\t%d\t%d\n", childRefused[pathBeta], childRefused[pathAlpha])
	fmt.Fprintf(w, "FAILING (any outcome)\t%d\t%d\n", failing[pathBeta], failing[pathAlpha])
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Fprintf(w, "  of which %s\t%d\t%d\n", k, kinds[k][pathBeta], kinds[k][pathAlpha])
	}
	_ = w.Flush()
	return b.String()
}

// severity orders the failure table: what reached nginx wrongly
// first, then what breaks the operator, then bypasses nginx did not mind.
func severity(s *send) int {
	switch {
	case s.treeDiff != "":
		return 0
	case s.config != nil && s.nginxSaid != "":
		return 1
	case len(s.meaning) > 0:
		return 2
	case s.undecodable != "" || s.renderPanic != "" || s.err != "":
		return 3
	default:
		return 4
	}
}

// failureTable is one line per failing send: the case, the path, what
// the renderer and nginx made of the stored spec, and the problems.
func failureTable(failing []*send) string {
	sort.SliceStable(failing, func(i, j int) bool {
		a, b := failing[i], failing[j]
		if a.path != b.path {
			return a.path == pathBeta // the v1beta1 path's failures first: they are renderer gaps
		}
		if sa, sb := severity(a), severity(b); sa != sb {
			return sa < sb
		}
		return a.c.id < b.c.id
	})
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tpath\tfield\tvalue\tnginx\tproblems")
	for _, s := range failing {
		var short []string
		for _, p := range s.problems() {
			short = append(short, hostiletest.OneLine(p, 200))
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", s.c.id, s.path, s.c.field, s.c.show,
			hostiletest.OneLine(s.nginxVerdict(), 130), strings.Join(short, " ; "))
	}
	_ = w.Flush()
	return b.String()
}
