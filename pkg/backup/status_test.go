package backup

import (
	"errors"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/agent"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// statusFor is the one place a backup's status is computed: each case is
// what a reconcile observed, and the conditions and phase it must produce.
func TestStatusForComputesTheWholeStatusFromWhatWasObserved(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	daily, err := cron.ParseStandard("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	job := func(cond batchv1.JobConditionType, active int32) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup"}, Status: batchv1.JobStatus{Active: active}}
		if cond != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
		}
		return j
	}
	ok := run{job: "nightly-backup-1", result: &agent.BackupResult{ID: "20261123T030000.000000000Z-1a2b3c4d"}}
	failed := run{job: "nightly-backup-2", failed: true, failure: "dial tcp: connection refused"}
	for _, tc := range []struct {
		name                      string
		schedule                  string
		suspend                   bool
		o                         observation
		accepted, ready           metav1.ConditionStatus
		acceptReason, readyReason string
		phase                     v1beta1.BackupPhase
		readyMessage              string
	}{
		{name: "a missing reference: not accepted, the reason says what",
			o: observation{err: k8sutil.MissingReference(ReasonInstanceNotFound, "NginxOperator \"web\" not found")}, accepted: metav1.ConditionFalse, acceptReason: ReasonInstanceNotFound},
		{name: "a running Job", o: observation{job: job("", 1)},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionFalse, readyReason: ReasonJobRunning, phase: v1beta1.BackupRunning},
		{name: "a Job not started", o: observation{job: job("", 0)},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionFalse, readyReason: ReasonJobPending, phase: v1beta1.BackupPending},
		{name: "a completed Job", o: observation{job: job(batchv1.JobComplete, 0), runs: []run{ok}},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionTrue, readyReason: ReasonBackupSucceeded, phase: v1beta1.BackupSucceeded},
		{name: "a failed Job: the Job's reason and the agent's last words", o: observation{job: job(batchv1.JobFailed, 0), runs: []run{failed}},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionFalse, readyReason: ReasonBackupFailed, phase: v1beta1.BackupFailed,
			readyMessage: "Job nightly-backup failed: BackoffLimitExceeded: Job has reached the specified backoff limit; agent: dial tcp: connection refused"},
		{name: "a schedule", schedule: "0 3 * * *", o: observation{cronJob: &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup"}}, schedule: daily, now: now},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionTrue, readyReason: ReasonScheduled},
		{name: "a suspended schedule", schedule: "0 3 * * *", suspend: true, o: observation{cronJob: &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup"}}, schedule: daily, now: now},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionTrue, readyReason: ReasonSuspended},
		{name: "a schedule whose latest run failed, after one that succeeded", schedule: "0 3 * * *",
			o:        observation{cronJob: &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup"}}, schedule: daily, now: now, runs: []run{ok, failed}},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionFalse, readyReason: ReasonBackupFailed,
			readyMessage: "Job nightly-backup-2 failed; agent: dial tcp: connection refused"},
		{name: "a schedule whose latest run succeeded after a failure", schedule: "0 3 * * *",
			o:        observation{cronJob: &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup"}}, schedule: daily, now: now, runs: []run{failed, ok}},
			accepted: metav1.ConditionTrue, acceptReason: ReasonReferencesResolved, ready: metav1.ConditionTrue, readyReason: ReasonScheduled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &v1beta1.NginxBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Generation: 4}}
			b.Spec.Schedule, b.Spec.Suspend = tc.schedule, tc.suspend
			statusFor(b, tc.o)
			if b.Status.ObservedGeneration != 4 {
				t.Errorf("observedGeneration %d, want 4", b.Status.ObservedGeneration)
			}
			check := func(typ string, status metav1.ConditionStatus, reason, msg string) {
				t.Helper()
				c := meta.FindStatusCondition(b.Status.Conditions, typ)
				if status == "" {
					if c != nil {
						t.Errorf("%s = %+v, want unset", typ, c)
					}
					return
				}
				if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != 4 || (msg != "" && c.Message != msg) {
					t.Errorf("%s = %+v, want %s/%s %q", typ, c, status, reason, msg)
				}
			}
			check(v1beta1.ConditionAccepted, tc.accepted, tc.acceptReason, "")
			check(v1beta1.ConditionReady, tc.ready, tc.readyReason, tc.readyMessage)
			if b.Status.Phase != tc.phase {
				t.Errorf("phase %q, want %q", b.Status.Phase, tc.phase)
			}
		})
	}
}

// A transient error (the API, not the spec) leaves the status as it was.
func TestStatusForKeepsTheStatusOnATransientError(t *testing.T) {
	b := &v1beta1.NginxBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Generation: 2}}
	b.Status.Phase = v1beta1.BackupRunning
	setCondition(b, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonJobRunning, "Job x is running")
	before := b.Status.DeepCopy()
	statusFor(b, observation{err: errors.New("etcdserver: request timed out")})
	if b.Status.Phase != before.Phase || len(b.Status.Conditions) != 1 {
		t.Errorf("status changed on a transient error: %+v", b.Status)
	}
}
