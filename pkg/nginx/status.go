package nginx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// Condition reasons, CamelCase, as the troubleshooting guide lists them.
const (
	ReasonReconcileSucceeded = "ReconcileSucceeded"
	ReasonPaused             = "Paused"
	ReasonAwaitingRoutes     = "AwaitingRoutes"
	ReasonAsExpected         = "AsExpected"
	ReasonInvalidConfig      = "InvalidConfig"
	ReasonSecretNotFound     = "SecretNotFound"
	ReasonConfigMapNotFound  = "ConfigMapNotFound"
	ReasonServiceNotFound    = "ServiceNotFound"
	ReasonApplyFailed        = k8sutil.ReasonApplyFailed
	ReasonReplicasReady      = "MinimumReplicasAvailable"
	ReasonReplicasNotReady   = "ReplicasNotReady"
	ReasonScaledToZero       = "ScaledToZero"
	ReasonRollingUpdate      = "RollingUpdate"
	ReasonRolloutComplete    = "RolloutComplete"
	ReasonStatefulSetMissing = "StatefulSetNotFound"
	// ReasonNameConflict: a child's name is taken by an object this instance
	// does not control.
	ReasonNameConflict = k8sutil.ReasonNameConflict
	// ReasonRecreating: the StatefulSet is replaced (orphaning its pods)
	// because its volumeClaimTemplates changed.
	ReasonRecreating = "RecreatingStatefulSet"
	// ReasonConfigRejected: nginx refuses the current configuration (say, a
	// proxied host that does not resolve): running pods keep serving the
	// configuration they loaded before, and a pod that starts on it cannot.
	ReasonConfigRejected = "ConfigRejected"
	// ReasonReloading: some pods have yet to load the current configuration.
	ReasonReloading = "Reloading"
)

// ConfigError is a spec that cannot be applied (nginx or the apiserver would
// refuse it), reported as condition Degraded with reason InvalidConfig; the
// controller does not retry it until the spec changes.
type ConfigError = k8sutil.SpecError

func configErrorf(format string, args ...any) error {
	return k8sutil.InvalidSpec(ReasonInvalidConfig, format, args...)
}

func setCondition(nginx *v1beta1.NginxOperator, typ string, status metav1.ConditionStatus, reason, msg string) {
	k8sutil.SetCondition(&nginx.Status.Conditions, nginx.Generation, typ, status, reason, msg)
}

// setPaused reports a paused instance: the operator saw the spec and
// applies none of it, so whether the pods run it is not known (Progressing
// Unknown, as a paused Deployment's); Available and Degraded say what they
// last saw of the pods.
func setPaused(nginx *v1beta1.NginxOperator) {
	nginx.Status.ObservedGeneration = nginx.Generation
	setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionFalse, ReasonPaused,
		"spec.paused is true: the operator leaves this instance's children as they are")
	setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionUnknown, ReasonPaused,
		"spec.paused is true: changes to the spec are not applied, and the pods run what was applied before the pause")
}

// setAwaitingRoutes says why a routed instance (see awaitingRoutes) has
// no children yet.
func setAwaitingRoutes(nginx *v1beta1.NginxOperator) {
	setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionFalse, ReasonAwaitingRoutes,
		"a Gateway controls this instance and its servers come from that Gateway's routes, which the Gateway controller has not handed over: "+
			"the Gateway is not served by this operator, or this is not the instance the Gateway controller made for it (named <gateway>-gateway)")
}

// observed is what one reconcile saw of an instance: the plan (nil when
// planning failed) and the outcome of applying it, the live StatefulSet,
// its pods (from the cache, which holds only the operator's), what their
// reloaders report, and why a restore failed, if one did.
type observed struct {
	plan           *plan
	err            error
	sts            *appsv1.StatefulSet
	pods           []corev1.Pod
	configs        podConfigs
	restoreFailure string
	// certificates is the report on the instance's cert-manager
	// Certificates; nil when it asks for none.
	certificates *certificateReport
}

