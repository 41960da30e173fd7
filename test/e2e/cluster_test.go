package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// These tests prove the local cluster behaves like a real one for what the
// operator relies on: scheduling, pod readiness, StatefulSet scaling, Jobs and
// garbage collection, all driven by kwok's fake kubelets.

func TestLocalClusterRunsStatefulSetPodsToReadyAndScales(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, cs := newNamespace(t)
	labels := map[string]string{"app": "web"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](3),
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readyReplicas := func(want int32) func(context.Context) bool {
		return func(ctx context.Context) bool {
			got, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && got.Status.ReadyReplicas == want && got.Status.Replicas == want
		}
	}
	if !framework.WaitFor(ctx, 60*time.Second, readyReplicas(3)) {
		t.Fatal("the StatefulSet did not get 3 ready replicas")
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Errorf("pod %s: node %q phase %s ip %q; want scheduled, Running, with an IP", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
		}
	}

	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	if _, err := cs.AppsV1().StatefulSets(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 60*time.Second, readyReplicas(1)) {
		t.Fatal("the StatefulSet did not scale down to 1")
	}
	// Garbage collection: deleting the StatefulSet removes its pods.
	if err := cs.AppsV1().StatefulSets(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 0
	}) {
		t.Fatal("pods of the deleted StatefulSet were not garbage-collected")
	}
}

func TestLocalClusterCompletesJobsAndFailsMarkedOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, cs := newNamespace(t)
	job := func(name string, podLabels map[string]string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "agent", Image: "busybox"}},
					},
				},
			},
		}
	}
	for _, j := range []*batchv1.Job{job("succeeds", nil), job("fails", map[string]string{"nginx-operator.dev/kwok-fail": "true"})} {
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	jobCondition := func(name string, cond batchv1.JobConditionType) func(context.Context) bool {
		return func(ctx context.Context) bool {
			j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, c := range j.Status.Conditions {
				if c.Type == cond && c.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		}
	}
	if !framework.WaitFor(ctx, 60*time.Second, jobCondition("succeeds", batchv1.JobComplete)) {
		t.Error("the Job did not complete")
	}
	if !framework.WaitFor(ctx, 60*time.Second, jobCondition("fails", batchv1.JobFailed)) {
		t.Error("the Job whose pod is marked to fail did not fail")
	}
}
