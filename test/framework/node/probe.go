package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// RestrictedContainer is a container security context that passes the
// restricted Pod Security Standard, as the operator gives its pods, for
// the test images (which name no user).
func RestrictedContainer() *corev1.SecurityContext {
	sc := layout.RestrictedContainer()
	sc.RunAsUser = ptr.To[int64](65532)
	return sc
}

// RunProbe runs `testserver probe URL...` (image is the node's test server,
// internal/testserver) as pod name in ns on the real node, with labels
// (what NetworkPolicies select it by), waits until it has ended, and
// returns whether it succeeded and its log: a line per URL, its body or
// why it failed (each URL gets 10 seconds).
func RunProbe(ctx context.Context, cs kubernetes.Interface, ns, name, image string, labels map[string]string, urls ...string) (bool, string, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "probe", Image: image, Args: append([]string{"probe"}, urls...),
				SecurityContext: RestrictedContainer(),
			}},
		},
	}
	OnRealNode(&pod.Spec)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return false, "", err
	}
	var phase corev1.PodPhase
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	if err != nil {
		return false, "", fmt.Errorf("probe pod %s/%s did not end: %w (phase %q)", ns, name, err, phase)
	}
	// Logs come from the kubelet, through the apiserver.
	logs, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return false, "", fmt.Errorf("the logs of probe pod %s/%s: %w", ns, name, err)
	}
	return phase == corev1.PodSucceeded, string(logs), nil
}
