package nginx

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRestoreFailureIsTheLatestAttemptsOutcome(t *testing.T) {
	const id = "20261122T030000.000000000Z-1a2b3c4d"
	failed := &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "sha256 mismatch"}
	for _, tc := range []struct {
		name   string
		args   []string
		status corev1.ContainerStatus
		want   string // substring; "" means not failed
	}{
		{"failed and backing off", []string{"--id=" + id},
			corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, LastTerminationState: corev1.ContainerState{Terminated: failed}},
			"sha256 mismatch"},
		{"failed just now", []string{"--id=" + id}, corev1.ContainerStatus{State: corev1.ContainerState{Terminated: failed}}, "exited with code 1"},
		{"retrying after a failure", []string{"--id=" + id},
			corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: corev1.ContainerState{Terminated: failed}}, ""},
		{"succeeded after a failure", []string{"--id=" + id},
			corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}, LastTerminationState: corev1.ContainerState{Terminated: failed}}, ""},
		{"a pod of an earlier id", []string{"--id=20250101T000000.000000000Z-00000000"}, corev1.ContainerStatus{State: corev1.ContainerState{Terminated: failed}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.status.Name = RestoreContainerName
			pod := &corev1.Pod{
				Spec:   corev1.PodSpec{InitContainers: []corev1.Container{{Name: RestoreContainerName, Args: tc.args}}},
				Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{tc.status}},
			}
			pod.Name = "web-0"
			got := podRestoreFailure(pod, id)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("podRestoreFailure = %q, want %q", got, tc.want)
			}
		})
	}
}
