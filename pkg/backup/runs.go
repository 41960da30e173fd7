package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/agent"
	"github.com/nginx-operator/nginx-operator/pkg/backup/jobs"
)

// MaxBackupRecords bounds status.backups: the status is for humans and
// alerts, the storage holds the full history.
const MaxBackupRecords = 10

// run is what one finished Job of a backup left behind: the agent's result
// of a successful run, or the reason a failed one gave.
type run struct {
	job     string
	failed  bool
	result  *agent.BackupResult // nil: failed, or no readable result
	failure string              // the agent's last words on failure
}

// runMemory remembers what each finished Job (by UID) of each backup
// reported, so its pods are read once per operator process, not on every
// reconcile. Jobs that are gone (history limit, TTL, deletion) and deleted
// backups are forgotten.
type runMemory struct {
	mu   sync.Mutex
	runs map[types.NamespacedName]map[types.UID]run
}

func (m *runMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, key)
}

// finishedRuns returns the backup's finished runs, oldest first, reading the
// pods of Jobs it has not seen finish before. Jobs are listed from the cache.
func (r *Reconciler) finishedRuns(ctx context.Context, b *v1beta1.NginxBackup) ([]run, error) {
	var list batchv1.JobList
	if err := r.Client.List(ctx, &list, client.InNamespace(b.Namespace), client.MatchingLabels(jobs.Labels(b))); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, c batchv1.Job) int { return a.CreationTimestamp.Compare(c.CreationTimestamp.Time) })

	r.memory.mu.Lock()
	defer r.memory.mu.Unlock()
	if r.memory.runs == nil {
		r.memory.runs = map[types.NamespacedName]map[types.UID]run{}
	}
	key := client.ObjectKeyFromObject(b)
	seen := r.memory.runs[key]
	kept := map[types.UID]run{}
	var out []run
	for i := range list.Items {
		job := &list.Items[i]
		finished, failed := jobFinished(job)
		if !finished {
			continue
		}
		got, ok := seen[job.UID]
		if !ok {
			var err error
			if got, err = r.readRun(ctx, job, failed); err != nil {
				return nil, err // not remembered: read again next time
			}
			if failed {
				failures.WithLabelValues(b.Namespace, b.Name).Inc()
			}
		}
		kept[job.UID] = got
		out = append(out, got)
	}
	r.memory.runs[key] = kept
	return out, nil
}

func jobFinished(job *batchv1.Job) (finished, failed bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false
		case batchv1.JobFailed:
			return true, true
		}
	}
	return false, false
}

// readRun reads the termination message of the Job's agent container: the
// JSON result of a successful run, the last log lines of a failed one.
// Pods are not cached; this is one list per finished Job.
func (r *Reconciler) readRun(ctx context.Context, job *batchv1.Job, failed bool) (run, error) {
	out := run{job: job.Name, failed: failed}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(job.Namespace),
		client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return out, err
	}
	slices.SortFunc(pods.Items, func(a, c corev1.Pod) int { return c.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	for _, pod := range pods.Items {
		for _, st := range pod.Status.ContainerStatuses {
			t := st.State.Terminated
			if st.Name != jobs.ContainerName || t == nil {
				continue
			}
			switch {
			case !failed && t.ExitCode == 0:
				var res agent.BackupResult
				if json.Unmarshal([]byte(lastLine(t.Message)), &res) == nil && res.ID != "" {
					out.result = &res
					return out, nil
				}
			case failed && t.ExitCode != 0 && out.failure == "":
				out.failure = strings.TrimSpace(t.Message)
				if out.failure == "" {
					out.failure = t.Reason
				}
			}
		}
	}
	return out, nil
}

// lastLine is the message's last non-empty line: the agent prints its one
// JSON result line last.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// mergeRecords adds the runs' results to records, drops what their retention
// pruned, and keeps the newest MaxBackupRecords, newest first. Ids sort in
// time order.
func mergeRecords(records []v1beta1.BackupRecord, runs []run, dest v1beta1.Destination) []v1beta1.BackupRecord {
	byID := map[string]v1beta1.BackupRecord{}
	for _, rec := range records {
		byID[rec.ID] = rec
	}
	for _, rn := range runs {
		if rn.result == nil {
			continue
		}
		res := rn.result
		start, end := metav1.NewTime(res.StartTime.UTC()), metav1.NewTime(res.CompletionTime.UTC())
		byID[res.ID] = v1beta1.BackupRecord{
			ID: res.ID, StartTime: &start, CompletionTime: &end,
			SizeBytes: res.SizeBytes, SHA256: res.SHA256, Location: locationURL(dest, res.Location),
		}
		for _, gone := range res.Pruned {
			delete(byID, gone)
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	if len(ids) > MaxBackupRecords {
		ids = ids[:MaxBackupRecords]
	}
	var out []v1beta1.BackupRecord
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return out
}

// locationURL makes the agent's key prefix (relative to the destination) a
// location a human can find: s3://bucket/key or pvc://claim/key.
func locationURL(dest v1beta1.Destination, key string) string {
	key = strings.TrimPrefix(key, "/")
	switch {
	case dest.S3 != nil:
		return fmt.Sprintf("s3://%s/%s", dest.S3.Bucket, key)
	case dest.PVC != nil:
		return fmt.Sprintf("pvc://%s/%s", dest.PVC.ClaimName, key)
	}
	return key
}
