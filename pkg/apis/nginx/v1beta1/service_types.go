// How clients reach an instance: its ports, its Service and its
// NetworkPolicy.

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// Port is one port nginx listens on, and the port of the instance's Service
// that leads to it.
// +kubebuilder:validation:XValidation:rule="!(self.containerPort in [18080, 18081, 18082, 9113])",message="containerPort 18080, 18081, 18082 and 9113 are reserved by the operator (health, stub_status, reloader, exporter)"
// +kubebuilder:validation:XValidation:rule="!has(self.servicePort) || !(self.servicePort in [9113, 18082])",message="servicePort 9113 and 18082 are the Service's metrics ports (exporter, reloader): choose another"
// +kubebuilder:validation:XValidation:rule="!(self.name in ['health', 'reloader'])",message="the port names health and reloader are the operator's: rename the port"
// +kubebuilder:validation:XValidation:rule="!has(self.h2c) || !self.h2c || self.protocol != 'UDP'",message="h2c is HTTP/2 over TCP: a UDP port cannot set it"
type Port struct {
	// Name of the port, an IANA service name; servers and the Service refer to it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// ContainerPort nginx listens on; 1024 or higher, since nginx runs as a non-root user.
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	ContainerPort int32 `json:"containerPort"`
	// ServicePort is the port clients of the instance's Service (and of a
	// load balancer in front of it) connect to; the Service forwards it to
	// containerPort. Unset, the operator chooses: 443 for a port whose
	// servers use TLS, 80 for a port whose servers speak plain HTTP (as does
	// the first port of an instance without servers, where nginx's default
	// server listens), and the containerPort for any other port. When two
	// ports would get the same one, the first in spec.ports gets it and the
	// others their containerPort.
	//
	// That choice is the operator's, not a schema default, because an
	// instance created by an operator of release 0.3.0 or earlier has a Service on its
	// containerPorts, and a default would move its clients' ports on
	// upgrade. The operator marks the Service it creates with the
	// annotation nginx.operator.dev/service-ports: standard, the choice
	// above; an instance whose Service exists without the annotation keeps
	// its containerPorts for every port without servicePort, and the
	// operator writes the annotation's value container so that this lasts.
	// Set servicePort to change a port of such an instance; deleting its
	// Service makes the operator create it anew with the standard ports.
	// The headless Service keeps the containerPorts.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ServicePort int32 `json:"servicePort,omitempty"`
	// NodePort is the port every node opens for this port when
	// spec.service.type is NodePort or LoadBalancer. Unset, Kubernetes
	// allocates one and keeps it; removing the field also keeps the one the
	// Service has. The API server refuses a port outside its node port range
	// (--service-node-port-range, 30000-32767 unless changed) or one another
	// Service uses, and the instance then reports the refusal.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	NodePort int32 `json:"nodePort,omitempty"`
	// Protocol of the port: TCP, or UDP for a port whose stream relays
	// datagrams (config.streams). A TCP and a UDP port may share a
	// containerPort and a servicePort, as DNS's 53 does.
	// +optional
	// +kubebuilder:default=TCP
	// +kubebuilder:validation:Enum=TCP;UDP
	Protocol corev1.Protocol `json:"protocol,omitempty"`
	// H2C makes the port's plain-text servers speak HTTP/2 to clients that
	// start with it (HTTP/2 with prior knowledge, as gRPC clients do): what
	// plain-text gRPC through nginx needs (ingress-nginx serves it on its
	// plain-text port; Kubernetes names the protocol kubernetes.io/h2c).
	// nginx 1.25.1 and later tell HTTP/1.1 and HTTP/2 clients apart on such
	// a port by HTTP/2's connection preface; older nginx speak only HTTP/2
	// there. TLS servers offer HTTP/2 by ALPN without it (see
	// config.disableHTTP2), so a port with TLS servers cannot set it.
	// +optional
	H2C bool `json:"h2c,omitempty"`
}

// ServiceSpec configures the client Service.
// +kubebuilder:validation:XValidation:rule="!has(self.externalTrafficPolicy) || self.type in ['NodePort', 'LoadBalancer']",message="externalTrafficPolicy needs type NodePort or LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerSourceRanges) || self.type == 'LoadBalancer'",message="loadBalancerSourceRanges needs type LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerClass) || self.type == 'LoadBalancer'",message="loadBalancerClass needs type LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.ipFamilies) || size(self.ipFamilies) < 2 || (has(self.ipFamilyPolicy) && self.ipFamilyPolicy != 'SingleStack')",message="two ipFamilies need ipFamilyPolicy PreferDualStack or RequireDualStack"
type ServiceSpec struct {
	// Type of the Service.
	// +optional
	// +kubebuilder:default=ClusterIP
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	Type corev1.ServiceType `json:"type,omitempty"`
	// Annotations of the Service, for example for a cloud load balancer. Keys
	// under nginx.operator.dev/ are the operator's.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('nginx.operator.dev/'))",message="annotation keys under nginx.operator.dev/ are reserved for the operator"
	Annotations map[string]string `json:"annotations,omitempty"`
	// ExternalTrafficPolicy Local keeps the client's address on the way to
	// nginx: a node sends external traffic only to nginx pods on itself.
	// Cluster (Kubernetes' default) spreads it over every pod but replaces
	// the client's address with a node's. NodePort and LoadBalancer only.
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`
	// LoadBalancerSourceRanges restricts the clients of a load balancer to
	// these CIDRs, where the cloud supports it. LoadBalancer only.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every entry must be a CIDR such as 203.0.113.0/24"
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
	// LoadBalancerClass picks the load balancer implementation. Kubernetes
	// does not let a LoadBalancer Service change it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	LoadBalancerClass string `json:"loadBalancerClass,omitempty"`
	// SessionAffinity ClientIP sends each client to the same pod while it
	// keeps connecting.
	// +optional
	// +kubebuilder:validation:Enum=None;ClientIP
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`
	// IPFamilyPolicy is Kubernetes' SingleStack, PreferDualStack or
	// RequireDualStack. nginx listens on IPv6 when the cluster gives the
	// Service an IPv6 address, and only then: a pod without IPv6 starts.
	// +optional
	// +kubebuilder:validation:Enum=SingleStack;PreferDualStack;RequireDualStack
	IPFamilyPolicy *corev1.IPFamilyPolicy `json:"ipFamilyPolicy,omitempty"`
	// IPFamilies of the Service, the primary first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=IPv4;IPv6
	// +kubebuilder:validation:XValidation:rule="size(self) < 2 || self[0] != self[1]",message="IPv4 and IPv6 may each appear once"
	IPFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
}

// NetworkPolicySpec is who may connect to an instance's pods, beyond the
// operator (see NginxOperatorSpec.NetworkPolicy).
type NetworkPolicySpec struct {
	// From are the peers that may connect to nginx's ports; empty admits
	// every source, as the instance's Service does.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	From []networkingv1.NetworkPolicyPeer `json:"from,omitempty"`
	// MetricsFrom are the peers that may scrape the pods' metrics, such as
	// Prometheus' pods for an NginxMonitor: the exporter's port
	// (spec.metrics) and the reloader's. Empty admits none but the
	// operator's own pods to the reloader's port.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	MetricsFrom []networkingv1.NetworkPolicyPeer `json:"metricsFrom,omitempty"`
}
