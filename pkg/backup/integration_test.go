//go:build !unit

package backup_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

func TestOneShotBackupWaitsForItsReferencesThenCreatesItsJob(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	b := &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{
			Instance:    "web",
			Destination: v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}},
		},
	}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitReason := func(reason string) {
		t.Helper()
		if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
			cond := framework.BackupCondition(ctx, c, ns, "once", v1beta1.ConditionAccepted)
			return cond != nil && cond.Reason == reason
		}) {
			t.Fatalf("Accepted reason = %+v, want %s", framework.BackupCondition(ctx, c, ns, "once", v1beta1.ConditionAccepted), reason)
		}
	}
	waitReason(backup.ReasonInstanceNotFound)

	web := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}},
	}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	waitReason(backup.ReasonClaimNotFound)

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
	waitReason(backup.ReasonReferencesResolved)

	var jobs batchv1.JobList
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return c.List(ctx, &jobs, client.InNamespace(ns)) == nil && len(jobs.Items) == 1
	}) {
		t.Fatalf("jobs = %d, want 1", len(jobs.Items))
	}
	if owner := metav1.GetControllerOf(&jobs.Items[0]); owner == nil || owner.Name != "once" {
		t.Errorf("the Job's controller is %+v, want the NginxBackup", owner)
	}
	var got v1beta1.NginxBackup
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1beta1.BackupPending {
		t.Errorf("phase = %q, want Pending (no kube-controller-manager runs the Job here)", got.Status.Phase)
	}
}

func TestScheduledBackupCreatesASuspendableCronJob(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	web := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}},
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: ns},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, creds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{
			Instance: "web", Schedule: "0 3 * * *", Suspend: true,
			Retention:   v1beta1.Retention{KeepLast: 7},
			Destination: v1beta1.Destination{S3: &v1beta1.S3Destination{Endpoint: "s3.example.com", Bucket: "backups", CredentialsSecret: "s3"}},
		},
	}
	for _, obj := range []client.Object{web, b} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	cronJob := func(ctx context.Context) *batchv1.CronJob {
		var list batchv1.CronJobList
		if c.List(ctx, &list, client.InNamespace(ns)) != nil || len(list.Items) != 1 {
			return nil
		}
		return &list.Items[0]
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cj := cronJob(ctx)
		cond := framework.BackupCondition(ctx, c, ns, "nightly", v1beta1.ConditionReady)
		return cj != nil && ptr.Deref(cj.Spec.Suspend, false) && cond != nil && cond.Reason == backup.ReasonSuspended
	}) {
		t.Fatalf("no suspended CronJob with Ready reason Suspended: %+v", framework.BackupCondition(ctx, c, ns, "nightly", v1beta1.ConditionReady))
	}
	cj := cronJob(ctx)
	if cj.Spec.Schedule != "0 3 * * *" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("CronJob schedule %q concurrency %q; want the spec's schedule and Forbid", cj.Spec.Schedule, cj.Spec.ConcurrencyPolicy)
	}

	framework.Update(ctx, t, c, b, func(b *v1beta1.NginxBackup) { b.Spec.Suspend = false })
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var got v1beta1.NginxBackup
		cj := cronJob(ctx)
		return c.Get(ctx, client.ObjectKeyFromObject(b), &got) == nil && got.Status.NextScheduleTime != nil &&
			got.Status.NextScheduleTime.UTC().Hour() == 3 && cj != nil && !ptr.Deref(cj.Spec.Suspend, true)
	}) {
		t.Fatal("resuming did not unsuspend the CronJob and report the next 03:00 run")
	}
}

