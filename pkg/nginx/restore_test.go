//go:build !unit

package nginx_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/jobs"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

const restoreID = "20261122T030000.000000000Z-1a2b3c4d"

func persistentInstance(ns, name string) *v1beta1.NginxOperator {
	n := instance(ns, name)
	n.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi")}
	return n
}

func nightly(ns string) *v1beta1.NginxBackup {
	return &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{Instance: "web", Schedule: "0 3 * * *",
			Destination: v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}},
	}
}

// The restore init container runs before nginx, mounts the content volume
// read-write, and keeps the pod within the restricted Pod Security Standard;
// without persistent content there is nothing to restore into.
func TestRestoreInitContainerSeedsPersistentContentBeforeNginx(t *testing.T) {
	container, volumes := jobs.RestoreInitContainer(nightly("team-a"), restoreID, layout.ContentMount(), jobs.Facts{AgentImage: "ghcr.io/nginx-operator/nginx-operator:test"})
	in := nginx.Materials{Image: "nginx:1.27", ConfigHash: "h", Restore: &nginx.RestoreInit{Container: container, Volumes: volumes}}

	pod := nginx.StatefulSet(persistentInstance("team-a", "web"), in).Spec.Template.Spec
	// After the reloader's installer: the restore may take long, the copy not.
	if len(pod.InitContainers) != 2 || pod.InitContainers[1].Name != layout.RestoreContainerName {
		t.Fatalf("init containers = %+v, want the reloader's installer, then the restore container", pod.InitContainers)
	}
	init := pod.InitContainers[1]
	if !slices.Contains(init.Args, "--id="+restoreID) || !slices.Contains(init.Args, "--once") {
		t.Errorf("restore args %v lack --id=%s and --once", init.Args, restoreID)
	}
	var content *corev1.VolumeMount
	for i := range init.VolumeMounts {
		if init.VolumeMounts[i].Name == layout.ContentMount().Name {
			content = &init.VolumeMounts[i]
		}
	}
	if content == nil || content.ReadOnly || content.MountPath != layout.ContentMount().MountPath {
		t.Errorf("restore mounts %+v: want the content volume read-write at %s", init.VolumeMounts, layout.ContentMount().MountPath)
	}
	for _, v := range volumes {
		if !slices.ContainsFunc(pod.Volumes, func(p corev1.Volume) bool { return p.Name == v.Name }) {
			t.Errorf("volume %s of the restore container is missing from the pod", v.Name)
		}
	}
	for _, v := range framework.RestrictedViolations(pod) {
		t.Error(v)
	}

	ephemeral := nginx.StatefulSet(instance("team-a", "web"), in).Spec.Template.Spec
	if slices.ContainsFunc(ephemeral.InitContainers, func(c corev1.Container) bool { return c.Name == layout.RestoreContainerName }) {
		t.Errorf("an instance without persistent content got a restore container: %+v", ephemeral.InitContainers)
	}
}

func TestRestoreRequiresPersistentContentAtAdmission(t *testing.T) {
	t.Parallel()
	ctx, ns, _, _ := inprocess.Setup(t, env)
	n := instance(ns, "web")
	n.Spec.Restore = &v1beta1.RestoreSpec{Backup: "nightly", ID: restoreID}
	err := inprocess.Client(t, env.Cluster(t).Config).Create(ctx, n)
	if err == nil || !strings.Contains(err.Error(), "restore needs content.volumeClaimTemplate") {
		t.Errorf("create without persistent content: %v, want the CEL message", err)
	}
	n = persistentInstance(ns, "web")
	n.Spec.Restore = &v1beta1.RestoreSpec{Backup: "nightly", ID: "latest"}
	if err := inprocess.Client(t, env.Cluster(t).Config).Create(ctx, n); err == nil || !strings.Contains(err.Error(), "spec.restore.id") {
		t.Errorf("create with a malformed id: %v, want a refusal naming spec.restore.id", err)
	}
}

// spec.restore waits for its NginxBackup (Degraded names it), then puts the
// restore init container on the StatefulSet; the Restored condition reports
// a failing init container with the agent's message, and success once every
// replica runs the restoring template and is ready.
func TestRestoreIsReportedFromMissingBackupToFailureToSuccess(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	web := persistentInstance(ns, "web")
	web.Spec.Replicas = ptr.To[int32](1)
	web.Spec.Restore = &v1beta1.RestoreSpec{Backup: "nightly", ID: restoreID}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	waitCondition := func(typ, reason, text string) {
		t.Helper()
		if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
			cond := framework.InstanceCondition(ctx, c, ns, "web", typ)
			return cond != nil && cond.Reason == reason && strings.Contains(cond.Message, text)
		}) {
			t.Fatalf("%s = %+v, want reason %s with %q", typ, framework.InstanceCondition(ctx, c, ns, "web", typ), reason, text)
		}
	}
	waitCondition(v1beta1.ConditionDegraded, nginx.ReasonBackupNotFound, `"nightly"`)

	if err := c.Create(ctx, nightly(ns)); err != nil {
		t.Fatal(err)
	}
	waitCondition(v1beta1.ConditionRestored, nginx.ReasonRestoreInProgress, restoreID)
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("web").StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}
	inits := sts.Spec.Template.Spec.InitContainers
	if len(inits) != 2 || inits[1].Name != layout.RestoreContainerName || !slices.Contains(inits[1].Args, "--id="+restoreID) {
		t.Fatalf("StatefulSet init containers = %+v, want the restore of %s", inits, restoreID)
	}

	// No kubelet runs here: play its part with a pod whose restore failed.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: ns, Labels: sts.Spec.Selector.MatchLabels},
		Spec:       *sts.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "content", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: layout.RestoreContainerName, Image: inits[0].Image,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: "restore: content.tar.gz: sha256 mismatch",
		}},
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
	}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods are not watched; the controller reads them on its next pass over
	// the instance (every 30 s while a restore is under way). Do not wait:
	// an edit of the instance's metadata is such a pass.
	touch := web.DeepCopy()
	touch.Annotations = map[string]string{"test/poke": "1"}
	if err := c.Patch(ctx, touch, client.MergeFrom(web)); err != nil {
		t.Fatal(err)
	}
	waitCondition(v1beta1.ConditionRestored, nginx.ReasonRestoreFailed, "sha256 mismatch")

	// The replica comes up on the restoring template: the restore is done.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&sts), &sts); err != nil {
		t.Fatal(err)
	}
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1,
		CurrentRevision: "web-1", UpdateRevision: "web-1"}
	if err := c.Status().Update(ctx, &sts); err != nil {
		t.Fatal(err)
	}
	waitCondition(v1beta1.ConditionRestored, nginx.ReasonRestoreSucceeded, restoreID)
	var got v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Restore == nil || *got.Status.Restore != *web.Spec.Restore {
		t.Errorf("status.restore = %+v, want %+v", got.Status.Restore, web.Spec.Restore)
	}
}
