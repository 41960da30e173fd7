package backup

import (
	"errors"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/robfig/cron/v3"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// Condition reasons of NginxBackup.
const (
	ReasonReferencesResolved        = "ReferencesResolved"
	ReasonInstanceNotFound          = "InstanceNotFound"
	ReasonInstanceNotReady          = "InstanceNotReady"
	ReasonCredentialsSecretNotFound = "CredentialsSecretNotFound"
	ReasonClaimNotFound             = "PersistentVolumeClaimNotFound"
	ReasonInvalidSchedule           = "InvalidSchedule"
	ReasonInvalidSpec               = "InvalidSpec"
	ReasonContentNotShareable       = "ContentNotShareable"
	ReasonApplyFailed               = k8sutil.ReasonApplyFailed
	ReasonJobPending                = "JobPending"
	ReasonJobRunning                = "JobRunning"
	ReasonBackupSucceeded           = "BackupSucceeded"
	ReasonBackupFailed              = "BackupFailed"
	ReasonScheduled                 = "Scheduled"
	ReasonSuspended                 = "Suspended"
	// Event reasons of finished runs.
	ReasonBackupStored = "BackupStored"
	ReasonPruneFailed  = "PruneFailed"
)

func setCondition(b *v1beta1.NginxBackup, typ string, status metav1.ConditionStatus, reason, msg string) {
	k8sutil.SetCondition(&b.Status.Conditions, b.Generation, typ, status, reason, msg)
}

// observeJob fills a one-shot backup's status from its Job.
func observeJob(b *v1beta1.NginxBackup, job *batchv1.Job) {
	if job.Status.StartTime != nil {
		b.Status.LastScheduleTime = job.Status.StartTime
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			b.Status.Phase = v1beta1.BackupSucceeded
			b.Status.LastSuccessfulTime = job.Status.CompletionTime
			setCondition(b, v1beta1.ConditionReady, metav1.ConditionTrue, ReasonBackupSucceeded, "Job "+job.Name+" completed")
			return
		case batchv1.JobFailed:
			b.Status.Phase = v1beta1.BackupFailed
			msg := "Job " + job.Name + " failed"
			if c.Message != "" {
				msg += ": " + c.Reason + ": " + c.Message
			}
			setCondition(b, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonBackupFailed, msg)
			return
		}
	}
	if job.Status.Active > 0 {
		b.Status.Phase = v1beta1.BackupRunning
		setCondition(b, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonJobRunning, "Job "+job.Name+" is running")
		return
	}
	b.Status.Phase = v1beta1.BackupPending
	setCondition(b, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonJobPending, "Job "+job.Name+" has not started")
}

// observeCronJob fills a scheduled backup's status from its CronJob; now is
// when the next run is computed from.
func observeCronJob(b *v1beta1.NginxBackup, cj *batchv1.CronJob, schedule cron.Schedule, now time.Time) {
	b.Status.Phase = ""
	b.Status.LastScheduleTime = cj.Status.LastScheduleTime
	b.Status.LastSuccessfulTime = cj.Status.LastSuccessfulTime
	if b.Spec.Suspend {
		b.Status.NextScheduleTime = nil
		setCondition(b, v1beta1.ConditionReady, metav1.ConditionTrue, ReasonSuspended, "spec.suspend is true: no new runs are started")
		return
	}
	next := metav1.NewTime(schedule.Next(now).UTC().Truncate(time.Second))
	b.Status.NextScheduleTime = &next
	setCondition(b, v1beta1.ConditionReady, metav1.ConditionTrue, ReasonScheduled, "CronJob "+cj.Name+" runs on schedule "+b.Spec.Schedule)
}

// observation is what one reconcile saw of a backup's world: the refusal of
// its spec, or its Job (one-shot) or CronJob (scheduled) and finished runs.
type observation struct {
	err      error
	job      *batchv1.Job
	cronJob  *batchv1.CronJob
	schedule cron.Schedule
	now      time.Time
	// runs are the finished runs, oldest first.
	runs []run
}

// statusFor sets b's status from o, in one place: Accepted from o.err, then
// phase, times and Ready from the Job or CronJob, where the latest finished
// run failing makes Ready False with the agent's last words.
func statusFor(b *v1beta1.NginxBackup, o observation) {
	b.Status.ObservedGeneration = b.Generation
	var refErr *k8sutil.ReferenceError
	switch {
	case errors.As(o.err, &refErr):
		setCondition(b, v1beta1.ConditionAccepted, metav1.ConditionFalse, refErr.Reason(), refErr.Error())
		return
	case o.err != nil:
		return // transient: the status stays as it was until the next attempt
	}
	setCondition(b, v1beta1.ConditionAccepted, metav1.ConditionTrue, ReasonReferencesResolved, "")
	switch {
	case o.job != nil:
		observeJob(b, o.job)
	case o.cronJob != nil:
		observeCronJob(b, o.cronJob, o.schedule, o.now)
	}
	b.Status.Backups = mergeRecords(b.Status.Backups, o.runs, b.Spec.Destination)
	if len(o.runs) == 0 || !o.runs[len(o.runs)-1].failed {
		return
	}
	last := o.runs[len(o.runs)-1]
	msg := "Job " + last.job + " failed"
	if c := meta.FindStatusCondition(b.Status.Conditions, v1beta1.ConditionReady); o.job != nil && c != nil {
		msg = c.Message // observeJob's, with the Job's own reason
	}
	if last.failure != "" {
		msg += "; agent: " + last.failure
	}
	setCondition(b, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonBackupFailed, truncate(msg, 1024))
}
