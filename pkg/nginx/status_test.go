package nginx

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// observe is the one place an instance's status is computed from the
// reconcile's outcome and the live StatefulSet.
func TestObserveComputesConditionsFromTheOutcomeAndTheStatefulSet(t *testing.T) {
	sts := func(replicas, ready, updated int32, rolled bool) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}}
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: replicas, ReadyReplicas: ready, UpdatedReplicas: updated, CurrentRevision: "a", UpdateRevision: "b"}
		if rolled {
			s.Status.CurrentRevision = "b"
		}
		return s
	}
	type want struct {
		status metav1.ConditionStatus
		reason string
	}
	for _, tc := range []struct {
		name                                     string
		sts                                      *appsv1.StatefulSet
		err                                      error
		available, progressing, degraded, reconc want
	}{
		{"no StatefulSet yet", nil, nil,
			want{metav1.ConditionFalse, ReasonStatefulSetMissing}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"all replicas ready and rolled out", sts(2, 2, 2, true), nil,
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionFalse, ReasonRolloutComplete}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"rolling", sts(2, 2, 1, false), nil,
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"not ready", sts(3, 1, 3, true), nil,
			want{metav1.ConditionFalse, ReasonReplicasNotReady}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"scaled to zero", sts(0, 0, 0, true), nil,
			want{metav1.ConditionFalse, ReasonScaledToZero}, want{metav1.ConditionFalse, ReasonRolloutComplete}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"an invalid spec keeps the old pods serving", sts(2, 2, 2, true), configErrorf("config.servers[0].locations[1]: path %q appears twice", "/a"),
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionFalse, ReasonRolloutComplete}, want{metav1.ConditionTrue, ReasonInvalidConfig}, want{metav1.ConditionFalse, ReasonInvalidConfig}},
		{"a missing Secret", nil, k8sutil.MissingReference(ReasonSecretNotFound, "TLS Secret %q not found", "web-tls"),
			want{metav1.ConditionFalse, ReasonStatefulSetMissing}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionTrue, ReasonSecretNotFound}, want{metav1.ConditionFalse, ReasonSecretNotFound}},
		{"an API error", nil, errors.New("connection refused"),
			want{metav1.ConditionFalse, ReasonStatefulSetMissing}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionTrue, ReasonApplyFailed}, want{metav1.ConditionFalse, ReasonApplyFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 5}}
			observe(n, tc.sts, tc.err)
			if n.Status.ObservedGeneration != 5 || n.Status.Selector == "" {
				t.Errorf("observedGeneration %d selector %q", n.Status.ObservedGeneration, n.Status.Selector)
			}
			for typ, w := range map[string]want{v1beta1.ConditionAvailable: tc.available, v1beta1.ConditionProgressing: tc.progressing,
				v1beta1.ConditionDegraded: tc.degraded, v1beta1.ConditionReconciled: tc.reconc} {
				c := meta.FindStatusCondition(n.Status.Conditions, typ)
				if c == nil || c.Status != w.status || c.Reason != w.reason || c.ObservedGeneration != 5 {
					t.Errorf("%s = %+v, want %s/%s", typ, c, w.status, w.reason)
				}
			}
		})
	}
}

// Old config Secrets are deleted only once the StatefulSet in the cache runs
// the new configuration on every replica: a stale cached StatefulSet that is
// fully rolled out on the old one must not free the Secret its pods use.
func TestOldConfigsAreFreedOnlyWhenEveryReplicaRunsTheNewOne(t *testing.T) {
	sts := func(hash string, updated int32, rolled bool) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}}
		s.Spec.Template.Annotations = map[string]string{ConfigHashAnnotation: hash}
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: updated, CurrentRevision: "a", UpdateRevision: "b"}
		if rolled {
			s.Status.CurrentRevision = "b"
		}
		return s
	}
	for _, tc := range []struct {
		name string
		sts  *appsv1.StatefulSet
		want bool
	}{
		{"no StatefulSet", nil, false},
		{"the cache still holds the old template, fully rolled out", sts("old", 2, true), false},
		{"the new template, rolling", sts("new", 1, false), false},
		{"the new template on every replica", sts("new", 2, true), true},
	} {
		if got := runsOnly(tc.sts, "new"); got != tc.want {
			t.Errorf("%s: runsOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
