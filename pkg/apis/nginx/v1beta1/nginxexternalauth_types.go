package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NginxExternalAuth is external authentication for the rules of
// HTTPRoutes, which name it in a filter of type ExtensionRef (group
// nginx.operator.dev, kind NginxExternalAuth) in the same namespace:
//
//	filters:
//	- type: ExtensionRef
//	  extensionRef: {group: nginx.operator.dev, kind: NginxExternalAuth, name: oauth2}
//
// Its spec is an NginxOperator location's externalAuth; its Service is in
// its own namespace. A rule naming one that does not exist answers 500, and
// its route's ResolvedRefs condition says which.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ngxauth,categories=nginx
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.service`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.spec.port`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NginxExternalAuth struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the authentication, as a location's externalAuth.
	// +kubebuilder:validation:XValidation:rule="!has(self.namespace)",message="the Service of an NginxExternalAuth is in its own namespace: leave namespace out"
	// +kubebuilder:validation:XValidation:rule="!has(self.disabled) || !self.disabled",message="an NginxExternalAuth cannot be disabled: remove the filter from the rule instead"
	Spec ExternalAuth `json:"spec"`
}

// NginxExternalAuthList contains a list of NginxExternalAuth.
// +kubebuilder:object:root=true
type NginxExternalAuthList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NginxExternalAuth `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NginxExternalAuth{}, &NginxExternalAuthList{})
}
