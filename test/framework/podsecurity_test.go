package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestRestrictedViolationsFindsEachBrokenRule(t *testing.T) {
	good := func() corev1.PodSpec {
		return corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
		}
	}
	if v := RestrictedViolations(good()); len(v) != 0 {
		t.Fatalf("a restricted pod has violations: %v", v)
	}
	for name, breakIt := range map[string]func(*corev1.PodSpec){
		"root":         func(p *corev1.PodSpec) { p.SecurityContext.RunAsNonRoot = ptr.To(false) },
		"token":        func(p *corev1.PodSpec) { p.AutomountServiceAccountToken = nil },
		"host network": func(p *corev1.PodSpec) { p.HostNetwork = true },
		"hostPath": func(p *corev1.PodSpec) {
			p.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}}}}
		},
		"privileged": func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Privileged = ptr.To(true) },
		"capability": func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
		},
		"writable root":   func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.ReadOnlyRootFilesystem = nil },
		"privileged port": func(p *corev1.PodSpec) { p.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}} },
	} {
		pod := good()
		breakIt(&pod)
		if len(RestrictedViolations(pod)) == 0 {
			t.Errorf("%s: no violation reported", name)
		}
	}
}
