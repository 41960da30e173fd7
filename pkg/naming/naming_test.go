package naming

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNameIsAValidDNSLabelAndKeepsInputsDistinct(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		parts []string
		want  string // empty: only check validity and length
	}{
		{[]string{"web", "nginx"}, "web-nginx"},
		{[]string{"web"}, "web"},
		{[]string{"Web_Site", "nginx"}, ""},
		{[]string{long, "nginx"}, ""},
		{[]string{"-", "--"}, ""},
		{[]string{"ünïcode", "x"}, ""},
	} {
		got := NameWithLimit(MaxNameLength, tc.parts...)
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("NameWithLimit(63, %q) = %q, not a DNS-1123 label: %v", tc.parts, got, errs)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("NameWithLimit(63, %q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
	a := NameWithLimit(MaxNameLength, long+"x", "nginx")
	b := NameWithLimit(MaxNameLength, long+"y", "nginx")
	if a == b {
		t.Errorf("two different long names truncated to the same %q", a)
	}
	if NameWithLimit(MaxNameLength, "Web_Site") == NameWithLimit(MaxNameLength, "web-site") {
		t.Error("a sanitized name collides with the name it was sanitized into")
	}
	if got := NameWithLimit(52, long); len(got) != 52 {
		t.Errorf("NameWithLimit(52, 70 chars) has %d characters, want 52", len(got))
	}
}

func TestHashIsStableAndOrderIndependentForMaps(t *testing.T) {
	a := Hash(map[string]any{"b": 1, "a": []string{"x"}})
	b := Hash(map[string]any{"a": []string{"x"}, "b": 1})
	if a != b {
		t.Errorf("equal maps hash differently: %s vs %s", a, b)
	}
	if a == Hash(map[string]any{"a": []string{"y"}, "b": 1}) {
		t.Error("different values hash equally")
	}
	if len(a) != 64 {
		t.Errorf("hash %q has length %d, want 64 hex digits", a, len(a))
	}
}

func TestLabelsIncludeInstanceSoInstancesNeverShareSelectors(t *testing.T) {
	got := Labels("nginx", "web", "server")
	want := map[string]string{
		LabelName: "nginx", LabelInstance: "web", LabelComponent: "server", LabelManagedBy: ManagedBy,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Labels mismatch (-want +got):\n%s", diff)
	}
	if cmp.Equal(SelectorLabels("nginx", "web", "server"), SelectorLabels("nginx", "api", "server")) {
		t.Error("two instances share a selector")
	}
	if !ManagedSelector().Matches(labelsSet(got)) {
		t.Error("ManagedSelector does not match the standard labels")
	}
}

type labelsSet map[string]string

func (l labelsSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelsSet) Get(k string) string            { return l[k] }
func (l labelsSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }
