// Package backup is the NginxBackup controller: it runs the backup agent in a
// Job (one-shot) or a CronJob (scheduled) and reports the runs in the status.
// The agent itself is in pkg/backup/agent, its storage in pkg/backup/storage.
//
// Scheduling is the CronJob's, not the controller's own: the kube-controller-
// manager already implements suspend, concurrency Forbid, missed-start
// deadlines and history limits, and keeps running backups while the operator
// is down or upgrading.
package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/jobs"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/pkg/version"
)

// ControllerName labels the controller's metrics and logs.
const ControllerName = "nginxbackup"

// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxbackups,verbs=list;watch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxbackups/status,verbs=patch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get
// +kubebuilder:rbac:groups="",resources=pods,verbs=list

// Reconciler reconciles NginxBackup objects.
type Reconciler struct {
	k8sutil.Deps
	// AgentImage runs the backup agent (--agent-image); NginxImage is the
	// default nginx image, recorded for instances that name none.
	AgentImage, NginxImage string
	// Now is the clock; tests may fix it.
	Now func() time.Time

	memory runMemory
}

// SetupWithManager registers the controller.
func SetupWithManager(mgr ctrl.Manager, agentImage, nginxImage string) error {
	r := &Reconciler{
		Deps:       k8sutil.NewDeps(mgr),
		AgentImage: agentImage,
		NginxImage: nginxImage,
		Now:        time.Now,
	}
	registerMetrics()
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1beta1.NginxBackup{}).
		Owns(&batchv1.Job{}).
		Owns(&batchv1.CronJob{}).
		// The runs of a scheduled backup are owned by its CronJob.
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(r.backupOfScheduledRun)).
		// The Jobs project the instance's current config Secret, named by
		// its status.configHash.
		Watches(&v1beta1.NginxOperator{}, handler.EnqueueRequestsFromMapFunc(r.backupsOfInstance)).
		Complete(metrics.Instrument(ControllerName, &k8sutil.StatusReconciler[*v1beta1.NginxBackup]{
			Client: r.Client,
			New:    func() *v1beta1.NginxBackup { return &v1beta1.NginxBackup{} },
			Forget: func(key types.NamespacedName) { forgetMetrics(key.Namespace, key.Name); r.memory.forget(key) },
			Sync:   r.sync,
		}))
}

// backupsOfInstance maps an NginxOperator to the backups of it in its
// namespace, from the cache.
func (r *Reconciler) backupsOfInstance(ctx context.Context, obj client.Object) []reconcile.Request {
	var backups v1beta1.NginxBackupList
	if err := r.Client.List(ctx, &backups, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range backups.Items {
		if b.Spec.Instance == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}})
		}
	}
	return out
}

// backupOfScheduledRun maps a Job the CronJob of a backup created to that
// backup, through the owner references (a label could not name a backup
// whose name is longer than a label value).
func (r *Reconciler) backupOfScheduledRun(ctx context.Context, obj client.Object) []reconcile.Request {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.Kind != "CronJob" {
		return nil
	}
	var cj batchv1.CronJob
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: owner.Name}, &cj); err != nil {
		return nil
	}
	backup := metav1.GetControllerOf(&cj)
	if backup == nil || backup.Kind != "NginxBackup" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: backup.Name}}}
}

// sync makes the backup's Job or CronJob exist, observes its runs and sets
// the status from what it saw (statusFor); the shared loop
// (k8sutil.StatusReconciler) writes the status and classifies the error.
func (r *Reconciler) sync(ctx context.Context, b *v1beta1.NginxBackup) (ctrl.Result, error) {
	before := b.Status.DeepCopy()
	o, err := r.observe(ctx, b)
	o.err = err
	statusFor(b, o)
	r.recordTransitions(b, before, o)
	r.updateMetrics(b)
	return ctrl.Result{}, err
}

