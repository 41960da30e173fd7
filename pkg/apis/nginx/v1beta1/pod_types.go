// The nginx pods: their scheduling and metadata, and their disruption
// budget.

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodDisruptionBudgetSpec sets exactly one of minAvailable or maxUnavailable.
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="set exactly one of minAvailable or maxUnavailable"
type PodDisruptionBudgetSpec struct {
	// MinAvailable pods during a voluntary disruption (number or percentage).
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 1000000 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be a number from 0 to 1000000 or a percentage from 0% to 100%"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// MaxUnavailable pods during a voluntary disruption (number or percentage).
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 1000000 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be a number from 0 to 1000000 or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// PodSettings are scheduling settings and metadata of the nginx pods.
type PodSettings struct {
	// Labels added to the pods (the operator's own labels win on conflict).
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to the pods. Keys under nginx.operator.dev/ are the operator's.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('nginx.operator.dev/'))",message="annotation keys under nginx.operator.dev/ are reserved for the operator"
	Annotations map[string]string `json:"annotations,omitempty"`
	// NodeSelector of the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of the pods, at most 64. Admission checks them as the
	// apiserver checks a pod's: keys are label keys, values label values
	// (empty with operator Exists), tolerationSeconds needs effect
	// NoExecute.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity of the pods. Admission checks it as the apiserver checks a
	// pod's (label keys and values, operators and their values, weights
	// from 1 to 100, a topologyKey for every pod affinity term), with at
	// most 16 terms per list, 16 expressions per selector and 64 values per
	// expression.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TopologySpreadConstraints of the pods, at most 16, each with its own
	// topologyKey and whenUnsatisfiable. Admission checks them as the
	// apiserver checks a pod's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(d, d.topologyKey == c.topologyKey && d.whenUnsatisfiable == c.whenUnsatisfiable))",message="two constraints may not have the same topologyKey and whenUnsatisfiable"
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// PriorityClassName of the pods: the name of a PriorityClass.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// TerminationGracePeriodSeconds is how long a stopping pod may take:
	// nginx keeps serving for 5 s for the endpoints to drop the pod, then
	// quits gracefully (it stops accepting, and lets the requests in flight
	// finish) and closes what is still open 2 s before the grace period
	// ends (worker_shutdown_timeout, which also bounds how long the workers
	// of a configuration replaced by a reload linger). The default covers
	// the default proxy timeouts (60 s).
	// +optional
	// +kubebuilder:default=75
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=3600
	TerminationGracePeriodSeconds int64 `json:"terminationGracePeriodSeconds,omitempty"`
}