// A ReadWriteOncePod content volume cannot be mounted by a backup pod while
// nginx runs: the backup says so instead of leaving a run Pending forever.
func TestContentOnReadWriteOncePodVolumesIsRefusedWithAReason(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	web := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Content: v1beta1.Content{VolumeClaimTemplate: &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi"),
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}}}},
	}
	b := &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
		Spec:       v1beta1.NginxBackupSpec{Instance: "web", Destination: v1beta1.Destination{S3: &v1beta1.S3Destination{Endpoint: "s3:9000", Bucket: "backups", CredentialsSecret: "s3"}}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: ns}}
	for _, obj := range []client.Object{web, secret, b} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		cond := framework.BackupCondition(ctx, c, ns, "once", v1beta1.ConditionAccepted)
		return cond != nil && cond.Reason == backup.ReasonContentNotShareable
	}) {
		t.Fatalf("Accepted = %+v, want reason %s", framework.BackupCondition(ctx, c, ns, "once", v1beta1.ConditionAccepted), backup.ReasonContentNotShareable)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(ns)); err != nil || len(jobs.Items) != 0 {
		t.Errorf("jobs %d (err %v): a run that could never start was created", len(jobs.Items), err)
	}
}

// Once backups are set up, a new operator process that resyncs them (and
// their instance, with content ConfigMaps read by reference) writes nothing.
func TestSteadyStateResyncOfBackupsMakesNoWrites(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env)
	cluster := env.Cluster(t)

	site := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: ns}, Data: map[string]string{"index.html": "hi", "404.html": "no"}}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	web := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Content: v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: "site"}}}},
	}
	dest := v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}
	nightly := &v1beta1.NginxBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{Instance: "web", Schedule: "0 3 * * *", Destination: dest}}
	once := &v1beta1.NginxBackup{ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{Instance: "web", Destination: dest}}
	for _, obj := range []client.Object{site, pvc, web, nightly, once} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	settled := func(ctx context.Context) bool {
		n := framework.BackupCondition(ctx, c, ns, "nightly", v1beta1.ConditionReady)
		o := framework.BackupCondition(ctx, c, ns, "once", v1beta1.ConditionReady)
		return n != nil && n.Reason == backup.ReasonScheduled && o != nil && o.Reason == backup.ReasonJobPending
	}
	first := &inprocess.RequestCounter{}
	stop := inprocess.Start(t, cluster.Config, inprocess.Options(ns), first)
	if !framework.WaitFor(ctx, 60*time.Second, settled) {
		t.Fatalf("backups did not settle: nightly %+v, once %+v",
			framework.BackupCondition(ctx, c, ns, "nightly", v1beta1.ConditionReady), framework.BackupCondition(ctx, c, ns, "once", v1beta1.ConditionReady))
	}
	var cj batchv1.CronJobList
	if err := c.List(ctx, &cj, client.InNamespace(ns)); err != nil || len(cj.Items) != 1 {
		t.Fatalf("CronJobs %d (err %v), want 1", len(cj.Items), err)
	}
	if !slices.ContainsFunc(cj.Items[0].Spec.JobTemplate.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		for _, src := range projectedSources(v) {
			if src.ConfigMap != nil && src.ConfigMap.Name == "site" && len(src.ConfigMap.Items) == 2 {
				return true
			}
		}
		return false
	}) {
		t.Error("the backup pod does not project both keys of the content ConfigMap")
	}
	first.WaitWritesSettled(t, 2*time.Second, time.Minute)
	stop()

	counter := &inprocess.RequestCounter{}
	before := inprocess.Reconciles(t, backup.ControllerName)
	inprocess.Start(t, cluster.Config, inprocess.Options(ns), counter)
	// The new process lists and reconciles both backups.
	tools.Eventually(t, time.Minute, "the new operator reconciles both backups", func() error {
		if n := inprocess.Reconciles(t, backup.ControllerName) - before; n < 2 {
			return fmt.Errorf("%v reconciles", n)
		}
		return nil
	})
	if !settled(ctx) {
		t.Fatal("the backups lost their state on resync")
	}
	if writes := counter.Writes(); len(writes) != 0 {
		t.Errorf("steady-state resync made %d writes, want 0:\n%s", len(writes), strings.Join(writes, "\n"))
	}
}

func projectedSources(v corev1.Volume) []corev1.VolumeProjection {
	if v.Projected == nil {
		return nil
	}
	return v.Projected.Sources
}
