package agent

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIDsSortInTimeOrderAndEncodeTheirTime(t *testing.T) {
	base := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	times := []time.Time{
		base.Add(10 * time.Hour),
		base,
		base.Add(time.Nanosecond),
		base.Add(-365 * 24 * time.Hour),
		base.In(time.FixedZone("UTC+9", 9*3600)).Add(time.Second), // zone does not matter
	}
	var ids []string
	for _, tm := range times {
		ids = append(ids, NewID(tm))
	}
	sort.Strings(ids)
	var got []time.Time
	for _, id := range ids {
		tm, err := IDTime(id)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tm)
	}
	want := []time.Time{times[3], times[1], times[2], times[4].UTC(), times[0]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("times of sorted ids (-want +got):\n%s", diff)
	}
	if NewID(base) == NewID(base) {
		t.Error("two ids for the same instant are equal; the random suffix is missing")
	}
	for _, bad := range []string{"", "latest", "../20261122T030000.000000000Z-00000000", "20261122T030000Z-0000"} {
		if _, err := IDTime(bad); err == nil {
			t.Errorf("IDTime(%q) accepted an invalid id", bad)
		}
	}
}
