package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NginxOperatorSpec is the book's spec: one port, a replica count and a redeploy trigger.
type NginxOperatorSpec struct {
	// Port is the port number nginx listens on: 1024 or higher (nginx runs as a
	// non-root user), and not 9113, 18080, 18081 or 18082 (the operator's).
	// +optional
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:validation:XValidation:rule="!(self in [18080, 18081, 18082, 9113])",message="port 18080, 18081, 18082 and 9113 are reserved by the operator (health, stub_status, reloader, exporter)"
	Port *int32 `json:"port,omitempty"`
	// Replicas is the number of nginx pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`
	// ForceRedeploy rolls every pod whenever its value changes.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ForceRedeploy string `json:"forceRedeploy,omitempty"`
}

// NginxOperatorStatus is the book's status: conditions only.
type NginxOperatorStatus struct {
	// Conditions describe the state of the instance.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NginxOperator is the deprecated v1alpha1 form of an nginx instance; use v1beta1.
// The operator's conversion webhook translates it to and from v1beta1 without
// loss: what v1alpha1 cannot hold travels in annotations.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || (size(self.metadata.name) <= 47 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && !self.metadata.name.endsWith('-pods'))",message="metadata.name must be at most 47 characters of lowercase letters, digits and '-', start with a letter and not end with '-pods': it names the instance's Service, StatefulSet and pods, and <name>-pods is its headless Service",optionalOldSelf=true
// +kubebuilder:deprecatedversion:warning="nginx.operator.dev/v1alpha1 NginxOperator is deprecated; use nginx.operator.dev/v1beta1"
// +kubebuilder:resource:shortName=ngx,categories=nginx
type NginxOperator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NginxOperatorSpec   `json:"spec,omitempty"`
	Status NginxOperatorStatus `json:"status,omitempty"`
}

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
