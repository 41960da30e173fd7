//go:build !unit

package nginx_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// This cluster has no kubelet: the test creates a pod of the instance's
// StatefulSet and writes its status as a kubelet would when nginx exits at
// start on the configuration (a new pod cannot start on a configuration
// nginx refuses; running pods keep theirs, see test/realpods). The instance is Degraded (ConfigRejected)
// quoting nginx, with a Warning Event, until the pod's nginx is ready.
func TestAPodWhoseNginxRefusesTheConfigurationDegradesTheInstance(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))

	web := instance(ns, "web")
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "web") }) {
		t.Fatal("web not reconciled")
	}
	var n v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), &n); err != nil {
		t.Fatal(err)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("web").StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: sts.Name + "-1", Namespace: ns,
			Labels: sts.Spec.Template.Labels, Annotations: sts.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}},
		},
		Spec: sts.Spec.Template.Spec,
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	const emerg = `[emerg] host not found in upstream "nope.` + "example.invalid" + `:80" in /etc/nginx/conf/nginx.conf:31`
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: layout.NginxContainerName, Image: pod.Spec.Containers[0].Image, RestartCount: 2,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now, Message: "nginx: " + emerg + "\n",
		}},
	}}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	degraded := func(reason string) func(context.Context) bool {
		return func(ctx context.Context) bool {
			if err := c.Get(ctx, client.ObjectKeyFromObject(web), &n); err != nil {
				return false
			}
			cond := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded)
			return cond != nil && cond.Reason == reason
		}
	}
	if !framework.WaitFor(ctx, 30*time.Second, degraded(nginx.ReasonConfigRejected)) {
		t.Fatalf("conditions %+v, want Degraded %s", n.Status.Conditions, nginx.ReasonConfigRejected)
	}
	cond := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded)
	if cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, emerg) || !strings.Contains(cond.Message, pod.Name) {
		t.Errorf("Degraded = %s %q, want True quoting %q and naming pod %s", cond.Status, cond.Message, emerg, pod.Name)
	}
	if !framework.EventRecorded(ctx, cs, ns, "web", corev1.EventTypeWarning, nginx.ReasonConfigRejected, emerg, 30*time.Second) {
		t.Error("no Warning Event ConfigRejected quoting nginx")
	}

	// nginx starts and is ready (the Service it proxies appeared, say).
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	pod.Status.ContainerStatuses[0].Ready, pod.Status.ContainerStatuses[0].Started = true, ptr.To(true)
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, degraded(nginx.ReasonAsExpected)) {
		t.Fatalf("conditions %+v, want Degraded %s once nginx is ready", n.Status.Conditions, nginx.ReasonAsExpected)
	}
}
