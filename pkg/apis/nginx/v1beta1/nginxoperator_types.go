package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NginxOperatorSpec is the desired state of one nginx instance.
type NginxOperatorSpec struct {
	// Replicas is the number of nginx pods. Leave it unset to let something else own
	// the replica count (for example a HorizontalPodAutoscaler through the scale
	// subresource); the operator then never changes it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the nginx container image. Defaults to the operator's --nginx-image.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image,omitempty"`

	// Ports are the container ports nginx listens on, with the semantics of a
	// Pod's container ports. Ports below 1024 are refused: nginx runs unprivileged.
	// +optional
	// +listType=map
	// +listMapKey=containerPort
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(p, p.containerPort >= 1024)",message="containerPort must be 1024 or higher: nginx runs as a non-root user"
	Ports []corev1.ContainerPort `json:"ports,omitempty"`

	// ForceRedeploy rolls every pod whenever its value changes; any string will do.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ForceRedeploy string `json:"forceRedeploy,omitempty"`

	// Paused stops the operator from reconciling this instance. Deletion still proceeds.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// NginxOperatorStatus is the observed state of one nginx instance.
type NginxOperatorStatus struct {
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas is the number of nginx pods that exist.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of nginx pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// UpdatedReplicas is the number of nginx pods running the current configuration.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`
	// Selector is the label selector of this instance's pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// ConfigHash identifies the rendered nginx.conf the pods run.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`
	// Conditions: Available, Progressing, Degraded and Reconciled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NginxOperator is an nginx deployment: a StatefulSet, its Services and a
// generated nginx.conf, managed by nginx-operator.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ngx,categories=nginx
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`,description="Ready replicas"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NginxOperator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired nginx instance.
	// +optional
	Spec NginxOperatorSpec `json:"spec,omitempty"`
	// Status is what the operator observed of the instance.
	// +optional
	Status NginxOperatorStatus `json:"status,omitempty"`
}

// Hub marks NginxOperator v1beta1 as the version other versions convert through.
func (*NginxOperator) Hub() {}

// NginxOperatorList is a list of NginxOperator.
//
// +kubebuilder:object:root=true
type NginxOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NginxOperator `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NginxOperator{}, &NginxOperatorList{})
}