// observe applies the backup's Job (created once: its pod template is
// immutable) or CronJob and gathers what the status is computed from.
func (r *Reconciler) observe(ctx context.Context, b *v1beta1.NginxBackup) (observation, error) {
	o := observation{now: r.Now()}
	// The Job or CronJob is built from the backup and its instance as
	// admission defaults them: the CRDs are the one source of defaults.
	b, errs := validation.NginxBackup(ctx, b)
	if len(errs) > 0 {
		return o, k8sutil.MissingReference(ReasonInvalidSpec, "%v", errs.ToAggregate())
	}
	instance, err := r.checkReferences(ctx, b)
	if err != nil {
		return o, err
	}
	if b.Spec.Schedule != "" {
		if o.schedule, err = cron.ParseStandard(b.Spec.Schedule); err != nil {
			return o, k8sutil.MissingReference(ReasonInvalidSchedule, "spec.schedule %q: %v", b.Spec.Schedule, err)
		}
	}
	desired, err := r.build(ctx, b, instance)
	if err != nil {
		return o, err
	}
	switch want := desired.(type) {
	case *batchv1.Job:
		var live batchv1.Job
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &live)
		switch {
		case apierrors.IsNotFound(err):
			if _, err := r.Applier.ApplyOwned(ctx, r.Recorder, b, want); err != nil {
				return o, err
			}
			live = *want
		case err != nil:
			return o, err
		}
		o.job = &live
	case *batchv1.CronJob:
		if _, err := r.Applier.ApplyOwned(ctx, r.Recorder, b, want); err != nil {
			return o, err
		}
		var live batchv1.CronJob
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &live); err != nil {
			if !apierrors.IsNotFound(err) {
				return o, err
			}
			live = *want // just created; the cache has not seen it yet
		}
		o.cronJob = &live
	default:
		return o, fmt.Errorf("backup builder returned %T, want a Job or a CronJob", desired)
	}
	o.runs, err = r.finishedRuns(ctx, b)
	return o, err
}

// recordTransitions sends the Events of what changed between before and the
// new status: a refused spec, a one-shot backup finishing, each run stored.
func (r *Reconciler) recordTransitions(b *v1beta1.NginxBackup, before *v1beta1.NginxBackupStatus, o observation) {
	var refErr *k8sutil.ReferenceError
	if errors.As(o.err, &refErr) && !k8sutil.HadReason(before.Conditions, v1beta1.ConditionAccepted, refErr.Reason()) {
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, refErr.Reason(), "Validate", "%s", refErr.Error())
	}
	if o.job != nil && b.Status.Phase != before.Phase {
		switch b.Status.Phase {
		case v1beta1.BackupSucceeded:
			r.Recorder.Eventf(b, o.job, corev1.EventTypeNormal, ReasonBackupSucceeded, "Backup", "Job %s completed", o.job.Name)
		case v1beta1.BackupFailed:
			r.Recorder.Eventf(b, o.job, corev1.EventTypeWarning, ReasonBackupFailed, "Backup", "Job %s failed", o.job.Name)
		}
	}
	known := map[string]bool{}
	for _, rec := range before.Backups {
		known[rec.ID] = true
	}
	for _, rn := range o.runs {
		if res := rn.result; res != nil && !known[res.ID] {
			r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, ReasonBackupStored, "Backup", "Backup %s stored at %s (%d bytes)", res.ID, locationURL(b.Spec.Destination, res.Location), res.SizeBytes)
			if res.PruneError != "" {
				r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, ReasonPruneFailed, "Prune", "Retention after backup %s failed (the backup itself succeeded): %s", res.ID, res.PruneError)
			}
		}
	}
}

// truncate keeps a condition message readable and within the API's limit.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// build makes the backup's Job (one-shot) or CronJob (scheduled). The
// backup's own labels are copied onto the pods, so users can select them.
func (r *Reconciler) build(ctx context.Context, b *v1beta1.NginxBackup, instance *v1beta1.NginxOperator) (client.Object, error) {
	spec, err := json.Marshal(instance.Spec)
	if err != nil {
		return nil, err
	}
	image := instance.Spec.Image
	if image == "" {
		image = r.NginxImage
	}
	in := jobs.Facts{Instance: instance, AgentImage: r.AgentImage, InstanceImage: image, InstanceSpec: spec, OperatorVersion: version.Version}
	if jobs.IncludesConfig(b) {
		if in.ConfigMapKeys, err = r.configMapKeys(ctx, instance); err != nil {
			return nil, err
		}
	}
	if b.Spec.Schedule == "" {
		job := jobs.Job(b, in)
		addLabels(&job.Spec.Template, b.Labels)
		return job, nil
	}
	cj := jobs.CronJob(b, in)
	addLabels(&cj.Spec.JobTemplate.Spec.Template, b.Labels)
	return cj, nil
}