// setStatus builds the whole status from what the reconcile observed, for
// every instance the controller reconciles (a paused one has setPaused, a
// Gateway's awaiting its routes setAwaitingRoutes). The configuration
// hash, the upstreams and the routing come from the plan, the same
// resolved model nginx.conf was rendered from; a failed plan leaves them
// as they were.
func setStatus(nginx *v1beta1.NginxOperator, o observed) {
	if o.plan != nil {
		nginx.Status.ConfigHash = o.plan.inputs.ConfigHash
		nginx.Status.Upstreams = o.plan.upstreams
		nginx.Status.Routing = o.plan.routing
	}
	observe(nginx, o.sts, o.pods, o.configs, o.err)
	setCertificatesCondition(nginx, o.certificates)
	if o.err == nil {
		setRestoreStatus(nginx, o.sts, o.restoreFailure)
	}
}

// setRestoreStatus sets the Restored condition and status.restore. A ready
// pod of the current revision has passed its restore init container (init
// containers must succeed before nginx starts), so a completed rollout of a
// StatefulSet carrying the requested id means every replica was seeded (or
// already held that id). Until then, failure says why a pod's restore
// failed (restoreFailure), if one did.
func setRestoreStatus(nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet, failure string) {
	want := nginx.Spec.Restore
	if want == nil {
		meta.RemoveStatusCondition(&nginx.Status.Conditions, v1beta1.ConditionRestored)
		return
	}
	done := fmt.Sprintf("every replica holds backup %s of NginxBackup %s", want.ID, want.Backup)
	switch {
	case restored(nginx, sts):
		nginx.Status.Restore = want.DeepCopy()
		setCondition(nginx, v1beta1.ConditionRestored, metav1.ConditionTrue, ReasonRestoreSucceeded, done)
	case failure != "":
		setCondition(nginx, v1beta1.ConditionRestored, metav1.ConditionFalse, ReasonRestoreFailed, failure)
	default:
		setCondition(nginx, v1beta1.ConditionRestored, metav1.ConditionFalse, ReasonRestoreInProgress,
			fmt.Sprintf("restoring backup %s of NginxBackup %s into the replicas", want.ID, want.Backup))
	}
}

// observe sets the conditions and counts from the reconcile's outcome, the
// live StatefulSet, its pods and what their reloaders report.
func observe(nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet, pods []corev1.Pod, configs podConfigs, err error) {
	nginx.Status.ObservedGeneration = nginx.Generation
	nginx.Status.Selector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: selector(nginx)})

	if err != nil {
		reason := k8sutil.ReasonOf(err, ReasonApplyFailed)
		setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionFalse, reason, err.Error())
		setCondition(nginx, v1beta1.ConditionDegraded, metav1.ConditionTrue, reason, err.Error())
	} else {
		setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionTrue, ReasonReconcileSucceeded, "all children are applied")
		if msg := rejectedConfig(pods); msg != "" {
			setCondition(nginx, v1beta1.ConditionDegraded, metav1.ConditionTrue, ReasonConfigRejected, msg)
		} else if len(configs.rejected) > 0 {
			setCondition(nginx, v1beta1.ConditionDegraded, metav1.ConditionTrue, ReasonConfigRejected, configs.rejectionMessage(nginx.Status.ConfigHash))
		} else {
			setCondition(nginx, v1beta1.ConditionDegraded, metav1.ConditionFalse, ReasonAsExpected, "")
		}
	}

	// A failed reconcile reads no pod, nor does one before the pods are
	// read: the count stays as last seen.
	switch {
	case configs.keep || !configs.read && err != nil:
	case configs.read:
		nginx.Status.LoadedReplicas = ptr.To(configs.loaded)
	default:
		nginx.Status.LoadedReplicas = nil
	}
	if sts == nil {
		nginx.Status.Replicas, nginx.Status.ReadyReplicas, nginx.Status.UpdatedReplicas = 0, 0, 0
		setCondition(nginx, v1beta1.ConditionAvailable, metav1.ConditionFalse, ReasonStatefulSetMissing, "the StatefulSet does not exist yet")
		setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionTrue, ReasonRollingUpdate, "creating the StatefulSet")
		return
	}
	desired := int32(1)
	if sts.Spec.Replicas != nil {
		desired = *sts.Spec.Replicas
	}
	st := sts.Status
	nginx.Status.Replicas, nginx.Status.ReadyReplicas, nginx.Status.UpdatedReplicas = st.Replicas, st.ReadyReplicas, st.UpdatedReplicas

	switch {
	case desired == 0:
		setCondition(nginx, v1beta1.ConditionAvailable, metav1.ConditionFalse, ReasonScaledToZero, "replicas is 0")
	case st.ReadyReplicas >= desired:
		setCondition(nginx, v1beta1.ConditionAvailable, metav1.ConditionTrue, ReasonReplicasReady, fmt.Sprintf("%d of %d replicas ready", st.ReadyReplicas, desired))
	default:
		setCondition(nginx, v1beta1.ConditionAvailable, metav1.ConditionFalse, ReasonReplicasNotReady, fmt.Sprintf("%d of %d replicas ready", st.ReadyReplicas, desired))
	}

	// rolledOut also sees through a cached StatefulSet older than the one
	// just applied: its old template, however rolled out, is not done.
	switch {
	case !rolledOut(sts) || st.ReadyReplicas != desired:
		setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionTrue, ReasonRollingUpdate,
			fmt.Sprintf("%d of %d replicas updated, %d ready", st.UpdatedReplicas, desired, st.ReadyReplicas))
	case configs.keep && meta.FindStatusCondition(nginx.Status.Conditions, v1beta1.ConditionProgressing) != nil:
		// What it said of the pods until they are read (podConfigs.keep).
	case configs.read && configs.loaded != desired:
		setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionTrue, ReasonReloading, configs.reloadingMessage(desired, nginx.Status.ConfigHash))
	default:
		setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionFalse, ReasonRolloutComplete, "all replicas run the current pod template and configuration")
	}
}

