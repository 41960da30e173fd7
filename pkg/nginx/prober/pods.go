package prober

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// SyncAnnotationKeys are the annotations the operator sets on a pod to
// nudge the kubelet after a new configuration or new files (see
// layout.ConfigHashAnnotation), and the one an earlier operator set (which
// a nudge removes): a changed nudge makes the prober read the pod at once.
func SyncAnnotationKeys() []string {
	return []string{layout.ConfigHashAnnotation, layout.FilesHashAnnotation, layout.TLSHashAnnotation}
}

// SyncAnnotations are pod's annotations of SyncAnnotationKeys.
func SyncAnnotations(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, key := range SyncAnnotationKeys() {
		if v, ok := pod.Annotations[key]; ok {
			out[key] = v
		}
	}
	return out
}

// NginxRunning tells whether pod's nginx container runs (so its reloader
// answers) and the pod is not being deleted.
func NginxRunning(pod *corev1.Pod) bool {
	if pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() {
		return false
	}
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == layout.NginxContainerName {
			return st.State.Running != nil
		}
	}
	return false
}
