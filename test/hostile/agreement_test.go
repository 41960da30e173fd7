package hostile

// The covering sample: the sends that go to the real apiserver as well, so
// that the in-process model of admission (admission_test.go) is held to what
// the apiserver does, and what the two say of each.

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"
)

// spotCheckEvery is how often a send outside the covering part of the sample
// goes to the apiserver too: every 64th case, by id, on both paths.
const spotCheckEvery = 64

// admissionVerdict is what admission made of a send, the class the sample
// covers: refused, stored, or stored yet refused when re-sent as v1beta1.
func admissionVerdict(s *send) string {
	switch {
	case s.err != "":
		return "failed"
	case s.refused != "":
		return "refused"
	case s.bypass != "":
		return "stored, refused as v1beta1"
	default:
		return "stored"
	}
}

// coveringSample picks, from sends judged in process, those the apiserver
// judges too: the first send of every field, path and admission verdict (so
// each field's refusals and admissions, through both versions, are held to
// the apiserver's), and every spotCheckEvery-th case besides.
func coveringSample(sends []*send) []int {
	seen := map[string]bool{}
	var picked []int
	for i, s := range sends {
		key := s.c.field + "\x00" + s.path + "\x00" + admissionVerdict(s)
		if !seen[key] || s.c.id%spotCheckEvery == 0 {
			seen[key] = true
			picked = append(picked, i)
		}
	}
	return picked
}

// disagreement is how the apiserver's admission of a send differs from the
// in-process one's; "" when they agree: the same verdict and, when stored,
// the same spec read back.
func disagreement(inProcess, apiserver *send) string {
	if apiserver.err != "" {
		return "the apiserver's send failed: " + apiserver.err
	}
	if a, b := admissionVerdict(inProcess), admissionVerdict(apiserver); a != b {
		return fmt.Sprintf("in process %s (%s), the apiserver %s (%s)", a, why(inProcess), b, why(apiserver))
	}
	if inProcess.refused == "" && !equality.Semantic.DeepEqual(inProcess.stored, apiserver.stored) {
		return "the stored spec differs (-in process +apiserver):\n" + cmp.Diff(inProcess.stored, apiserver.stored)
	}
	return ""
}

// why is the message behind a send's admission verdict.
func why(s *send) string {
	switch {
	case s.refused != "":
		return s.refused
	case s.bypass != "":
		return s.bypass
	}
	return "-"
}

// disagreementTable is one line per sampled send the two admissions judge
// differently.
func disagreementTable(sends []*send, differ map[int]string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tpath\tfield\tvalue\tdisagreement")
	for i, s := range sends {
		if d, ok := differ[i]; ok {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", s.c.id, s.path, s.c.field, s.c.show, hostiletest.OneLine(d, 400))
		}
	}
	_ = w.Flush()
	return b.String()
}
