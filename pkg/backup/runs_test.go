package backup

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/agent"
)

func id(n int) string { return fmt.Sprintf("202611%02dT030000.000000000Z-0000000%d", n, n%10) }

func result(n int, pruned ...int) *agent.BackupResult {
	start := time.Date(2026, 11, n, 3, 0, 0, 0, time.UTC)
	r := &agent.BackupResult{ID: id(n), StartTime: start, CompletionTime: start.Add(time.Minute), SizeBytes: int64(n), SHA256: "sum", Location: "nginx/team-a/web/" + id(n) + "/"}
	for _, p := range pruned {
		r.Pruned = append(r.Pruned, id(p))
	}
	return r
}

func ids(records []v1beta1.BackupRecord) []string {
	var out []string
	for _, r := range records {
		out = append(out, r.ID)
	}
	return out
}

func TestMergeRecordsKeepsTheNewestAndForgetsWhatRetentionPruned(t *testing.T) {
	pvc := v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}
	existing := mergeRecords(nil, []run{{result: result(1)}, {result: result(2)}}, pvc)
	tests := []struct {
		name string
		runs []run
		want []string
	}{
		{"a new run is added, newest first", []run{{result: result(3)}}, []string{id(3), id(2), id(1)}},
		{"pruned ids leave the list", []run{{result: result(3, 1)}}, []string{id(3), id(2)}},
		{"failed runs and runs without a result add nothing", []run{{failed: true, failure: "boom"}, {}}, []string{id(2), id(1)}},
		{"a run seen again is not duplicated", []run{{result: result(2)}}, []string{id(2), id(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(mergeRecords(existing, tc.runs, pvc))); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	var many []run
	for n := 1; n <= MaxBackupRecords+5; n++ {
		many = append(many, run{result: result(n)})
	}
	got := mergeRecords(nil, many, pvc)
	if len(got) != MaxBackupRecords || got[0].ID != id(MaxBackupRecords+5) {
		t.Errorf("%d records starting with %s; want the newest %d", len(got), got[0].ID, MaxBackupRecords)
	}
}

func TestRecordsCarryAFullLocationAndTheAgentsFigures(t *testing.T) {
	tests := []struct {
		dest v1beta1.Destination
		want string
	}{
		{v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}, "pvc://backups/nginx/team-a/web/" + id(7) + "/"},
		{v1beta1.Destination{S3: &v1beta1.S3Destination{Bucket: "b"}}, "s3://b/nginx/team-a/web/" + id(7) + "/"},
	}
	for _, tc := range tests {
		rec := mergeRecords(nil, []run{{result: result(7)}}, tc.dest)[0]
		if rec.Location != tc.want || rec.SizeBytes != 7 || rec.SHA256 != "sum" ||
			rec.CompletionTime.Sub(rec.StartTime.Time) != time.Minute {
			t.Errorf("record %+v; want location %s, size 7, one minute", rec, tc.want)
		}
	}
}

// The agent prints its result as the last line; a termination message that
// fell back to the log tail has other lines before it.
func TestLastLineIsTheAgentsResult(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"x"}`: `{"id":"x"}`,
		"warning: prune failed\n{\"id\":\"x\"}\n": `{"id":"x"}`,
		"": "",
	} {
		if got := lastLine(in); got != want {
			t.Errorf("lastLine(%q) = %q, want %q", in, got, want)
		}
	}
}
