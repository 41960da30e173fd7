package framework

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// RestrictedViolations lists how pod breaks the rules of the restricted Pod
// Security Standard that a pod spec controls; none means it passes. Every pod
// the operator builds is checked with it.
func RestrictedViolations(pod corev1.PodSpec) []string {
	var out []string
	sc := pod.SecurityContext
	if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		out = append(out, fmt.Sprintf("pod security context %+v: want runAsNonRoot and seccomp RuntimeDefault", sc))
	}
	if ptr.Deref(pod.AutomountServiceAccountToken, true) {
		out = append(out, "the service account token is mounted")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		out = append(out, "host namespaces are shared")
	}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			out = append(out, "volume "+v.Name+" is a hostPath")
		}
	}
	containers := append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...)
	if len(containers) == 0 {
		out = append(out, "no containers")
	}
	for _, c := range containers {
		csc := c.SecurityContext
		if csc == nil || ptr.Deref(csc.AllowPrivilegeEscalation, true) || !ptr.Deref(csc.ReadOnlyRootFilesystem, false) ||
			csc.Capabilities == nil || len(csc.Capabilities.Drop) != 1 || csc.Capabilities.Drop[0] != "ALL" ||
			len(csc.Capabilities.Add) > 0 || ptr.Deref(csc.Privileged, false) {
			out = append(out, fmt.Sprintf("container %s security context %+v is not restricted", c.Name, csc))
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 || p.ContainerPort < 1024 {
				out = append(out, fmt.Sprintf("container %s port %+v: want unprivileged and no hostPort", c.Name, p))
			}
		}
	}
	return out
}
