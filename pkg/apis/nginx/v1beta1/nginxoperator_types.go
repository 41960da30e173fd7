// The NginxOperator kind: its spec and status, the metadata of its
// children, and the Service ports its status reports.

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxWorkerProcesses bounds the nginx workers a CPU limit asks for. nginx
// keeps at most 1,024 processes, and a reload runs the new workers beside
// the old ones until those finish their requests: 128 leaves room for
// several reloads in a row, and few nodes have more CPUs.
const MaxWorkerProcesses = 128

// NginxOperatorSpec is the desired state of one nginx instance.
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.servers) || self.config.servers.all(s, has(self.ports) && self.ports.exists(p, p.name == s.port))",message="every config.servers[].port must be the name of one of spec.ports"
// +kubebuilder:validation:XValidation:rule="!has(self.content) || !(has(self.content.configMaps) && size(self.content.configMaps) > 0 && has(self.content.volumeClaimTemplate))",message="content.configMaps and content.volumeClaimTemplate cannot be combined: choose static content from ConfigMaps or persistent per-replica content"
// +kubebuilder:validation:XValidation:rule="!has(self.restore) || (has(self.content) && has(self.content.volumeClaimTemplate))",message="restore needs content.volumeClaimTemplate: a backup is restored into the persistent content volume"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || !has(self.metrics.enabled) || !self.metrics.enabled || !has(self.ports) || !self.ports.exists(p, p.name == 'metrics')",message="the port name metrics is the exporter's when metrics.enabled is true: rename the port"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.servers) || !has(self.ports) || self.config.servers.all(s, !has(s.tls) || !self.ports.exists(p, p.name == s.port && has(p.h2c) && p.h2c))",message="h2c is for plain-text ports: a port with TLS servers offers HTTP/2 by ALPN (see config.disableHTTP2)"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, !has(p.nodePort)) || (has(self.service) && has(self.service.type) && self.service.type in ['NodePort', 'LoadBalancer'])",message="ports[].nodePort needs service.type NodePort or LoadBalancer: a ClusterIP Service has no node ports"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.servers) || !has(self.ports) || self.config.servers.all(s, !self.ports.exists(p, p.name == s.port && p.protocol == 'UDP'))",message="servers speak HTTP over TCP: a config.servers[].port cannot be a UDP port"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.streams) || self.config.streams.all(s, has(self.ports) && self.ports.exists(p, p.name == s.port))",message="every config.streams[].port must be the name of one of spec.ports"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.streams) || !has(self.ports) || self.config.streams.all(s, !self.ports.exists(p, p.name == s.port && p.protocol == 'UDP') || (!has(s.serverNames) && !has(s.tls) && !(has(s.proxyProtocol) && s.proxyProtocol)))",message="a stream on a UDP port relays datagrams: serverNames, tls and proxyProtocol are for TCP ports"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.streams) || !has(self.ports) || self.config.streams.all(s, !has(s.expectedResponses) || self.ports.exists(p, p.name == s.port && p.protocol == 'UDP'))",message="expectedResponses counts the datagrams a backend answers with: it is for streams on UDP ports"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.streams) || self.config.streams.all(s, has(s.serverNames) || self.config.streams.exists_one(t, t.port == s.port && !has(t.serverNames)))",message="a port can have only one stream without serverNames"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.streams) || !has(self.config.servers) || self.config.streams.all(t, has(t.serverNames) || !self.config.servers.exists(s, s.port == t.port))",message="a stream without serverNames takes every connection of its port: it cannot share the port with servers (give the stream serverNames to pass TLS connections through by name)"
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !has(self.config.streams) || !has(self.config.servers) || self.config.servers.all(s, has(s.tls) || !self.config.streams.exists(t, t.port == s.port))",message="servers that share a port with streams must use TLS: nginx sends each connection to a stream or to the servers by its TLS server name"
// +kubebuilder:validation:XValidation:rule="(has(self.config) && ((has(self.config.servers) && size(self.config.servers) > 0) || (has(self.config.streams) && size(self.config.streams) > 0))) || !has(self.ports) || self.ports[0].protocol != 'UDP'",message="without servers or streams, nginx's default HTTP server listens on the first port: it must be a TCP port"
type NginxOperatorSpec struct {
	// Replicas is the number of nginx pods; the scale subresource reads and
	// writes it, so a HorizontalPodAutoscaler may target the NginxOperator when
	// it is set. Leave it unset to let something else scale the StatefulSet
	// directly; the operator then never changes the StatefulSet's replicas.
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

	// ImagePullSecrets name Secrets in this namespace used to pull the
	// images; each name is a Secret's (a DNS subdomain).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Ports are the ports nginx listens on, with the field names of a Pod's
	// container ports. Servers refer to them by name. Ports below 1024 are
	// refused: nginx runs unprivileged.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:default={{name: http, containerPort: 8080}}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.containerPort == p.containerPort && (has(q.protocol) && q.protocol == 'UDP') == (has(p.protocol) && p.protocol == 'UDP')))",message="containerPort values must be unique among the ports of one protocol"
	// +kubebuilder:validation:XValidation:rule="self.all(p, !has(p.servicePort) || self.exists_one(q, has(q.servicePort) && q.servicePort == p.servicePort && (has(q.protocol) && q.protocol == 'UDP') == (has(p.protocol) && p.protocol == 'UDP')))",message="servicePort values must be unique among the ports of one protocol"
	// +kubebuilder:validation:XValidation:rule="self.all(p, !has(p.servicePort) || self.all(q, has(q.servicePort) || q.containerPort != p.servicePort || (has(q.protocol) && q.protocol == 'UDP') != (has(p.protocol) && p.protocol == 'UDP')))",message="a servicePort may not be the containerPort of a port without servicePort, whose Service port may be its containerPort: set that port's servicePort too"
	// +kubebuilder:validation:XValidation:rule="self.all(p, !has(p.nodePort) || self.exists_one(q, has(q.nodePort) && q.nodePort == p.nodePort && (has(q.protocol) && q.protocol == 'UDP') == (has(p.protocol) && p.protocol == 'UDP')))",message="nodePort values must be unique among the ports of one protocol"
	Ports []Port `json:"ports,omitempty"`

	// ForceRedeploy rolls every pod whenever its value changes; any string
	// will do, without the control characters DEL and U+0080 to U+009F,
	// which the API server's YAML decoding refuses in the StatefulSet's pod
	// template, where the value goes.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^\x7f-\x9f]*$`
	ForceRedeploy string `json:"forceRedeploy,omitempty"`

	// Paused stops the operator from reconciling this instance. Deletion still proceeds.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Config is the nginx configuration, rendered by the operator into nginx.conf.
	// +optional
	Config NginxConfig `json:"config,omitempty"`

	// Content is what nginx serves from its document root.
	// +optional
	Content Content `json:"content,omitempty"`

	// Restore seeds every replica's persistent content volume from a backup
	// before nginx starts. Each pod restores a given id once: restarts keep
	// the content, and a new id restores again (and rolls the pods).
	// +optional
	Restore *RestoreSpec `json:"restore,omitempty"`

	// Metrics turns on nginx's stub_status (loopback only) for the exporter sidecar.
	// +optional
	Metrics MetricsSpec `json:"metrics,omitempty"`

	// Service configures the client Service in front of the pods.
	// +optional
	Service ServiceSpec `json:"service,omitempty"`

	// PodDisruptionBudget, when set, limits voluntary disruptions of the pods.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// NetworkPolicy, when set, has the operator create a NetworkPolicy that
	// admits connections to the pods: to nginx's ports (spec.ports) from
	// every source or the peers listed in from, to the reloader's port
	// (18082) from the operator's pods, which read each pod's status there,
	// and to the metrics ports (the exporter's and the reloader's) from the
	// peers in metricsFrom. In a namespace whose policies deny ingress by
	// default, it keeps clients, the status and scraping working; kubelet
	// probes come from the node, which NetworkPolicies always admit. A
	// cluster whose network plugin does not enforce NetworkPolicies ignores
	// it. Removing the field deletes the policy.
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// Resources of the nginx container. nginx runs one worker process per
	// CPU of limits.cpu, rounded up, and at most 128; without a CPU limit,
	// one per CPU of the node.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Pod holds scheduling settings, metadata and the stop grace period of
	// the nginx pods.
	// +optional
	Pod PodSettings `json:"pod,omitempty"`

	// ChildMetadata are labels and annotations for every object the
	// operator makes for the instance: its StatefulSet and pods, Services,
	// ServiceAccount, config Secret, PodDisruptionBudget and NetworkPolicy
	// (not the persistent volume claims, whose template a StatefulSet
	// cannot change). A Gateway's instance carries the Gateway's
	// spec.infrastructure labels and annotations here. The operator's own
	// labels and annotations win on conflict, and pod.labels,
	// pod.annotations and service.annotations win over these on the pods
	// and the Service. A change rolls the pods.
	// +optional
	ChildMetadata ChildMetadata `json:"childMetadata,omitempty"`
}