// configMapKeys reads the keys of the instance's content ConfigMaps, which
// the backup's pod projects one by one. They are users' objects, read by
// reference rather than cached; a missing one is left out (the instance
// itself reports it as Degraded).
func (r *Reconciler) configMapKeys(ctx context.Context, instance *v1beta1.NginxOperator) (map[string][]string, error) {
	keys := map[string][]string{}
	for _, ref := range instance.Spec.Content.ConfigMaps {
		var cm corev1.ConfigMap
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: instance.Namespace, Name: ref.Name}, &cm); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		for k := range cm.Data {
			keys[ref.Name] = append(keys[ref.Name], k)
		}
		for k := range cm.BinaryData {
			keys[ref.Name] = append(keys[ref.Name], k)
		}
	}
	return keys, nil
}

// addLabels adds labels to a pod template without overriding the builder's.
func addLabels(t *corev1.PodTemplateSpec, labels map[string]string) {
	if len(labels) == 0 {
		return
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for k, v := range labels {
		if _, taken := t.Labels[k]; !taken {
			t.Labels[k] = v
		}
	}
}

// checkReferences returns the instance once it, the credentials Secret and
// the destination claim all exist.
func (r *Reconciler) checkReferences(ctx context.Context, b *v1beta1.NginxBackup) (*v1beta1.NginxOperator, error) {
	var instance v1beta1.NginxOperator
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.Instance}, &instance); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, k8sutil.MissingReference(ReasonInstanceNotFound, "NginxOperator %q not found in namespace %s", b.Spec.Instance, b.Namespace)
		}
		return nil, err
	}
	defaulted, err := validation.Defaulted("NginxOperator", &instance)
	if err != nil {
		return nil, err
	}
	instance = *defaulted
	if jobs.IncludesConfig(b) && instance.Status.ConfigHash == "" {
		// The configuration Secret is named by the hash the instance's
		// status reports once the operator has rendered it.
		return nil, k8sutil.MissingReference(ReasonInstanceNotReady, "NginxOperator %q has no rendered configuration yet (status.configHash is empty)", b.Spec.Instance)
	}
	check := func(obj client.Object, name, reason, what string) error {
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return k8sutil.MissingReference(reason, "%s %q not found in namespace %s", what, name, b.Namespace)
			}
			return err
		}
		return nil
	}
	if s3 := b.Spec.Destination.S3; s3 != nil {
		if err := check(&corev1.Secret{}, s3.CredentialsSecret, ReasonCredentialsSecretNotFound, "credentials Secret"); err != nil {
			return nil, err
		}
	}
	if pvc := b.Spec.Destination.PVC; pvc != nil {
		if err := check(&corev1.PersistentVolumeClaim{}, pvc.ClaimName, ReasonClaimNotFound, "PersistentVolumeClaim"); err != nil {
			return nil, err
		}
	}
	if jobs.IncludesContent(b, &instance) && !jobs.SharesContent(&instance) {
		return nil, k8sutil.MissingReference(ReasonContentNotShareable, "the content volumes of NginxOperator %q are ReadWriteOncePod: "+
			"no backup pod can mount them while nginx runs; set spec.include.content to false, or give the instance ReadWriteOnce or ReadWriteMany content", instance.Name)
	}
	return &instance, nil
}

func (r *Reconciler) updateMetrics(b *v1beta1.NginxBackup) {
	labels := []string{b.Namespace, b.Name}
	if t := b.Status.LastSuccessfulTime; t != nil {
		lastSuccess.WithLabelValues(labels...).Set(float64(t.Unix()))
	}
	failed := 0.0
	if c := meta.FindStatusCondition(b.Status.Conditions, v1beta1.ConditionReady); c != nil && c.Reason == ReasonBackupFailed {
		failed = 1
	}
	lastFailed.WithLabelValues(labels...).Set(failed)
	if len(b.Status.Backups) > 0 {
		newest := b.Status.Backups[0]
		lastSize.WithLabelValues(labels...).Set(float64(newest.SizeBytes))
		if newest.StartTime != nil && newest.CompletionTime != nil {
			lastDuration.WithLabelValues(labels...).Set(newest.CompletionTime.Sub(newest.StartTime.Time).Seconds())
		}
	}
	scheduleInterval.DeleteLabelValues(labels...)
	// A suspended backup has no schedule to fall behind.
	if schedule, err := cron.ParseStandard(b.Spec.Schedule); err == nil && b.Spec.Schedule != "" && !b.Spec.Suspend {
		next := schedule.Next(r.Now())
		scheduleInterval.WithLabelValues(labels...).Set(schedule.Next(next).Sub(next).Seconds())
	}
}
