package nginx

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/jobs"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// Reasons of the Restored condition (and of Degraded, for a missing backup).
const (
	ReasonBackupNotFound     = "BackupNotFound"
	ReasonRestoreUnsupported = "RestoreUnsupported"
	ReasonRestoreInProgress  = "RestoreInProgress"
	ReasonRestoreFailed      = "RestoreFailed"
	ReasonRestoreSucceeded   = "RestoreSucceeded"
)

// restorePollInterval is how often an instance whose restore is under way
// reads its pods for a failed restore init container.
const restorePollInterval = 30 * time.Second

// restoreUnderway: spec.restore is not done yet.
func restoreUnderway(nginx *v1beta1.NginxOperator) bool {
	c := meta.FindStatusCondition(nginx.Status.Conditions, v1beta1.ConditionRestored)
	return c != nil && c.Status != metav1.ConditionTrue
}

// RestoreContainerName is the name the restore init container has: the
// status reads its outcome from pods by that name.
const RestoreContainerName = layout.RestoreContainerName

// restoreInit builds the restore init container for spec.restore, or nil
// without one. The NginxBackup is read from the cache (the operator watches
// NginxBackups); a missing one degrades the instance until it appears.
func (r *Reconciler) restoreInit(ctx context.Context, nginx *v1beta1.NginxOperator) (*RestoreInit, error) {
	want := nginx.Spec.Restore
	if want == nil {
		return nil, nil
	}
	if r.Images.Agent == "" {
		return nil, k8sutil.MissingReference(ReasonRestoreUnsupported, "this operator was started without a backup agent image: spec.restore cannot be honoured")
	}
	var backup v1beta1.NginxBackup
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: want.Backup}, &backup); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, k8sutil.MissingReference(ReasonBackupNotFound, "spec.restore.backup: NginxBackup %q not found in namespace %s", want.Backup, nginx.Namespace)
		}
		return nil, err
	}
	container, volumes := jobs.RestoreInitContainer(&backup, want.ID, layout.ContentMount(), jobs.Facts{AgentImage: r.Images.Agent})
	return &RestoreInit{Container: container, Volumes: volumes}, nil
}

// restored tells whether spec.restore is done: the status says so already,
// or the StatefulSet restoring it has rolled out.
func restored(nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet) bool {
	want := nginx.Spec.Restore
	if got := nginx.Status.Restore; got != nil && *got == *want {
		return true
	}
	return sts != nil && carriesRestore(sts, want.ID) && restoreRolledOut(sts)
}

// carriesRestore reports whether the live StatefulSet's pods restore id: the
// cached object may still be the one from before this reconcile's apply.
func carriesRestore(sts *appsv1.StatefulSet, id string) bool {
	for _, c := range sts.Spec.Template.Spec.InitContainers {
		if c.Name == RestoreContainerName && slices.Contains(c.Args, "--id="+id) {
			return true
		}
	}
	return false
}

// restoreRolledOut: the StatefulSet controller saw the current template and
// every desired replica runs it and is ready. Zero replicas restore nothing.
func restoreRolledOut(sts *appsv1.StatefulSet) bool {
	desired := int32(1)
	if sts.Spec.Replicas != nil {
		desired = *sts.Spec.Replicas
	}
	st := sts.Status
	return desired > 0 && st.ObservedGeneration >= sts.Generation && st.UpdatedReplicas == desired &&
		st.ReadyReplicas == desired && (st.UpdateRevision == "" || st.CurrentRevision == st.UpdateRevision)
}

// restoreFailure returns why a pod's restore init container failed, or ""
// when none did or no restore is under way. The cache keeps of a pod its
// containers' states only (operator.TrimPod), not its init containers':
// this is one list from the API server, made only while a restore is under
// way.
func (r *Reconciler) restoreFailure(ctx context.Context, nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet) string {
	if nginx.Spec.Restore == nil || restored(nginx, sts) {
		return ""
	}
	id := nginx.Spec.Restore.ID
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(nginx.Namespace), client.MatchingLabels(selector(nginx))); err != nil {
		return ""
	}
	for _, pod := range pods.Items {
		if msg := podRestoreFailure(&pod, id); msg != "" {
			return msg
		}
	}
	return ""
}

// podRestoreFailure is the termination message of pod's restore init
// container for id when its last run exited with an error.
func podRestoreFailure(pod *corev1.Pod, id string) string {
	restoresID := false
	for _, c := range pod.Spec.InitContainers {
		if c.Name == RestoreContainerName && slices.Contains(c.Args, "--id="+id) {
			restoresID = true
		}
	}
	if !restoresID {
		return ""
	}
	for _, st := range pod.Status.InitContainerStatuses {
		if st.Name != RestoreContainerName || st.State.Running != nil {
			continue // a retry under way: not failed (yet)
		}
		if t := st.State.Terminated; t != nil && t.ExitCode == 0 {
			continue // restored, whatever earlier attempts did
		}
		for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode != 0 {
				msg := strings.TrimSpace(t.Message)
				if msg == "" {
					msg = t.Reason
				}
				return fmt.Sprintf("pod %s: restore exited with code %d: %s", pod.Name, t.ExitCode, msg)
			}
		}
	}
	return ""
}