// ChildMetadata are labels and annotations the operator adds to the
// objects it makes.
type ChildMetadata struct {
	// Labels added to every child. Keys under nginx.operator.dev/ are the
	// operator's.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('nginx.operator.dev/'))",message="label keys under nginx.operator.dev/ are reserved for the operator"
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to every child. Keys under nginx.operator.dev/ are
	// the operator's.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('nginx.operator.dev/'))",message="annotation keys under nginx.operator.dev/ are reserved for the operator"
	Annotations map[string]string `json:"annotations,omitempty"`
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
	// UpdatedReplicas is the number of nginx pods running the current pod
	// template (image, resources, ports, volumes and pod settings).
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`
	// LoadedReplicas is the number of nginx pods whose nginx serves
	// configHash, as each pod's reloader reports it: a new configuration is
	// loaded in place, without a new pod. Unset when the operator does not
	// read the pods (--read-pod-status=false).
	// +optional
	LoadedReplicas *int32 `json:"loadedReplicas,omitempty"`
	// Selector is the label selector of this instance's pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// ConfigHash identifies the current rendered nginx.conf.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`
	// Restore is the last spec.restore every replica completed; the Restored
	// condition reports one under way or failed.
	// +optional
	Restore *RestoreSpec `json:"restore,omitempty"`
	// Upstreams are the Service ports the proxy locations and streams send to, and
	// where nginx sends each: how many ready endpoints (pods), or the one
	// address of an ExternalName Service. (Atomic, not a map by Service
	// and port: the operator alone writes it, and one Service name and
	// port may appear twice, in two namespaces or for TCP and UDP.)
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	Upstreams []UpstreamStatus `json:"upstreams,omitempty"`
	// Routing is what the instance serves when a Gateway controls it, in
	// all and route by route; unset otherwise.
	// +optional
	Routing *RoutingStatus `json:"routing,omitempty"`
	// Conditions: Available, Progressing, Degraded, Reconciled and, with
	// spec.restore, Restored.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// UpstreamStatus is where nginx sends the requests for one Service port.
type UpstreamStatus struct {
	// Service is the name of the proxied Service.
	Service string `json:"service"`
	// Namespace is the Service's namespace when it is not the instance's.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Port is the Service's port.
	Port int32 `json:"port"`
	// Protocol of the Service's port: UDP for a stream on a UDP port,
	// otherwise unset (TCP).
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`
	// Endpoints is how many ready endpoints of the Service nginx sends the
	// port's requests to; with none, the locations that only send there
	// answer 503.
	Endpoints int32 `json:"endpoints"`
	// Address is the one host and port nginx connects to instead of
	// endpoints: an ExternalName Service's target, or the cluster address
	// of a Service a location sends to with useClusterIP.
	// +optional
	Address string `json:"address,omitempty"`
}

// NginxOperator is an nginx deployment: a StatefulSet, its Services and a
// generated nginx.conf, managed by nginx-operator.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || (size(self.metadata.name) <= 47 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && !self.metadata.name.endsWith('-pods'))",message="metadata.name must be at most 47 characters of lowercase letters, digits and '-', start with a letter and not end with '-pods': it names the instance's Service, StatefulSet and pods, and <name>-pods is its headless Service",optionalOldSelf=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ngx,categories=nginx
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`,description="Ready replicas"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Loaded",type=integer,JSONPath=`.status.loadedReplicas`,description="Replicas serving the current configuration"
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].reason`,priority=1
// +kubebuilder:printcolumn:name="Routes",type=integer,JSONPath=`.status.routing.routes`,priority=1,description="Routes a Gateway's instance serves"
// +kubebuilder:printcolumn:name="Locations",type=integer,JSONPath=`.status.routing.locations`,priority=1,description="Locations of a Gateway's instance"
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
