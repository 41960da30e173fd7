package reloader

import "testing"

func TestParentOfReadsTheFieldAfterTheCommandName(t *testing.T) {
	for _, c := range []struct {
		stat string
		want int
	}{
		{"42 (nginx) S 7 42 42 0 -1", 7},
		// A command name may hold spaces and parentheses.
		{"42 (a) b (c) S 9 42 42 0 -1", 9},
		{"42 (nginx", -1},
		{"42 (nginx) S", -1},
		{"42 (nginx) S x", -1},
	} {
		if got := parentOf([]byte(c.stat)); got != c.want {
			t.Errorf("parentOf(%q) = %d, want %d", c.stat, got, c.want)
		}
	}
}

func TestSwitchedOnlyOnceNewWorkersRunAndNoOldOneAccepts(t *testing.T) {
	const (
		worker = "nginx: worker process"
		old    = "nginx: worker process is shutting down"
	)
	before := []int{10, 11}
	for _, c := range []struct {
		name string
		now  []process
		want bool
	}{
		{"nothing changed yet", []process{{10, worker}, {11, worker}}, false},
		{"new workers, the old ones not told yet", []process{{10, worker}, {11, worker}, {20, worker}}, false},
		{"new workers, one old one still accepting", []process{{10, old}, {11, worker}, {20, worker}}, false},
		{"new workers, the old ones shutting down", []process{{10, old}, {11, old}, {20, worker}, {21, worker}}, true},
		{"new workers, the old ones gone", []process{{20, worker}}, true},
		{"old ones shutting down, no new worker", []process{{10, old}}, false},
		{"no worker at all", nil, false},
	} {
		if got := switched(before, c.now); got != c.want {
			t.Errorf("%s: switched = %v, want %v", c.name, got, c.want)
		}
	}
}
