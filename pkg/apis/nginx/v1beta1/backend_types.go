// Backend: one Service of a weighted split, which proxy locations and
// streams share.

package v1beta1

// Backend is one Service of a weighted split.
type Backend struct {
	// Service is the name of a Service in this namespace, or in Namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Service string `json:"service"`
	// Namespace is the Service's namespace when it is not this one. Another
	// team's namespace must consent, as Gateway API has it: a
	// ReferenceGrant (gateway.networking.k8s.io/v1beta1) in that namespace
	// that lets NginxOperators (group nginx.operator.dev) of this namespace
	// refer to the Service, or to every Service. An instance a Gateway owns
	// may also send to what its HTTPRoutes may refer to. Without consent,
	// or where Gateway API's CRDs are not installed, the instance reports
	// Degraded with reason ReferenceNotPermitted and keeps its last
	// configuration.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Port of the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// Weight is this Service's share of the requests, relative to the sum
	// of all weights; 0 sends it none.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Weight *int32 `json:"weight,omitempty"`
	// UseClusterIP sends this Service's share to its cluster address rather
	// than to its ready pods (see ProxyLocation's useClusterIP).
	// +optional
	UseClusterIP bool `json:"useClusterIP,omitempty"`
}