// maxNginxErrorLen bounds the part of nginx's error quoted in a condition.
const maxNginxErrorLen = 1024

// rejectedConfig says why nginx cannot start on the configuration, quoting
// its error from the termination message of a pod whose nginx is down (the
// nginx container's terminationMessagePolicy is FallbackToLogsOnError, so
// the kubelet keeps nginx's last log lines there). All pods mount the one
// config Secret, so that is the current configuration or, briefly, the one
// before. It is "" when no pod's nginx is down with an error line: pods
// being deleted and a ready nginx do not count, whatever they did before.
func rejectedConfig(pods []corev1.Pod) string {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for i := range sorted {
		pod := &sorted[i]
		if !pod.DeletionTimestamp.IsZero() {
			continue
		}
		for _, st := range pod.Status.ContainerStatuses {
			if st.Name != layout.NginxContainerName || st.Ready {
				continue
			}
			for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
				if t == nil || t.ExitCode == 0 {
					continue
				}
				if line := reloader.ErrorLine(t.Message); line != "" {
					return fmt.Sprintf("nginx refuses the configuration in pod %s: %s", pod.Name, truncate(line))
				}
			}
		}
	}
	return ""
}

func rejection(pod string, st reloader.Status) string {
	return fmt.Sprintf("%s (serving configuration %s): %s", pod, st.Hash, truncate(st.Error))
}

// reloadingMessage is the Progressing condition's message while fewer than
// desired pods serve configuration hash: how many do, and what the others
// serve, or that they were not read yet or do not answer.
func (p podConfigs) reloadingMessage(desired int32, hash string) string {
	msg := fmt.Sprintf("%d of %d replicas serve configuration %s", p.loaded, desired, hash)
	if len(p.behind) > 0 {
		msg += "; still on an earlier one: pod " + strings.Join(p.behind, ", pod ")
	}
	if len(p.waiting) > 0 {
		msg += "; serving an earlier one until the kubelet brings the files the new one names (it does within seconds): pod " + strings.Join(p.waiting, ", pod ")
	}
	if len(p.pending) > 0 {
		msg += "; not read yet: pod " + strings.Join(p.pending, ", ")
	}
	if len(p.unreachable) > 0 {
		msg += "; no answer from the reloader of pod " + strings.Join(p.unreachable, ", ") +
			" (a NetworkPolicy may keep the operator from the pods' port " + strconv.Itoa(layout.ReloaderPort) +
			"; --read-pod-status=false turns these reads off)"
	}
	return msg
}

// rejectionMessage is the Degraded condition's message for pods whose nginx
// refused hash and serve what they loaded before.
func (p podConfigs) rejectionMessage(hash string) string {
	return fmt.Sprintf("nginx refuses configuration %s (or a certificate it reads) and keeps serving what it loaded before, in pod %s",
		hash, strings.Join(p.rejected, "; pod "))
}

func truncate(s string) string {
	if len(s) > maxNginxErrorLen {
		return strings.ToValidUTF8(s[:maxNginxErrorLen], "") + "..."
	}
	return s
}
