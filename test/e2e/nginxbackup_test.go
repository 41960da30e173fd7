package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// kwokFailLabel makes the local cluster's fake kubelet fail a Job's pod; the
// backup's labels are copied onto its Job's pods.
const kwokFailLabel = "nginx-operator.dev/kwok-fail"

func TestOneShotBackupsSucceedOrFailWithTheirJobs(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)

	if err := c.Create(ctx, newInstance(ns, "web", 1)); err != nil {
		t.Fatal(err)
	}
	createBackupClaim(ctx, t, cs, ns)
	for name, labels := range map[string]map[string]string{"good": nil, "bad": {kwokFailLabel: "true"}} {
		b := &v1beta1.NginxBackup{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: v1beta1.NginxBackupSpec{Instance: "web",
				Destination: v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}},
		}
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	phase := func(name string, want v1beta1.BackupPhase, reason string) func(context.Context) bool {
		return func(ctx context.Context) bool {
			var b v1beta1.NginxBackup
			if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &b) != nil {
				return false
			}
			cond := meta.FindStatusCondition(b.Status.Conditions, v1beta1.ConditionReady)
			return b.Status.Phase == want && cond != nil && cond.Reason == reason
		}
	}
	if !framework.WaitFor(ctx, 90*time.Second, phase("good", v1beta1.BackupSucceeded, backup.ReasonBackupSucceeded)) {
		t.Error("the backup whose Job completed is not Succeeded")
	}
	if !framework.WaitFor(ctx, 90*time.Second, phase("bad", v1beta1.BackupFailed, backup.ReasonBackupFailed)) {
		t.Error("the backup whose Job failed is not Failed")
	}
	// The fake kubelet ends the agent container the way the agent does: the
	// result JSON (success) or the error (failure) as termination message.
	var good, bad v1beta1.NginxBackup
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "good"}, &good); err == nil {
		wantLocation := "pvc://backups/" + ns + "/web/20260101T000000.000000000Z-0000c0de/"
		if len(good.Status.Backups) != 1 || good.Status.Backups[0].Location != wantLocation || good.Status.Backups[0].SizeBytes != 4096 {
			t.Errorf("status.backups = %+v, want one record at %s of 4096 bytes", good.Status.Backups, wantLocation)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bad"}, &bad); err == nil {
		cond := meta.FindStatusCondition(bad.Status.Conditions, v1beta1.ConditionReady)
		if cond == nil || !strings.Contains(cond.Message, "injected failure") {
			t.Errorf("Failed condition %+v does not carry the agent's error", cond)
		}
	}
}

// createBackupClaim makes the claim "backups" that the backups of a test
// write to; the local cluster's default StorageClass provisions it.
func createBackupClaim(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A scheduled backup's CronJob honours suspend: no run starts while it is
// suspended, even past a scheduled minute; resumed, the next minute's run
// completes and the backup reports it (last success, next run, the record).
func TestScheduledBackupHonoursSuspendThenRunsOnSchedule(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	if err := c.Create(ctx, newInstance(ns, "web", 1)); err != nil {
		t.Fatal(err)
	}
	createBackupClaim(ctx, t, cs, ns)
	b := &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "minutely", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{Instance: "web", Schedule: "* * * * *", Suspend: true,
			Destination: v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}},
	}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	readyReason := func(reason string) func(context.Context) bool {
		return func(ctx context.Context) bool {
			cond := framework.BackupCondition(ctx, c, ns, b.Name, v1beta1.ConditionReady)
			return cond != nil && cond.Reason == reason
		}
	}
	if !framework.WaitFor(ctx, 30*time.Second, readyReason(backup.ReasonSuspended)) {
		t.Fatalf("Ready = %+v, want reason Suspended", framework.BackupCondition(ctx, c, ns, b.Name, v1beta1.ConditionReady))
	}
	// A window in which nothing may happen: past the next scheduled minute,
	// with margin for the CronJob controller, a suspended backup runs no Job.
	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	time.Sleep(time.Until(next) + 15*time.Second)
	jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Fatalf("a suspended backup ran: %d Jobs", len(jobs.Items))
	}

	framework.Update(ctx, t, c, b, func(*v1beta1.NginxBackup) {
		b.Spec.Suspend = false
	})
	if !framework.WaitFor(ctx, 100*time.Second, func(ctx context.Context) bool {
		var got v1beta1.NginxBackup
		return c.Get(ctx, client.ObjectKeyFromObject(b), &got) == nil && got.Status.LastSuccessfulTime != nil && len(got.Status.Backups) == 1
	}) {
		var got v1beta1.NginxBackup
		_ = c.Get(ctx, client.ObjectKeyFromObject(b), &got)
		t.Fatalf("the resumed backup did not run on schedule: status %+v", got.Status)
	}
	var got v1beta1.NginxBackup
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.NextScheduleTime == nil || !got.Status.NextScheduleTime.After(got.Status.LastSuccessfulTime.Time) {
		t.Errorf("nextScheduleTime %v is not after the last success %v", got.Status.NextScheduleTime, got.Status.LastSuccessfulTime)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionReady); cond == nil || cond.Reason != backup.ReasonScheduled {
		t.Errorf("Ready = %+v, want reason Scheduled", cond)
	}
}

// spec.restore puts the restore init container on the StatefulSet; the
// replicas (kwok's) pass it and become ready, and the instance reports the
// restore as done.
func TestRestoreInitContainerSeedsTheReplicasOnTheLocalCluster(t *testing.T) {
	t.Parallel()
	ctx, ns, cs := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	createBackupClaim(ctx, t, cs, ns)
	const id = "20261122T030000.000000000Z-1a2b3c4d"
	nightly := &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{Instance: "docs", Schedule: "0 3 * * *",
			Destination: v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}},
	}
	docs := newInstance(ns, "docs", 2)
	docs.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi")}
	docs.Spec.Restore = &v1beta1.RestoreSpec{Backup: "nightly", ID: id}
	for _, obj := range []client.Object{nightly, docs} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		var n v1beta1.NginxOperator
		return c.Get(ctx, client.ObjectKeyFromObject(docs), &n) == nil &&
			meta.IsStatusConditionTrue(n.Status.Conditions, v1beta1.ConditionRestored) &&
			meta.IsStatusConditionTrue(n.Status.Conditions, v1beta1.ConditionAvailable)
	}) {
		var n v1beta1.NginxOperator
		_ = c.Get(ctx, client.ObjectKeyFromObject(docs), &n)
		t.Fatalf("the restoring instance is not Restored and Available: %+v", n.Status.Conditions)
	}
	sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, layout.NamesFor("docs").StatefulSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The restore runs before nginx, after the reloader's installer.
	restore := func(inits []corev1.Container) *corev1.Container {
		i := slices.IndexFunc(inits, func(c corev1.Container) bool { return c.Name == layout.RestoreContainerName })
		if i < 0 {
			return nil
		}
		return &inits[i]
	}
	if r := restore(sts.Spec.Template.Spec.InitContainers); r == nil || !slices.Contains(r.Args, "--id="+id) {
		t.Errorf("StatefulSet init containers = %+v, want the restore of %s", sts.Spec.Template.Spec.InitContainers, id)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=docs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if restore(p.Spec.InitContainers) == nil {
			t.Errorf("pod %s runs without the restore init container", p.Name)
		}
	}
}
