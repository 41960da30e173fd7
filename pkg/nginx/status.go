package nginx

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// Condition reasons, CamelCase, as the troubleshooting guide lists them.
const (
	ReasonReconcileSucceeded = "ReconcileSucceeded"
	ReasonPaused             = "Paused"
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
	ReasonNameConflict = "NameConflict"
	// ReasonRecreating: the StatefulSet is replaced (orphaning its pods)
	// because its volumeClaimTemplates changed.
	ReasonRecreating = "RecreatingStatefulSet"
)

func setCondition(nginx *v1beta1.NginxOperator, typ string, status metav1.ConditionStatus, reason, msg string) {
	k8sutil.SetCondition(&nginx.Status.Conditions, nginx.Generation, typ, status, reason, msg)
}

func setPaused(nginx *v1beta1.NginxOperator) {
	nginx.Status.ObservedGeneration = nginx.Generation
	setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionFalse, ReasonPaused,
		"spec.paused is true: the operator leaves this instance's children as they are")
}

// observe fills the status from the reconcile's outcome and the live StatefulSet.
func observe(nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet, err error) {
	nginx.Status.ObservedGeneration = nginx.Generation
	nginx.Status.Selector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: selector(nginx)})

	if err != nil {
		reason := k8sutil.ReasonOf(err, ReasonApplyFailed)
		setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionFalse, reason, err.Error())
		setCondition(nginx, v1beta1.ConditionDegraded, metav1.ConditionTrue, reason, err.Error())
	} else {
		setCondition(nginx, v1beta1.ConditionReconciled, metav1.ConditionTrue, ReasonReconcileSucceeded, "all children are applied")
		setCondition(nginx, v1beta1.ConditionDegraded, metav1.ConditionFalse, ReasonAsExpected, "")
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

	rolledOut := st.ObservedGeneration >= sts.Generation && st.UpdatedReplicas == desired &&
		st.Replicas == desired && st.ReadyReplicas == desired && (st.UpdateRevision == "" || st.CurrentRevision == st.UpdateRevision)
	if rolledOut {
		setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionFalse, ReasonRolloutComplete, "all replicas run the current configuration")
	} else {
		setCondition(nginx, v1beta1.ConditionProgressing, metav1.ConditionTrue, ReasonRollingUpdate,
			fmt.Sprintf("%d of %d replicas updated, %d ready", st.UpdatedReplicas, desired, st.ReadyReplicas))
	}
}
