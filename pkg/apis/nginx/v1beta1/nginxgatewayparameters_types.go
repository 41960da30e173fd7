package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NginxGatewayParametersSpec are the settings of the nginx instance of a
// Gateway (the NginxOperator the operator makes for it), with the meaning
// they have in an NginxOperator's spec. What the Gateway and its routes
// decide (ports, servers, TLS certificates, labels) is not here. Every
// field is optional and without a default: one left unset is the class's
// (for a Gateway's parameters) or the NginxOperator's default.
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.realIP) || (has(self.config.trustedProxies) && size(self.config.trustedProxies) > 0)",message="config.realIP needs config.trustedProxies: nginx takes the client address only from the hops listed there"
type NginxGatewayParametersSpec struct {
	// Replicas is the number of nginx pods of each Gateway (default 1).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the nginx container image. Defaults to the operator's --nginx-image.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$`
	Image string `json:"image,omitempty"`

	// ImagePullPolicy of the nginx container.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets name Secrets in the Gateway's namespace used to pull
	// the images.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Config tunes nginx: NginxOperator's spec.config but for its servers,
	// which the Gateway's routes make.
	// +optional
	Config *NginxSettings `json:"config,omitempty"`

	// Metrics turns on the exporter sidecar and the per-request metrics,
	// labelled by route (httproute/<namespace>/<name>), as an
	// NginxOperator's spec.metrics.
	// +optional
	Metrics *MetricsSpec `json:"metrics,omitempty"`

	// Service configures the Gateway's Service (its type, LoadBalancer
	// settings, annotations); the Gateway's addresses are its.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// PodDisruptionBudget, when set, limits voluntary disruptions of the pods.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// NetworkPolicy, when set, admits connections to the pods as an
	// NginxOperator's spec.networkPolicy does.
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// Resources of the nginx container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Pod holds scheduling settings, metadata and the stop grace period of
	// the nginx pods.
	// +optional
	Pod *PodSettings `json:"pod,omitempty"`
}

// NginxGatewayParameters are the settings of Gateways' nginx instances. A
// GatewayClass names one in spec.parametersRef (with its namespace) for
// every Gateway of the class, and a Gateway one of its own namespace in
// spec.infrastructure.parametersRef; where both do, each field the
// Gateway's sets replaces the class's.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ngxgwp,categories=nginx
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.service.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NginxGatewayParameters struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the settings.
	// +optional
	Spec NginxGatewayParametersSpec `json:"spec,omitempty"`
}

// NginxGatewayParametersList contains a list of NginxGatewayParameters.
// +kubebuilder:object:root=true
type NginxGatewayParametersList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NginxGatewayParameters `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NginxGatewayParameters{}, &NginxGatewayParametersList{})
}
