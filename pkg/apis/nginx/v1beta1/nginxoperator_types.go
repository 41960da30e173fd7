package v1beta1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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

// RestoreSpec names one artifact of an NginxBackup.
type RestoreSpec struct {
	// Backup is the name of an NginxBackup in this namespace; its destination
	// and spec.instance locate the artifact, so an instance can be seeded from
	// another instance's backups.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Backup string `json:"backup"`
	// ID of the backup run, as listed in the NginxBackup's status.backups[].id
	// (for example 20261122T030000.000000000Z-1a2b3c4d).
	// +kubebuilder:validation:Pattern=`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{8}$`
	ID string `json:"id"`
}

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

// NginxConfig is the typed nginx configuration. Every value is rendered as a
// quoted argument: no field can add a directive of its own.
// +kubebuilder:validation:XValidation:rule="!has(self.servers) || self.servers.all(s, self.servers.all(t, s.port != t.port || has(s.tls) == has(t.tls)))",message="servers on one port must all use TLS or all not: nginx cannot serve both on one port"
// +kubebuilder:validation:XValidation:rule="!has(self.servers) || self.servers.all(s, !has(s.defaultServer) || !s.defaultServer || self.servers.exists_one(t, t.port == s.port && has(t.defaultServer) && t.defaultServer))",message="a port can have only one server with defaultServer: true"
// +kubebuilder:validation:XValidation:rule="!has(self.realIP) || (has(self.trustedProxies) && size(self.trustedProxies) > 0)",message="realIP needs trustedProxies: nginx takes the client address only from the hops listed there"
type NginxConfig struct {
	NginxSettings `json:",inline"`

	// Servers are nginx's virtual servers. With none (and no streams), one
	// server on the first port serves the content at /.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Servers []Server `json:"servers,omitempty"`

	// Streams relay TCP connections and UDP datagrams to Services, below
	// HTTP (nginx's stream module): a database, a message broker, DNS, or
	// TLS connections passed through by their server name to a backend
	// that terminates them itself.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Streams []Stream `json:"streams,omitempty"`
}

// NginxSettings tune nginx for all its servers: the settings of
// spec.config besides the servers, which a Gateway's instance takes from
// NginxGatewayParameters.
type NginxSettings struct {
	// WorkerConnections is nginx's worker_connections.
	// +optional
	// +kubebuilder:default=1024
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=65535
	WorkerConnections int32 `json:"workerConnections,omitempty"`

	// ClientMaxBodySize is nginx's client_max_body_size, such as 1m or 512k; 0 disables the check.
	// +optional
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}[kKmMgG]?$`
	ClientMaxBodySize string `json:"clientMaxBodySize,omitempty"`

	// ClientBodyBufferKiB is the memory a request body is read into
	// (client_body_buffer_size; ingress-nginx's client-body-buffer-size):
	// a longer body is written to a file on the pod's scratch volume
	// first. Unset: nginx's 16 KiB.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	ClientBodyBufferKiB int32 `json:"clientBodyBufferKiB,omitempty"`

	// ClientHeaderBuffers hold a request line and headers longer than
	// 1 KiB (large_client_header_buffers; ingress-nginx's
	// large-client-header-buffers). Unset: nginx's four of 8 KiB.
	// +optional
	ClientHeaderBuffers *ClientHeaderBuffers `json:"clientHeaderBuffers,omitempty"`

	// KeepaliveTimeoutSeconds is nginx's keepalive_timeout.
	// +optional
	// +kubebuilder:default=65
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	KeepaliveTimeoutSeconds int32 `json:"keepaliveTimeoutSeconds,omitempty"`

	// TrustedProxies are the addresses (CIDRs) of the hops in front of nginx,
	// such as a cloud load balancer or a TLS-terminating proxy. A request from
	// one of them keeps its X-Forwarded-For, -Proto, -Host and -Port on the way
	// to a proxied Service; from any other client nginx replaces them with
	// what it saw itself, so a client cannot claim to have used HTTPS.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every entry must be a CIDR such as 10.0.0.0/8 or fd00::/8"
	TrustedProxies []string `json:"trustedProxies,omitempty"`

	// RealIP makes nginx take the client's address from what a trusted
	// proxy (spec.config.trustedProxies) reports, instead of the proxy's own
	// address: for access control, rate limits, logs and the X-Real-IP and
	// X-Forwarded-For headers sent to Services (ingress-nginx's
	// use-forwarded-headers and use-proxy-protocol).
	// +optional
	RealIP *RealIP `json:"realIP,omitempty"`

	// DisableHTTP2 turns HTTP/2 off on the TLS servers, which otherwise offer
	// it to clients by ALPN next to HTTP/1.1 (NGINX Gateway Fabric's
	// disableHTTP2). nginx negotiates it per port, so it is one setting for
	// every server.
	// +optional
	DisableHTTP2 bool `json:"disableHTTP2,omitempty"`

	// TLS is the TLS policy of every server with tls: protocols, ciphers and
	// the session cache. nginx chooses the protocol before it knows the
	// server a client asks for, so these cannot differ between servers.
	// +optional
	TLS TLSPolicy `json:"tls,omitempty"`

	// Gzip compresses responses of the listed types for clients that accept
	// it, and adds Vary: Accept-Encoding. Unset: no compression; gzip: {}
	// turns it on with the defaults.
	// +optional
	Gzip *Gzip `json:"gzip,omitempty"`

	// AccessLog sets the format of the access log nginx writes to its
	// standard output.
	// +optional
	AccessLog AccessLog `json:"accessLog,omitempty"`
}

// MaxServers and MaxLocations are the most servers an instance has and the
// most locations a server has: the maxItems of NginxConfig.Servers and
// Server.Locations (the markers above them say the same; a test holds the
// CRD to these). The Gateway translator keeps an instance within them.
const (
	MaxServers   = 32
	MaxLocations = 64
)

// Server is one nginx virtual server. Two locations with the same path are
// reported by the controller (condition Degraded, reason InvalidConfig): a
// schema rule comparing every pair would exceed the apiserver's CEL budget.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.issuerRef) || (has(self.serverNames) && self.serverNames.exists(n, n != '_'))",message="tls.issuerRef needs serverNames: the certificate is issued for the server's names"
// +kubebuilder:validation:XValidation:rule="!has(self.redirectToHTTPS) || (!has(self.tls) && (!has(self.locations) || size(self.locations) == 0) && !has(self.ipAccess) && !has(self.basicAuth) && !has(self.rateLimit) && !has(self.connectionLimit))",message="redirectToHTTPS answers every request of the server with a redirect: it cannot be combined with tls, locations, ipAccess, basicAuth, rateLimit or connectionLimit, which would never apply"
type Server struct {
	// Port is the name of the entry of spec.ports this server listens on.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Port string `json:"port"`

	// ServerNames are the host names this server answers; "_" or none: any name.
	// Wildcards are allowed as the first label ("*.example.com").
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(_|(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	ServerNames []string `json:"serverNames,omitempty"`

	// DefaultServer makes this the server for requests no server name matches on its port.
	// +optional
	DefaultServer bool `json:"defaultServer,omitempty"`

	// TLS terminates TLS on this server's port with a certificate from a Secret.
	// +optional
	TLS *TLS `json:"tls,omitempty"`

	// RedirectToHTTPS answers every request with a redirect to the same host,
	// path and query over https (ingress-nginx's ssl-redirect; Gateway API's
	// RequestRedirect with scheme https).
	// +optional
	RedirectToHTTPS *HTTPSRedirect `json:"redirectToHTTPS,omitempty"`

	// ErrorPages replace the body of nginx's error responses with a page from
	// the content, keeping the status code (ingress-nginx's
	// custom-http-errors). Responses of a proxied Service are replaced too
	// where its location sets proxy.interceptErrors.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ErrorPages []ErrorPage `json:"errorPages,omitempty"`

	// IPAccess allows or denies clients by address in every location of the
	// server that has no ipAccess of its own.
	// +optional
	IPAccess *IPAccess `json:"ipAccess,omitempty"`

	// BasicAuth asks for a user name and password in every location of the
	// server that has no basicAuth of its own.
	// +optional
	BasicAuth *HTTPBasicAuth `json:"basicAuth,omitempty"`

	// ExternalAuth asks an authentication service about every request of
	// the server's locations that have no externalAuth of their own.
	// +optional
	ExternalAuth *ExternalAuth `json:"externalAuth,omitempty"`

	// RateLimit limits the requests of each client in every location of the
	// server that has no rateLimit of its own.
	// +optional
	RateLimit *RateLimit `json:"rateLimit,omitempty"`

	// ConnectionLimit limits the requests each client has in progress in
	// every location of the server that has no connectionLimit of its own.
	// +optional
	ConnectionLimit *ConnectionLimit `json:"connectionLimit,omitempty"`

	// ClientMaxBodySize overrides spec.config.clientMaxBodySize in this
	// server, such as 0 (no limit) for a registry; a location's own wins.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}[kKmMgG]?$`
	ClientMaxBodySize string `json:"clientMaxBodySize,omitempty"`

	// ClientBodyBufferKiB overrides spec.config.clientBodyBufferKiB in
	// this server; a location's own wins.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	ClientBodyBufferKiB int32 `json:"clientBodyBufferKiB,omitempty"`

	// ClientHeaderBuffers overrides spec.config.clientHeaderBuffers for the
	// requests of this server. nginx reads a request line with the buffers
	// of the port's default server, and the headers with this server's
	// once it knows the server: from the TLS handshake's SNI, or from the
	// Host header, which clients send first.
	// +optional
	ClientHeaderBuffers *ClientHeaderBuffers `json:"clientHeaderBuffers,omitempty"`

	// Locations route requests by path. With none, / serves the content.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Locations []Location `json:"locations,omitempty"`
}

// HTTPSRedirect sends plain-HTTP clients to https.
type HTTPSRedirect struct {
	// Port of the https URL. Unset: the Service port of the instance's port
	// with TLS servers (see ports[].servicePort), when exactly one port has
	// them, else 443; 443, the scheme's default, the URL leaves out. An
	// instance whose Service keeps its containerPorts (see
	// ports[].servicePort) redirects to 443 as before, unless its TLS port
	// sets servicePort.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
	// Code is the redirect's HTTP status. 308 keeps the method and body of a
	// POST; 301 is what old clients know.
	// +optional
	// +kubebuilder:default=308
	// +kubebuilder:validation:Enum=301;302;303;307;308
	Code int32 `json:"code,omitempty"`
}

// ErrorPage serves a file of the content for some status codes.
type ErrorPage struct {
	// Codes are the HTTP status codes (400 to 599, but 499) the page is for.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(c, c >= 400 && c <= 599 && c != 499)",message="codes must be from 400 to 599 except 499, nginx's log entry for a client that closed the connection (never a response: nginx refuses a page for it)"
	Codes []int32 `json:"codes"`
	// Path of the page in the content, such as /errors/404.html. The client
	// gets it with the original status code.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`
	Path string `json:"path"`
}

// TLS names the certificate of a server.
type TLS struct {
	// SecretName is a kubernetes.io/tls Secret in this namespace (keys tls.crt and tls.key).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName"`

	// HSTS sends Strict-Transport-Security on every response of the server:
	// browsers then use only https for the host.
	// +optional
	HSTS *HSTS `json:"hsts,omitempty"`

	// ClientCertificates makes nginx ask every client for a certificate and
	// refuse a request without one that the CA signed (mutual TLS;
	// ingress-nginx's auth-tls-secret).
	// +optional
	ClientCertificates *ClientCertificates `json:"clientCertificates,omitempty"`

	// IssuerRef asks cert-manager for the certificate: the operator applies a
	// cert-manager.io/v1 Certificate named after secretName, for the
	// serverNames of every server that names this Secret and this issuer,
	// and cert-manager writes the Secret and renews it; nginx serves each
	// renewal in place. Needs cert-manager: where its API is not served,
	// condition CertificatesReady says so. ingress-nginx's
	// cert-manager.io/issuer and cert-manager.io/cluster-issuer annotations.
	// +optional
	IssuerRef *IssuerRef `json:"issuerRef,omitempty"`
}

// IssuerRef names the cert-manager issuer of a server's certificate, and
// how long the certificate lives.
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || duration(self.duration) >= duration('1h')",message="duration must be at least 1h, the shortest certificate cert-manager issues"
// +kubebuilder:validation:XValidation:rule="!has(self.renewBefore) || duration(self.renewBefore) >= duration('5m')",message="renewBefore must be at least 5m, as cert-manager requires"
// +kubebuilder:validation:XValidation:rule="!has(self.renewBefore) || duration(self.renewBefore) < duration(has(self.duration) ? self.duration : '2160h')",message="renewBefore must be shorter than duration (cert-manager's default duration is 2160h, 90 days)"
type IssuerRef struct {
	// Name of the Issuer (in this namespace) or ClusterIssuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Kind of the issuer: Issuer, ClusterIssuer, or an external issuer's
	// kind (with its group).
	// +optional
	// +kubebuilder:default=Issuer
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Kind string `json:"kind,omitempty"`

	// Group of the issuer's API: cert-manager.io for cert-manager's own
	// issuers, another for an external issuer.
	// +optional
	// +kubebuilder:default=cert-manager.io
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Group string `json:"group,omitempty"`

	// Duration the certificate is valid for, in hours, minutes and seconds
	// ("2160h"); cert-manager's default, 90 days, when empty.
	// ingress-nginx's cert-manager.io/duration annotation.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]{1,7}(h|m|s))+$`
	Duration string `json:"duration,omitempty"`

	// RenewBefore is how long before it expires cert-manager renews the
	// certificate ("720h"); cert-manager's default, a third of its
	// duration, when empty. ingress-nginx's cert-manager.io/renew-before
	// annotation.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]{1,7}(h|m|s))+$`
	RenewBefore string `json:"renewBefore,omitempty"`
}

// HSTS is the Strict-Transport-Security header of a TLS server.
// +kubebuilder:validation:XValidation:rule="!has(self.preload) || !self.preload || (has(self.includeSubDomains) && self.includeSubDomains && self.maxAgeSeconds >= 31536000)",message="preload needs includeSubDomains and a maxAgeSeconds of at least 31536000 (one year), as the browsers' preload lists require"
type HSTS struct {
	// MaxAgeSeconds is how long a browser remembers to use only https; 0
	// makes it forget.
	// +optional
	// +kubebuilder:default=31536000
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=63072000
	MaxAgeSeconds *int32 `json:"maxAgeSeconds,omitempty"`
	// IncludeSubDomains extends the rule to every subdomain of the host.
	// +optional
	IncludeSubDomains bool `json:"includeSubDomains,omitempty"`
	// Preload asks to be listed in the browsers' built-in HSTS lists.
	// +optional
	Preload bool `json:"preload,omitempty"`
}

// ClientCertificates verifies clients' certificates.
type ClientCertificates struct {
	// CACertificate holds the PEM certificates of the CAs a client's
	// certificate must chain to. It is mounted into the pods.
	CACertificate CACertificateRef `json:"caCertificate"`
	// VerifyDepth is the longest chain accepted: 1 for certificates the CA
	// signed itself, more for intermediate CAs.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	VerifyDepth int32 `json:"verifyDepth,omitempty"`
}

// TLSPolicy is how every TLS server negotiates with clients.
type TLSPolicy struct {
	// Protocols the servers accept. TLS 1.0 and 1.1 are not offered: they
	// are deprecated (RFC 8996).
	// +optional
	// +listType=set
	// +kubebuilder:default={TLSv1.2,TLSv1.3}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=TLSv1.2;TLSv1.3
	Protocols []string `json:"protocols,omitempty"`
	// Ciphers the servers accept for TLS 1.2, in OpenSSL's names; TLS 1.3
	// always uses its own safe suites. The choice is limited to ciphers with
	// forward secrecy and authenticated encryption; the default is all of them.
	// +optional
	// +listType=set
	// +kubebuilder:default={ECDHE-ECDSA-AES128-GCM-SHA256,ECDHE-RSA-AES128-GCM-SHA256,ECDHE-ECDSA-AES256-GCM-SHA384,ECDHE-RSA-AES256-GCM-SHA384,ECDHE-ECDSA-CHACHA20-POLY1305,ECDHE-RSA-CHACHA20-POLY1305,DHE-RSA-AES128-GCM-SHA256,DHE-RSA-AES256-GCM-SHA384}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Enum=ECDHE-ECDSA-AES128-GCM-SHA256;ECDHE-RSA-AES128-GCM-SHA256;ECDHE-ECDSA-AES256-GCM-SHA384;ECDHE-RSA-AES256-GCM-SHA384;ECDHE-ECDSA-CHACHA20-POLY1305;ECDHE-RSA-CHACHA20-POLY1305;DHE-RSA-AES128-GCM-SHA256;DHE-RSA-AES256-GCM-SHA384
	Ciphers []string `json:"ciphers,omitempty"`
	// SessionCacheMiB is the size of the session cache the workers of a pod
	// share, so a returning client skips the full handshake; one MiB holds
	// about 4,000 sessions.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	SessionCacheMiB int32 `json:"sessionCacheMiB,omitempty"`
	// SessionTimeoutMinutes is how long a cached session may be resumed.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1440
	SessionTimeoutMinutes int32 `json:"sessionTimeoutMinutes,omitempty"`
}

// RealIP names where a trusted proxy reports the client's address: set
// exactly one of header and proxyProtocol.
// +kubebuilder:validation:XValidation:rule="has(self.header) != (has(self.proxyProtocol) && self.proxyProtocol)",message="set header or proxyProtocol: true, not both"
type RealIP struct {
	// Header carrying the client's address, such as X-Forwarded-For (whose
	// last address not in trustedProxies is taken) or X-Real-IP.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9-]+$`
	Header string `json:"header,omitempty"`
	// ProxyProtocol makes every server's port expect the PROXY protocol
	// (v1 or v2) in front of each connection, as a load balancer sends it
	// when told to. Clients that connect without it, in-cluster ones
	// included, are refused.
	// +optional
	ProxyProtocol bool `json:"proxyProtocol,omitempty"`
}

// Gzip is response compression.
type Gzip struct {
	// Types are the MIME types compressed; text/html always is.
	// +optional
	// +listType=set
	// +kubebuilder:default={text/css,text/plain,text/javascript,application/javascript,application/json,application/xml,image/svg+xml}
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=127
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9][-a-z0-9.+_]*/[a-z0-9][-a-z0-9.+_]*$`
	Types []string `json:"types,omitempty"`
	// MinLengthBytes: shorter responses (by Content-Length) are sent as
	// they are, since compressing them saves little.
	// +optional
	// +kubebuilder:default=1024
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10485760
	MinLengthBytes int32 `json:"minLengthBytes,omitempty"`
	// Level from 1 (fastest) to 9 (smallest).
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	Level int32 `json:"level,omitempty"`
}

// AccessLog is the format of nginx's access log.
type AccessLog struct {
	// Format is Combined (nginx's and Apache's combined format) or JSON: one
	// object per request with the fields time, request_id, method, uri,
	// status, bytes, request_time, upstream_time, client_ip, user_agent,
	// host and protocol (Documentation/nginxoperator.md lists their types).
	// +optional
	// +kubebuilder:default=Combined
	// +kubebuilder:validation:Enum=Combined;JSON
	Format string `json:"format,omitempty"`
}

// IPAccess allows and denies clients by address (nginx's allow and deny):
// a client in deny is refused with 403; with allow set, so is every client
// not in it. The address is the client's as spec.config.realIP finds it.
// +kubebuilder:validation:XValidation:rule="has(self.allow) || has(self.deny)",message="set allow, deny or both"
type IPAccess struct {
	// Allow lists the CIDRs allowed; unset: every address not denied.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every entry must be a CIDR such as 10.0.0.0/8, 192.0.2.7/32 or fd00::/8"
	Allow []string `json:"allow,omitempty"`
	// Deny lists the CIDRs refused, even when allow covers them.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every entry must be a CIDR such as 10.0.0.0/8, 192.0.2.7/32 or fd00::/8"
	Deny []string `json:"deny,omitempty"`
}

// HTTPBasicAuth is HTTP basic authentication against an htpasswd file in a
// Secret. The Secret is mounted into the pods and never rendered into
// nginx.conf; nginx reads the file on every request, so a changed password
// applies once the kubelet has updated the mounted Secret, without a reload.
// +kubebuilder:validation:XValidation:rule="(has(self.disabled) && self.disabled) || has(self.secretName)",message="secretName is required unless disabled is true"
type HTTPBasicAuth struct {
	// SecretName is a Secret in this namespace with an htpasswd file
	// (bcrypt, SHA or apr1 hashes, as htpasswd writes them).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName,omitempty"`
	// Key of the htpasswd file in the Secret (ingress-nginx's auth-secret
	// uses "auth").
	// +optional
	// +kubebuilder:default=auth
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..'",message="key cannot be . or .."
	Key string `json:"key,omitempty"`
	// Realm is shown by the browser when it asks for the password.
	// +optional
	// +kubebuilder:default=Restricted
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[^\x00-\x1f\x7f$"\\]*$`
	// +kubebuilder:validation:XValidation:rule="self != 'off'",message="realm cannot be off: nginx reads it as turning authentication off"
	Realm string `json:"realm,omitempty"`
	// Disabled turns off the server's basicAuth in a location, such as a
	// public health page.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// ExternalAuth asks an authentication service whether to serve each request
// (nginx's auth_request; ingress-nginx's auth-url; Envoy Gateway's
// SecurityPolicy extAuth). The service gets a GET of its own for every
// request, without the body, with the client's headers and
// X-Original-URL, X-Original-Method, X-Forwarded-Uri and X-Forwarded-Method
// (and the X-Forwarded-* a proxied Service gets). A 2xx answer lets the
// request through, with the answer's responseHeaders; 401 and 403 go to
// the client (401 as a redirect to signIn where set); any other answer, or
// none in timeoutSeconds (the service down), is answered 500. The limits
// count a request before the service is asked; ipAccess and basicAuth
// apply as well: a request must pass all of them.
// +kubebuilder:validation:XValidation:rule="(has(self.disabled) && self.disabled) ? !has(self.service) && !has(self.namespace) && !has(self.path) && !has(self.tls) : has(self.service)",message="set service and port; with disabled: true, none of service, namespace, path and tls"
// +kubebuilder:validation:XValidation:rule="has(self.service) == has(self.port)",message="service and port go together"
type ExternalAuth struct {
	// Service is the name of a Service in this namespace, reached at its
	// ready pods as a proxy location's. A service outside the cluster is
	// named by an ExternalName Service (nginx resolves its name when it
	// loads the configuration, as for a proxy location).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Service string `json:"service,omitempty"`
	// Namespace is the Service's namespace when it is not this one, with
	// that namespace's consent as for a backend's (see Backend.namespace).
	// An instance a Gateway owns may also use the Service of an
	// NginxExternalAuth that an HTTPRoute attached to the Gateway names,
	// in the route's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Port of the Service.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
	// Path the Service answers the checks at. Unset: /.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`
	Path string `json:"path,omitempty"`
	// TLS connects to the service over HTTPS: hostname and caCertificate
	// as a proxy location's. Without caCertificate the certificate is not
	// checked.
	// +optional
	TLS *BackendTLS `json:"tls,omitempty"`
	// ResponseHeaders are headers of the service's 2xx answer set on the
	// request sent to the location's Service, such as X-Auth-Request-User
	// (ingress-nginx's auth-response-headers). A header the answer lacks
	// is removed from the request: a client cannot send its own.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9-]+$`
	ResponseHeaders []string `json:"responseHeaders,omitempty"`
	// SignIn answers a request the service refuses with 401 by a redirect
	// to a sign-in page, which gets the request's URL in a query parameter
	// (ingress-nginx's auth-signin). gRPC locations answer 401 with
	// their status instead.
	// +optional
	SignIn *ExternalAuthSignIn `json:"signIn,omitempty"`
	// Cache keeps the service's answers (2xx, 401 and 403) for a while per
	// key, so that a client's requests do not each ask the service
	// (ingress-nginx's auth-cache-key and auth-cache-duration).
	// +optional
	Cache *ExternalAuthCache `json:"cache,omitempty"`
	// TimeoutSeconds bounds connecting to the service and each wait for
	// its answer.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=60
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// Disabled turns off the server's externalAuth in a location, such as
	// a public page or the sign-in callback.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// ExternalAuthSignIn is where a client without valid credentials is sent.
type ExternalAuthSignIn struct {
	// URL of the sign-in page, such as
	// https://auth.example.com/oauth2/start; it may have a query.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[A-Za-z0-9._~!&'()*+,=:@%/-]*)?(\?[A-Za-z0-9._~!&'()*+,=:@%/?-]*)?$`
	URL string `json:"url"`
	// RedirectParameter is the query parameter that carries the request's
	// URL, percent-encoded: rd, as oauth2-proxy reads it.
	// +optional
	// +kubebuilder:default=rd
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9._~-]+$`
	RedirectParameter string `json:"redirectParameter,omitempty"`
}

// ExternalAuthCache keeps an authentication service's answers.
type ExternalAuthCache struct {
	// Key are the parts of a request that carry its credentials, such as
	// the Authorization header or the session cookie: answers are kept per
	// combination of their values. Requests with the same values get the
	// same answer, so the key must hold everything the service decides by.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Key []RequestKey `json:"key"`
	// DurationSeconds an answer is kept.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	DurationSeconds int32 `json:"durationSeconds"`
}

// RateLimit limits each client (by address, see spec.config.realIP, or by
// key) to a rate, with room for a burst; requests beyond it get 429 Too Many
// Requests. Each limit keeps its counters in a zone of shared memory in
// every pod: with several replicas, each pod counts what it serves.
// +kubebuilder:validation:XValidation:rule="has(self.requestsPerSecond) != has(self.requestsPerMinute)",message="set requestsPerSecond or requestsPerMinute"
// +kubebuilder:validation:XValidation:rule="!has(self.exempt) || !has(self.exempt.keys) || (has(self.key) && self.key.source != 'ClientIP')",message="exempt.keys are values of a Header or Cookie key: set key"
type RateLimit struct {
	// RequestsPerSecond each client may make.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	RequestsPerSecond int32 `json:"requestsPerSecond,omitempty"`
	// RequestsPerMinute each client may make, for rates below one a second.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	RequestsPerMinute int32 `json:"requestsPerMinute,omitempty"`
	// Burst is how many requests beyond the rate are served at once before
	// the limit applies (nginx's burst with nodelay).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	Burst int32 `json:"burst,omitempty"`
	// ZoneSizeMiB is the shared memory for the clients' counters; one MiB
	// holds about 16,000 IPv4 or 8,000 IPv6 clients, fewer keys the longer
	// they are. When it is full the oldest clients are forgotten.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	ZoneSizeMiB int32 `json:"zoneSizeMiB,omitempty"`
	// Key is what requests are counted by. Unset: the client's address.
	// +optional
	Key *RequestKey `json:"key,omitempty"`
	// Exempt are requests the limit does not count.
	// +optional
	Exempt *LimitExemptions `json:"exempt,omitempty"`
}

// ConnectionLimit limits the requests each client (or key) has in progress
// at once (nginx's limit_conn; ingress-nginx's limit-connections): one
// more gets 429 Too Many Requests. Each HTTP/2 stream is a request of its
// own. Like a rate limit, it counts per pod.
// +kubebuilder:validation:XValidation:rule="!has(self.exempt) || !has(self.exempt.keys) || (has(self.key) && self.key.source != 'ClientIP')",message="exempt.keys are values of a Header or Cookie key: set key"
type ConnectionLimit struct {
	// Connections is how many requests of one client may be in progress.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Connections int32 `json:"connections"`
	// ZoneSizeMiB is the shared memory for the clients' counts; one MiB
	// holds about 8,000 clients.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	ZoneSizeMiB int32 `json:"zoneSizeMiB,omitempty"`
	// Key is what requests are counted by. Unset: the client's address.
	// +optional
	Key *RequestKey `json:"key,omitempty"`
	// Exempt are requests the limit does not count.
	// +optional
	Exempt *LimitExemptions `json:"exempt,omitempty"`
}

// RequestKey is a part of a request that tells its client: what a rate or
// connection limit counts requests by, such as an API key that many
// clients behind one address share or that one client uses from many; or
// what external authentication's answers are cached by.
// +kubebuilder:validation:XValidation:rule="(self.source == 'ClientIP') != has(self.name)",message="name goes with source Header or Cookie, and only with them"
// +kubebuilder:validation:XValidation:rule="!has(self.name) || self.source != 'Header' || self.name.matches('^[A-Za-z0-9-]+$')",message="header names may hold letters, digits and '-' only: nginx drops a header with '_' in its name"
type RequestKey struct {
	// Source of the key: ClientIP (the client's address, as
	// spec.config.realIP finds it), or the value of a request Header or a
	// Cookie named name. A request without the header or cookie is
	// counted by its client address: leaving the key out does not escape
	// the limit.
	// +kubebuilder:validation:Enum=ClientIP;Header;Cookie
	Source string `json:"source"`
	// Name of the header or cookie; nginx matches either regardless of
	// case.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	Name string `json:"name,omitempty"`
}

// LimitExemptions are requests a limit does not count: they always pass.
// +kubebuilder:validation:XValidation:rule="has(self.clients) || has(self.keys)",message="set clients, keys or both"
type LimitExemptions struct {
	// Clients are CIDRs whose clients (by address, as spec.config.realIP
	// finds it) are not limited (ingress-nginx's limit-whitelist).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every entry must be a CIDR such as 10.0.0.0/8, 192.0.2.7/32 or fd00::/8"
	Clients []string `json:"clients,omitempty"`
	// Keys are values of the limit's header or cookie that are not
	// limited, compared exactly, such as a partner's API key. They are
	// written into nginx.conf: for secrets, prefer clients.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^[!#-~]+$`
	Keys []string `json:"keys,omitempty"`
}

// ClientHeaderBuffers are the buffers of a request's line and headers: a
// request line longer than sizeKiB gets 414 URI Too Long; a header line
// longer, or headers filling all count buffers, get 431 Request Header
// Fields Too Large (nginx's own 400 with "Request Header Or Cookie Too
// Large", which the operator turns into the standard code).
type ClientHeaderBuffers struct {
	// Count of buffers a request may use.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=64
	Count int32 `json:"count,omitempty"`
	// SizeKiB of each buffer: the longest request line or single header.
	// +optional
	// +kubebuilder:default=8
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	SizeKiB int32 `json:"sizeKiB,omitempty"`
}

// Location routes requests under a path to exactly one handler: static,
// proxy, redirect or respond.
// +kubebuilder:validation:XValidation:rule="(has(self.static) ? 1 : 0) + (has(self.proxy) ? 1 : 0) + (has(self.redirect) ? 1 : 0) + (has(self.respond) ? 1 : 0) == 1",message="a location needs exactly one of static, proxy, redirect or respond"
// +kubebuilder:validation:XValidation:rule="!has(self.requestHeaders) || has(self.proxy)",message="requestHeaders needs a proxy location: only a proxied request is sent on"
// +kubebuilder:validation:XValidation:rule="!has(self.requestHeaders) || !has(self.requestHeaders.add) || self.requestHeaders.add.all(h, h.name.matches('^[A-Za-z0-9-]+$'))",message="requestHeaders.add names may hold letters, digits and '-' only: nginx reads a request header's current value through a variable named after it"
// +kubebuilder:validation:XValidation:rule="!has(self.responseHeaders) || has(self.proxy) || (!has(self.responseHeaders.set) && !has(self.responseHeaders.remove))",message="responseHeaders.set and responseHeaders.remove need a proxy location: nginx can only replace or drop a header a Service sent; use responseHeaders.add"
// +kubebuilder:validation:XValidation:rule="!has(self.headers) || !has(self.responseHeaders)",message="headers is the older name of responseHeaders.add: use one of them"
// +kubebuilder:validation:XValidation:rule="has(self.pathType) && self.pathType == 'RegularExpression' || self.path.matches('^/[A-Za-z0-9._~!&\\x27()*+,=:@%/-]*$')",message="path must start with '/' and hold letters, digits and ._~!&'()*+,=:@%/- only (percent-encode the rest); a regular expression needs pathType: RegularExpression",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule="!has(self.exact) || !self.exact || !has(self.pathType) || self.pathType == 'Exact'",message="exact: true is the older spelling of pathType: Exact and cannot go with another pathType"
// +kubebuilder:validation:XValidation:rule="!has(self.pathType) || !(self.pathType in ['Exact', 'RegularExpression']) || !((has(self.redirect) && has(self.redirect.path) && self.redirect.path.type == 'ReplacePrefixMatch') || (has(self.proxy) && has(self.proxy.urlRewrite) && has(self.proxy.urlRewrite.path) && self.proxy.urlRewrite.path.type == 'ReplacePrefixMatch'))",message="ReplacePrefixMatch needs a prefix location: with pathType Exact or RegularExpression use ReplaceFullPath"
// +kubebuilder:validation:XValidation:rule="!has(self.exact) || !self.exact || !((has(self.redirect) && has(self.redirect.path) && self.redirect.path.type == 'ReplacePrefixMatch') || (has(self.proxy) && has(self.proxy.urlRewrite) && has(self.proxy.urlRewrite.path) && self.proxy.urlRewrite.path.type == 'ReplacePrefixMatch'))",message="ReplacePrefixMatch needs a prefix location: with exact: true use ReplaceFullPath"
type Location struct {
	// Path is what the request's path is matched against, as pathType says:
	// a prefix, the exact path, or a regular expression.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[ -~]+$`
	Path string `json:"path"`

	// Name labels the location's requests in the request metrics (label
	// route); unset, they are labelled with the path. Locations may share
	// a name: their requests are counted together. An instance a Gateway
	// owns names each location after its route, as
	// httproute/<namespace>/<name> (at most 327 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=330
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.:/]*[A-Za-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Exact matches the path exactly instead of as a prefix: the older
	// spelling of pathType: Exact.
	// +optional
	Exact bool `json:"exact,omitempty"`

	// PathType is how path matches the request's path, once nginx has
	// decoded it and merged its slashes (Gateway API's path match types).
	// Prefix (unset) is a prefix of the string, as nginx's own locations
	// match: /api matches /api, /api/v1 and /apis. PathPrefix matches
	// element by element: /api matches /api and /api/v1 but not /apis, and
	// a trailing '/' is ignored. Exact is the whole path. RegularExpression
	// is a regular expression (RE2 syntax, which nginx's PCRE reads the
	// same) that must match the whole path.
	//
	// When several locations match a request, the most specific wins, in
	// Gateway API's order: an exact path; then a regular expression, in
	// the order of the list; then the longest prefix; among locations of
	// the same path, one with a method, then the one with more header
	// matches, then the one with more query parameter matches, then the
	// first in the list. A location whose match the request fails is
	// passed over for the next.
	// +optional
	// +kubebuilder:validation:Enum=Prefix;PathPrefix;Exact;RegularExpression
	PathType string `json:"pathType,omitempty"`

	// Match narrows the location to requests that also carry these
	// headers, query parameters and method (Gateway API's HTTPRouteMatch):
	// all of them must match. Several locations may share a path with
	// different matches; a request that matches none of them goes to the
	// next location its path matches, or gets 404.
	// +optional
	Match *RequestMatch `json:"match,omitempty"`

	// Static serves files from the content root.
	// +optional
	Static *StaticLocation `json:"static,omitempty"`

	// Proxy forwards requests to a Service in this namespace.
	// +optional
	Proxy *ProxyLocation `json:"proxy,omitempty"`

	// Redirect answers with a redirect to a fixed URL.
	// +optional
	Redirect *RedirectLocation `json:"redirect,omitempty"`

	// Respond answers every request with a fixed status and body, such as
	// 503 and a maintenance notice, or 403 for a path no client may use.
	// +optional
	Respond *RespondLocation `json:"respond,omitempty"`

	// Headers are added to responses from this location: the older name of
	// responseHeaders.add, kept for existing objects.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Headers []Header `json:"headers,omitempty"`

	// RequestHeaders change the request on its way to the Service (Gateway
	// API's RequestHeaderModifier). Proxy locations only.
	// +optional
	RequestHeaders *HeaderModifier `json:"requestHeaders,omitempty"`

	// ResponseHeaders change the response on its way to the client (Gateway
	// API's ResponseHeaderModifier). add works everywhere; set and remove
	// only act on what a proxied Service sends.
	// +optional
	ResponseHeaders *HeaderModifier `json:"responseHeaders,omitempty"`

	// CORS answers browsers' cross-origin checks here (Gateway API's CORS
	// filter, ingress-nginx's enable-cors and cors-*): nginx answers a
	// preflight (OPTIONS with Origin and Access-Control-Request-Method)
	// itself with 204, and adds Access-Control-Allow-Origin (the request's
	// Origin), -Allow-Credentials and -Expose-Headers to the other
	// responses, replacing what a Service sends of them, for an Origin
	// allowOrigins admits; a request from any other origin gets none of
	// them. A preflight is answered before ipAccess, basicAuth and
	// rateLimit: it carries no credentials.
	// +optional
	CORS *CORS `json:"cors,omitempty"`

	// ClientMaxBodySize overrides spec.config.clientMaxBodySize here, such
	// as 100m for an upload endpoint; 0 disables the check.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}[kKmMgG]?$`
	ClientMaxBodySize string `json:"clientMaxBodySize,omitempty"`

	// ClientBodyBufferKiB overrides the server's clientBodyBufferKiB here.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	ClientBodyBufferKiB int32 `json:"clientBodyBufferKiB,omitempty"`

	// Expires sets the Expires and Cache-Control max-age headers of
	// successful responses (nginx's expires): a time such as 30s, 10m, 12h,
	// 7d, 4w, 6M or 1y; "epoch" to forbid caching; "max" for ten years.
	// +optional
	// +kubebuilder:validation:Pattern=`^(epoch|max|[0-9]{1,8}(s|m|h|d|w|M|y))$`
	Expires string `json:"expires,omitempty"`

	// IPAccess replaces the server's ipAccess here.
	// +optional
	IPAccess *IPAccess `json:"ipAccess,omitempty"`

	// BasicAuth replaces the server's basicAuth here; disabled: true
	// turns it off.
	// +optional
	BasicAuth *HTTPBasicAuth `json:"basicAuth,omitempty"`

	// ExternalAuth replaces the server's externalAuth here; disabled:
	// true turns it off.
	// +optional
	ExternalAuth *ExternalAuth `json:"externalAuth,omitempty"`

	// RateLimit replaces the server's rateLimit here.
	// +optional
	RateLimit *RateLimit `json:"rateLimit,omitempty"`

	// ConnectionLimit replaces the server's connectionLimit here.
	// +optional
	ConnectionLimit *ConnectionLimit `json:"connectionLimit,omitempty"`

	// DisableAccessLog stops logging this location's requests, such as a
	// health check polled every second.
	// +optional
	DisableAccessLog bool `json:"disableAccessLog,omitempty"`
}

// RequestMatch is what a request must carry besides its path.
type RequestMatch struct {
	// Headers the request must have, each with a matching value. A header
	// sent more than once is matched by its first value.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Headers []HeaderMatch `json:"headers,omitempty"`
	// QueryParams the request's query must have, each with a matching
	// value. Names are case-sensitive; the value is compared as the client
	// sent it, percent-encoding and all; a parameter sent more than once is
	// matched by its first value.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	QueryParams []QueryParamMatch `json:"queryParams,omitempty"`
	// Method the request must use.
	// +optional
	// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;DELETE;CONNECT;OPTIONS;TRACE;PATCH
	Method string `json:"method,omitempty"`
}

// HeaderMatch matches one request header by name (in any case) and value.
type HeaderMatch struct {
	// Type is Exact (unset): the value, case-sensitive; or
	// RegularExpression: a regular expression (RE2 syntax) that must match
	// the whole value.
	// +optional
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	Type string `json:"type,omitempty"`
	// Name of the header: letters, digits and '-' only, since nginx drops
	// a header with any other character in its name (ignore_invalid_headers).
	// Each name may appear once, in any case, which the controller checks
	// (condition Degraded, reason InvalidConfig).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9-]+$`
	Name string `json:"name"`
	// Value the header must have, or the regular expression it must match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[ -~]+$`
	Value string `json:"value"`
}

// QueryParamMatch matches one query parameter by name and value.
type QueryParamMatch struct {
	// Type is Exact (unset): the value, case-sensitive; or
	// RegularExpression: a regular expression (RE2 syntax) that must match
	// the whole value.
	// +optional
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	Type string `json:"type,omitempty"`
	// Name of the parameter, case-sensitive.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// Value the parameter must have, or the regular expression it must match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[ -~]+$`
	Value string `json:"value"`
}

// RespondLocation answers with a fixed response.
// +kubebuilder:validation:XValidation:rule="!(self.status in [301, 302, 303, 307, 308, 444])",message="respond.status cannot be a redirect (use redirect) or 444 (nginx's code for closing the connection without an answer)"
type RespondLocation struct {
	// Status is the HTTP status code.
	// +kubebuilder:validation:Minimum=200
	// +kubebuilder:validation:Maximum=599
	Status int32 `json:"status"`
	// Body is the response's body, sent as text/plain; none when unset.
	// Printable characters, tabs and newlines only, no "$".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[^\x00-\x08\x0b-\x1f\x7f$]*$`
	Body string `json:"body,omitempty"`
}

// HeaderModifier sets, adds and removes HTTP headers, with Gateway API's
// semantics: set replaces every value of the header, add appends one, remove
// drops it. Header names are case-insensitive; each may appear once in a
// modifier, which the controller checks (condition Degraded, reason
// InvalidConfig): a schema rule comparing every pair of names would exceed
// the apiserver's CEL budget.
// +kubebuilder:validation:XValidation:rule="(has(self.set) ? self.set.map(h, h.name) : []).all(n, !(n.lowerAscii() in ['host', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'content-length'])) && (has(self.add) ? self.add.map(h, h.name) : []).all(n, !(n.lowerAscii() in ['host', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'content-length'])) && (has(self.remove) ? self.remove : []).all(n, !(n.lowerAscii() in ['host', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'content-length']))",message="Host, Connection, Upgrade, Keep-Alive, TE, Trailer, Transfer-Encoding and Content-Length are nginx's to manage: change the host with proxy.urlRewrite.hostname"
type HeaderModifier struct {
	// Set replaces the header's values with this one, or adds it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Set []Header `json:"set,omitempty"`
	// Add appends this value to the header, or adds it. In requestHeaders
	// the names may hold letters, digits and '-' only: nginx reads the
	// existing value through a variable named after the header.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Add []Header `json:"add,omitempty"`
	// Remove drops these headers.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9!#%&'*+.^_|~-]+$`
	Remove []string `json:"remove,omitempty"`
}

// StaticLocation serves files from the content root.
type StaticLocation struct {
	// Autoindex lists directories that have no index file.
	// +optional
	Autoindex bool `json:"autoindex,omitempty"`
	// Fallback is the file of the content served, with status 200, for a
	// URI that names no file or directory: /index.html lets a single-page
	// application answer its deep links. Unset: 404.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`
	Fallback string `json:"fallback,omitempty"`
}

// ProxyLocation forwards requests to one Service of the instance's namespace,
// or splits them across several by weight. nginx keeps idle connections to
// them open for reuse, passes WebSocket upgrades through, and sends the
// request's Host (with its port) and X-Forwarded-For, -Proto, -Host and
// -Port (see spec.config.trustedProxies).
// +kubebuilder:validation:XValidation:rule="has(self.service) ? has(self.port) && !has(self.backends) : has(self.backends) && !has(self.port)",message="set service and port to proxy to one Service, or backends to split requests across Services"
// +kubebuilder:validation:XValidation:rule="!has(self.useClusterIP) || !self.useClusterIP || has(self.service)",message="useClusterIP goes with service; set it on each backend that should use it"
// +kubebuilder:validation:XValidation:rule="!(has(self.tls) || (has(self.backendProtocol) && self.backendProtocol in ['HTTPS', 'GRPCS'])) || (has(self.tls) && has(self.tls.hostname)) || !has(self.backends) || size(self.backends) == 1",message="tls.hostname is required with more than one backend: each Service has its own name"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.backendProtocol) || self.backendProtocol in ['HTTPS', 'GRPCS']",message="tls needs backendProtocol HTTPS or GRPCS (or none, which then means HTTPS)"
// +kubebuilder:validation:XValidation:rule="!has(self.backendProtocol) || !(self.backendProtocol in ['GRPC', 'GRPCS']) || (!has(self.buffering) && !has(self.sessionAffinity) && (!has(self.interceptErrors) || !self.interceptErrors) && (!has(self.urlRewrite) || !has(self.urlRewrite.path)))",message="buffering, interceptErrors, sessionAffinity and urlRewrite.path are for HTTP backends: gRPC streams, answers errors with a grpc-status, keeps no cookies and names its methods in the path"
// +kubebuilder:validation:XValidation:rule="has(self.hashKey) == (has(self.loadBalancingMethod) && self.loadBalancingMethod in ['hash', 'hash consistent'])",message="hashKey is required with loadBalancingMethod hash or hash consistent, and used by no other method"
// +kubebuilder:validation:XValidation:rule="!has(self.sessionAffinity) || !has(self.loadBalancingMethod)",message="sessionAffinity picks the endpoint by its cookie (consistent hashing): it replaces loadBalancingMethod"
// +kubebuilder:validation:XValidation:rule="!has(self.mirrors) || !has(self.backendProtocol) || self.backendProtocol in ['HTTP', 'HTTPS']",message="mirrors copy HTTP requests: a gRPC location has none"
type ProxyLocation struct {
	// Service is the name of a Service in this namespace.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Service string `json:"service,omitempty"`
	// Port of the Service.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
	// UseClusterIP sends the requests to service's cluster address, for
	// kube-proxy (or a mesh) to pick a pod per connection, rather than to
	// its ready pods, which nginx balances itself (ingress-nginx's
	// service-upstream, NGINX Ingress Controller's use-cluster-ip). The
	// balancing method, affinity and retries then see one endpoint.
	// +optional
	UseClusterIP bool `json:"useClusterIP,omitempty"`

	// Backends split requests across Services by weight, for example 90
	// and 10 for a canary (Gateway API's weighted backendRefs,
	// ingress-nginx's canary-weight). Each request is placed on its own:
	// there is no stickiness, so one client may reach both versions.
	// +optional
	// +listType=map
	// +listMapKey=service
	// +listMapKey=port
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.exists(b, b.weight > 0)",message="at least one backend needs a weight above 0"
	Backends []Backend `json:"backends,omitempty"`

	// ConnectTimeoutSeconds is how long nginx waits to connect to one of
	// the Service's pods (proxy_connect_timeout) before it tries another:
	// a pod on the cluster network answers within milliseconds, and one
	// that has just vanished never does, so a request waits this long for
	// each such pod before it moves on (1 s; objects created before keep
	// the 5 s or 60 s they were given: with 5 s, a backend rolled without a
	// preStop pause held GETs past a 10 s client timeout). Raise it for an
	// ExternalName Service far away. The kernel gives up after about 75 s
	// whatever is set.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=75
	ConnectTimeoutSeconds int32 `json:"connectTimeoutSeconds,omitempty"`
	// SendTimeoutSeconds is the longest pause between two writes of the
	// request to the Service (proxy_send_timeout).
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	SendTimeoutSeconds int32 `json:"sendTimeoutSeconds,omitempty"`
	// ReadTimeoutSeconds is the longest pause between two reads of the
	// response (proxy_read_timeout): a Service that needs 30 s to answer
	// needs more than 30; an idle WebSocket is closed after it.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	ReadTimeoutSeconds int32 `json:"readTimeoutSeconds,omitempty"`
	// Mirrors send a copy of the requests, or of a share of them, to other
	// Services, whose answers are thrown away (Gateway API's RequestMirror
	// filter, ingress-nginx's mirror-target). A copy is the request as the
	// client sent it, with this location's requestHeaders, over HTTP/1.1 in
	// plain text to the Service's ready pods. nginx reads a mirrored
	// request's whole body before it sends the request on, and keeps the
	// client's connection until every copy is answered: a slow mirror
	// delays the client's next request on that connection, not the answer
	// to this one. Each mirror takes the exact path
	// /nginx-operator-mirror/<location> of the server for itself.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Mirrors []Mirror `json:"mirrors,omitempty"`

	// Timeouts bound a request with Gateway API's HTTPRoute timeouts, to
	// the millisecond; what they set takes the place of the *Seconds
	// timeouts above and of retry's timeoutSeconds.
	// +optional
	Timeouts *ProxyTimeouts `json:"timeouts,omitempty"`

	// Buffering controls how nginx buffers the Service's responses. Unset:
	// nginx's defaults (buffered, eight 4 KiB buffers on x86-64).
	// +optional
	Buffering *ProxyBuffering `json:"buffering,omitempty"`

	// TLS connects to the Service over HTTPS (ingress-nginx's
	// backend-protocol: HTTPS; Gateway API's BackendTLSPolicy).
	// +optional
	TLS *BackendTLS `json:"tls,omitempty"`

	// URLRewrite changes the host or path of the request sent to the
	// Service; the query is kept (Gateway API's URLRewrite filter,
	// ingress-nginx's rewrite-target).
	// +optional
	URLRewrite *URLRewrite `json:"urlRewrite,omitempty"`

	// InterceptErrors serves the server's errorPages in place of the
	// Service's own body for the codes they list.
	// +optional
	InterceptErrors bool `json:"interceptErrors,omitempty"`

	// BackendProtocol is what nginx speaks to the Service (ingress-nginx's
	// backend-protocol): HTTP or HTTPS (HTTP/1.1), GRPC or GRPCS (gRPC over
	// HTTP/2, NGINX Gateway Fabric's GRPCRoute). Unset: HTTPS when tls is
	// set, otherwise HTTP. tls holds the TLS settings of HTTPS and GRPCS;
	// without it the connection is encrypted but the certificate is not
	// checked. A gRPC location answers errors of nginx's own (a Service
	// down, a rate limit, a refused client) with a grpc-status a gRPC client
	// understands, not an HTML page. Clients reach it over TLS on an HTTP/2
	// server, or in plain text on a port with h2c.
	// +optional
	// +kubebuilder:validation:Enum=HTTP;HTTPS;GRPC;GRPCS
	BackendProtocol string `json:"backendProtocol,omitempty"`

	// LoadBalancingMethod picks the endpoint of each request, with NGINX
	// Gateway Fabric's names: round_robin (the default; weighted), least_conn
	// (the endpoint with the fewest active requests: slow requests do not
	// pile up on one), ip_hash (by the client's address, its first three
	// octets for IPv4), hash and hash consistent (by hashKey; hash
	// consistent moves only about 1/n of the keys when an endpoint comes or
	// goes, plain hash nearly all of them), random, and random two or random
	// two least_conn (the less busy of two endpoints drawn at random, which
	// balances well when several nginx pods share the endpoints). A method
	// applies within each nginx worker; the pods balance independently.
	// +optional
	// +kubebuilder:validation:Enum=round_robin;least_conn;ip_hash;hash;hash consistent;random;random two;random two least_conn
	LoadBalancingMethod string `json:"loadBalancingMethod,omitempty"`

	// HashKey is what loadBalancingMethod hash and hash consistent hash:
	// requests with the same key go to the same endpoint while it is up
	// (ingress-nginx's upstream-hash-by).
	// +optional
	HashKey *HashKey `json:"hashKey,omitempty"`

	// SessionAffinity keeps a client on one endpoint by a cookie
	// (ingress-nginx's affinity: cookie; Gateway API's sessionPersistence).
	// +optional
	SessionAffinity *SessionAffinity `json:"sessionAffinity,omitempty"`

	// Retry sends a request that failed on one endpoint to another
	// (ingress-nginx's proxy-next-upstream). Unset: nginx's conditions, a
	// connection error or a timeout, on every endpoint in turn, but no try
	// starts once readTimeoutSeconds have passed since the first: a pod
	// that refuses or has vanished is passed over, while a read timeout is
	// answered with one 504 after readTimeoutSeconds, the request sent to
	// one endpoint only. A request that is not idempotent (POST, PATCH,
	// LOCK) is never retried once it was sent. Set retry (with the
	// condition timeout, and timeoutSeconds as the bound) to send a
	// request that timed out on to other endpoints: the client then waits
	// up to tries read timeouts and the Service runs the request up to
	// tries times.
	// +optional
	Retry *ProxyRetry `json:"retry,omitempty"`

	// KeepAlive tunes the idle connections each nginx worker keeps open to
	// the Service's endpoints for reuse (NGINX Gateway Fabric's
	// UpstreamSettingsPolicy keepAlive, ingress-nginx's
	// upstream-keepalive-*). Unset: 32 connections, nginx's defaults for the
	// rest.
	// +optional
	KeepAlive *UpstreamKeepAlive `json:"keepAlive,omitempty"`
}

// CORS is what a location allows of cross-origin requests, with Gateway
// API's names and meanings. A "*" stands alone in its list. Where "*"
// allows every origin, method or header, nginx answers with the request's
// own (Origin, Access-Control-Request-Method, -Headers), which is right
// with credentials and without.
// +kubebuilder:validation:XValidation:rule="!has(self.allowOrigins) || !('*' in self.allowOrigins) || size(self.allowOrigins) == 1",message="allowOrigins: '*' stands alone"
// +kubebuilder:validation:XValidation:rule="!has(self.allowMethods) || !('*' in self.allowMethods) || size(self.allowMethods) == 1",message="allowMethods: '*' stands alone"
// +kubebuilder:validation:XValidation:rule="!has(self.allowHeaders) || !('*' in self.allowHeaders) || size(self.allowHeaders) == 1",message="allowHeaders: '*' stands alone"
// +kubebuilder:validation:XValidation:rule="!has(self.exposeHeaders) || !('*' in self.exposeHeaders) || !has(self.allowCredentials) || !self.allowCredentials",message="exposeHeaders '*' means every header only without credentials: name the headers when allowCredentials is true"
type CORS struct {
	// AllowOrigins are the origins allowed: "*" for every one, or
	// scheme://host with an optional :port, where a host of "*" or
	// starting with "*." matches any host or any number of labels in its
	// place ("https://*.example.com" allows https://a.b.example.com, not
	// https://example.com). Origins are compared regardless of case.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*|https?://(\*|(\*\.)?([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+)(:[0-9]{1,5})?)$`
	AllowOrigins []string `json:"allowOrigins"`
	// AllowCredentials lets the browser send cookies and authorization
	// (Access-Control-Allow-Credentials: true).
	// +optional
	AllowCredentials bool `json:"allowCredentials,omitempty"`
	// AllowMethods are the methods a preflight allows, or "*".
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=9
	// +kubebuilder:validation:items:Enum=GET;HEAD;POST;PUT;DELETE;CONNECT;OPTIONS;TRACE;PATCH;*
	AllowMethods []string `json:"allowMethods,omitempty"`
	// AllowHeaders are the request headers a preflight allows, or "*".
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9!#%&'*+.^_|~-]+$`
	AllowHeaders []string `json:"allowHeaders,omitempty"`
	// ExposeHeaders are the response headers scripts may read beyond the
	// safelisted ones, or "*" for all (without credentials only).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9!#%&'*+.^_|~-]+$`
	ExposeHeaders []string `json:"exposeHeaders,omitempty"`
	// MaxAgeSeconds is how long a browser may keep a preflight's answer
	// (Access-Control-Max-Age).
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	MaxAgeSeconds int32 `json:"maxAgeSeconds,omitempty"`
}

// Mirror is a Service that gets a copy of a location's requests.
// +kubebuilder:validation:XValidation:rule="!(has(self.percent) && has(self.fraction))",message="set percent or fraction, not both"
type Mirror struct {
	// Service is the name of a Service in this namespace, or in Namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Service string `json:"service"`
	// Namespace is the Service's namespace when it is not this one; that
	// namespace must consent as for a backend (see Backend's namespace).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Port of the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// Percent of the requests copied, each request drawn at random. Unset,
	// with no fraction: every request.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`
	// Fraction of the requests copied, numerator out of denominator, to
	// nginx's precision of a hundredth of a percent (rounded down).
	// +optional
	Fraction *Fraction `json:"fraction,omitempty"`
}

// Fraction is numerator out of denominator, as Gateway API's.
// +kubebuilder:validation:XValidation:rule="self.numerator <= self.denominator",message="numerator must not be greater than denominator"
type Fraction struct {
	// +kubebuilder:validation:Minimum=0
	Numerator int32 `json:"numerator"`
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	Denominator int32 `json:"denominator,omitempty"`
}

// ProxyTimeouts are Gateway API's HTTPRoute timeouts, in its duration
// format (GEP-2257: up to four numbers each with a unit of h, m, s or ms,
// as 1m30s or 500ms). "0s" turns a timeout off. nginx has no deadline for
// a whole response: it bounds each wait instead, to connect, to send the
// next part of the request and to read the next part of the response, and
// starts no further try once the request timeout has passed. A Service
// that answers within the timeout but then keeps a response trickling in
// is not cut off at its end.
// +kubebuilder:validation:XValidation:rule="!has(self.request) || !has(self.backendRequest) || duration(self.request) == duration('0s') || duration(self.backendRequest) <= duration(self.request)",message="backendRequest must not be longer than request"
type ProxyTimeouts struct {
	// Request bounds the whole request, every try included: each wait
	// for a Service is at most this long, and no other endpoint is tried
	// once it has passed; then the client gets 504.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	Request string `json:"request,omitempty"`
	// BackendRequest bounds one try, with one endpoint: to connect, to
	// send each part of the request and to wait for each part of the
	// response. Unset: request's value.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	BackendRequest string `json:"backendRequest,omitempty"`
}

// HashKey is the part of a request that a hash balancing method hashes.
// +kubebuilder:validation:XValidation:rule="self.source in ['RequestURI', 'ClientIP'] ? !has(self.name) : has(self.name)",message="name is required for source Header, Cookie and QueryParameter, and not allowed for RequestURI and ClientIP"
// +kubebuilder:validation:XValidation:rule="!has(self.name) || self.source != 'Header' || self.name.matches('^[A-Za-z0-9-]+$')",message="header names may hold letters, digits and '-' only: nginx reads a header through a variable named after it"
type HashKey struct {
	// Source of the key: a request Header, a Cookie or a QueryParameter
	// named name, the RequestURI (path and query as the client sent them)
	// or the ClientIP (the whole address, as spec.config.realIP finds it).
	// Requests without the header, cookie or parameter share one key of
	// their own: all such requests go to one endpoint.
	// +kubebuilder:validation:Enum=Header;Cookie;QueryParameter;RequestURI;ClientIP
	Source string `json:"source"`
	// Name of the header, cookie or query parameter; nginx matches each
	// regardless of case.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	Name string `json:"name,omitempty"`
}

// SessionAffinity keeps each client on one endpoint. Open-source nginx has no
// sticky directive: nginx hashes (consistently) on the cookie's value, and
// sets the cookie, with a new random value, on a response to a request that
// came without it. When an endpoint goes away, only its clients move (each
// to another endpoint, where they then stay); when one is added, it takes
// over about 1/n of the clients from the others. A pod that only restarts
// keeps its address and its clients.
type SessionAffinity struct {
	// Cookie is the affinity cookie.
	Cookie SessionCookie `json:"cookie"`
}

// SessionCookie is the cookie of session affinity and its attributes.
// +kubebuilder:validation:XValidation:rule="!has(self.sameSite) || self.sameSite != 'None' || (has(self.secure) && self.secure)",message="sameSite None needs secure: true, or browsers refuse the cookie"
type SessionCookie struct {
	// Name of the cookie: letters, digits and '_' (nginx reads it through a
	// variable named after it).
	// +optional
	// +kubebuilder:default=route
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	Name string `json:"name,omitempty"`
	// Path attribute of the cookie. Unset: the location's path, so the
	// cookie is sent only to it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`
	Path string `json:"path,omitempty"`
	// MaxAgeSeconds is how long the browser keeps the cookie. Unset: until
	// it is closed (a session cookie).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=31536000
	MaxAgeSeconds *int32 `json:"maxAgeSeconds,omitempty"`
	// Secure: browsers send the cookie over HTTPS only.
	// +optional
	Secure bool `json:"secure,omitempty"`
	// HTTPOnly hides the cookie from scripts in the page.
	// +optional
	// +kubebuilder:default=true
	HTTPOnly *bool `json:"httpOnly,omitempty"`
	// SameSite attribute: Strict, Lax or None (None needs secure). Unset:
	// the browser's default, Lax in current browsers.
	// +optional
	// +kubebuilder:validation:Enum=Strict;Lax;None
	SameSite string `json:"sameSite,omitempty"`
}

// ProxyRetry is which failures of an endpoint send the request on to
// another, and the bounds of those tries. nginx retries only before it has
// sent the client anything of the response.
type ProxyRetry struct {
	// Conditions that make nginx try another endpoint, nginx's names:
	// error (connecting, sending or reading failed), timeout, invalid_header
	// (an empty or malformed response), http_500, http_502, http_503,
	// http_504, http_403, http_404 and http_429 (the endpoint answered with
	// that status). The default, error and timeout, covers an endpoint that
	// is gone or hangs; statuses are retried only when named, since an
	// application's own 5xx (an overload, a bug) repeated on every endpoint
	// multiplies its load.
	// +optional
	// +listType=set
	// +kubebuilder:default={error,timeout}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:Enum=error;timeout;invalid_header;http_500;http_502;http_503;http_504;http_403;http_404;http_429
	Conditions []string `json:"conditions,omitempty"`
	// Tries bounds the endpoints one request is sent to, the first
	// included: 1 turns retries off.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Tries int32 `json:"tries,omitempty"`
	// TimeoutSeconds bounds the time from the first try after which no
	// other is started; 0: no bound but tries.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// NonIdempotent retries POST, PATCH and LOCK requests too once they
	// were sent, which may run them twice: set it only for a Service that
	// tolerates that. gRPC calls are all POST. A request whose connection
	// failed before any of it was sent is retried either way.
	// +optional
	NonIdempotent bool `json:"nonIdempotent,omitempty"`
}

// UpstreamKeepAlive is the reuse of connections to a Service's endpoints,
// with nginx's upstream keepalive directives.
type UpstreamKeepAlive struct {
	// Connections is how many idle connections each worker keeps for
	// reuse (keepalive); 0 opens a connection per request.
	// +optional
	// +kubebuilder:default=32
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Connections *int32 `json:"connections,omitempty"`
	// Requests is how many requests one connection serves before nginx
	// closes it (keepalive_requests).
	// +optional
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Requests int32 `json:"requests,omitempty"`
	// TimeSeconds is how long one connection serves requests before nginx
	// closes it (keepalive_time).
	// +optional
	// +kubebuilder:default=3600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	TimeSeconds int32 `json:"timeSeconds,omitempty"`
	// TimeoutSeconds is how long an idle connection stays open
	// (keepalive_timeout); keep it below the Service's own idle timeout, or
	// nginx may reuse a connection the Service is closing.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
}

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

// ProxyBuffering sets how nginx buffers a Service's response.
// +kubebuilder:validation:XValidation:rule="(self.headerBufferKiB > self.bufferKiB ? self.headerBufferKiB : self.bufferKiB) < (self.buffers - 1) * self.bufferKiB",message="the larger of headerBufferKiB and bufferKiB must be less than (buffers - 1) * bufferKiB, as nginx requires of the buffers it may be sending while reading"
type ProxyBuffering struct {
	// Disabled passes the response to the client as it arrives
	// (proxy_buffering off), for streamed responses and server-sent events.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// HeaderBufferKiB holds the response's status line and headers
	// (proxy_buffer_size); raise it for Services that send large cookies.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	HeaderBufferKiB int32 `json:"headerBufferKiB,omitempty"`
	// Buffers and BufferKiB are the number and size of the buffers a
	// response is read into per connection (proxy_buffers).
	// +optional
	// +kubebuilder:default=8
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=256
	Buffers int32 `json:"buffers,omitempty"`
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	BufferKiB int32 `json:"bufferKiB,omitempty"`
}

// BackendTLS is how nginx speaks TLS to a Service.
type BackendTLS struct {
	// Hostname is sent as SNI and, with caCertificate, must be a name of
	// the Service's certificate. Unset: <service>.<namespace>.svc.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname string `json:"hostname,omitempty"`
	// CACertificate verifies the Service's certificate. Unset: the
	// connection is encrypted but the certificate is not checked, as in
	// ingress-nginx's default.
	// +optional
	CACertificate *CACertificateRef `json:"caCertificate,omitempty"`
}

// CACertificateRef names PEM CA certificates in a ConfigMap or Secret of
// this namespace. It is mounted into the pods: the operator never reads it.
type CACertificateRef struct {
	// Kind is ConfigMap or Secret.
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`
	// Name of the ConfigMap or Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key holding the certificates.
	// +optional
	// +kubebuilder:default="ca.crt"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..'",message="key cannot be . or .."
	Key string `json:"key,omitempty"`
}

// URLRewrite changes the request before it is proxied.
// +kubebuilder:validation:XValidation:rule="has(self.hostname) || has(self.path)",message="set hostname, path or both"
type URLRewrite struct {
	// Hostname replaces the Host header sent to the Service.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname string `json:"hostname,omitempty"`
	// Path rewrites the path; the query is kept.
	// +optional
	Path *PathModifier `json:"path,omitempty"`
}

// PathModifier replaces a request's path, with Gateway API's semantics.
// +kubebuilder:validation:XValidation:rule="self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) && !has(self.replacePrefixMatch) : has(self.replacePrefixMatch) && !has(self.replaceFullPath)",message="type ReplaceFullPath needs replaceFullPath, type ReplacePrefixMatch needs replacePrefixMatch, and only that one"
type PathModifier struct {
	// Type is ReplaceFullPath or ReplacePrefixMatch.
	// +kubebuilder:validation:Enum=ReplaceFullPath;ReplacePrefixMatch
	Type string `json:"type"`
	// ReplaceFullPath is the whole new path.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`
	ReplaceFullPath *string `json:"replaceFullPath,omitempty"`
	// ReplacePrefixMatch replaces the location's path at the start of the
	// request's path and keeps the rest: with path /api/ and "/v2/",
	// /api/users becomes /v2/users; "" or "/" strip the prefix. A trailing
	// '/' on either side is ignored, as in Gateway API.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/[A-Za-z0-9._~!&'()*+,=:@%/-]*)?$`
	ReplacePrefixMatch *string `json:"replacePrefixMatch,omitempty"`
}

// RedirectLocation answers with an HTTP redirect: to a fixed url, or, like
// Gateway API's RequestRedirect, to the request's own URL with some parts
// replaced (scheme, hostname, port, path); the query is always kept. With
// none of them the target is the request's own URL: a 303 after a POST
// sends the client to GET it; with another code a client that follows
// redirects loops.
// +kubebuilder:validation:XValidation:rule="!has(self.url) || !(has(self.scheme) || has(self.hostname) || has(self.port) || has(self.path))",message="set url for a fixed target, or scheme, hostname, port and path to keep the rest of the request's URL: not both"
type RedirectLocation struct {
	// URL to redirect to, absolute (http or https), used as it is.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9._~!&'()*+,;=:@%/?#\[\]-]+$`
	URL string `json:"url,omitempty"`
	// Code is the redirect's HTTP status.
	// +optional
	// +kubebuilder:default=302
	// +kubebuilder:validation:Enum=301;302;303;307;308
	Code int32 `json:"code,omitempty"`
	// Scheme of the target. Unset: the request's (as a trusted proxy
	// reported it).
	// +optional
	// +kubebuilder:validation:Enum=http;https
	Scheme string `json:"scheme,omitempty"`
	// Hostname of the target. Unset: the request's.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname string `json:"hostname,omitempty"`
	// Port of the target. Unset: the scheme's default when scheme is set,
	// otherwise the port the request came in on. 80 for http and 443 for
	// https are left out of the URL.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
	// Path replaces the path of the target. Unset: the request's path.
	// +optional
	Path *PathModifier `json:"path,omitempty"`
}

// Header is one response header.
type Header struct {
	// Name of the header.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// Value of the header; printable characters only, no "$" (nginx variables are not expanded from user input).
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[^\x00-\x1f\x7f$]*$`
	Value string `json:"value"`
}

// Content is what nginx serves.
type Content struct {
	// ConfigMaps are projected into the document root; their keys are file names.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ConfigMaps []ConfigMapContent `json:"configMaps,omitempty"`
	// VolumeClaimTemplate gives every replica its own persistent document root.
	// +optional
	VolumeClaimTemplate *VolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
}

// ConfigMapContent names a ConfigMap whose keys become files of the document root.
type ConfigMapContent struct {
	// Name of a ConfigMap in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// VolumeClaimTemplate is the persistent volume each replica gets for its content.
type VolumeClaimTemplate struct {
	// Size of each volume, more than zero.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? int(self) > 0 : quantity(self).isGreaterThan(quantity('0'))",message="size must be more than zero"
	Size resource.Quantity `json:"size"`
	// StorageClassName of the volumes: the name of a StorageClass (a DNS
	// subdomain). Unset: the cluster's default class; empty: no class.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	StorageClassName *string `json:"storageClassName,omitempty"`
	// AccessModes of the volumes; ReadWriteOncePod only alone.
	// +optional
	// +listType=set
	// +kubebuilder:default={ReadWriteOnce}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:Enum=ReadWriteOnce;ReadWriteOncePod;ReadWriteMany;ReadOnlyMany
	// +kubebuilder:validation:XValidation:rule="!('ReadWriteOncePod' in self) || size(self) == 1",message="ReadWriteOncePod cannot be combined with other access modes"
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
}

// MetricsSpec turns nginx metrics on.
type MetricsSpec struct {
	// Enabled serves stub_status on loopback inside the pod and runs the
	// nginx-prometheus-exporter sidecar, whose port is named "metrics";
	// and the nginx-reloader of each pod counts every request on its port
	// "reloader" (see requests). NginxMonitors scrape both.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Requests are the per-request metrics of a monitored instance: nginx
	// sends a line per request (a UDP datagram on the pod's loopback,
	// 127.0.0.1:18083) to the nginx-reloader in its pod, which
	// exports nginx_route_requests_total and histograms of request and
	// upstream duration, labelled by server, route (the location's name, or
	// its path), Service and status class.
	// +optional
	Requests *RequestMetrics `json:"requests,omitempty"`
}

// RequestMetrics configures the per-request metrics.
type RequestMetrics struct {
	// Disabled stops counting requests, where the cost of a log line per
	// request matters more than the metrics (see the docs' figures).
	// +optional
	Disabled bool `json:"disabled,omitempty"`
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

// The path types of a Location (Gateway API's PathMatchType, and nginx's
// own string prefix).
const (
	PathPrefixString      = "Prefix"
	PathPrefixElements    = "PathPrefix"
	PathExact             = "Exact"
	PathRegularExpression = "RegularExpression"
)

// MatchRegularExpression is the type of a header or query parameter match
// by regular expression; the other is Exact.
const MatchRegularExpression = "RegularExpression"

// PathTypeOf is l's path type, with exact: true read as Exact and an unset
// type as Prefix.
func PathTypeOf(l Location) string {
	switch {
	case l.Exact:
		return PathExact
	case l.PathType == "":
		return PathPrefixString
	}
	return l.PathType
}

// LocationMatchKey is what tells two locations of a server apart: their
// path, path type and match, header names in any case. Two with the same
// key are one too many.
func LocationMatchKey(l Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %s", l.Path, PathTypeOf(l))
	if m := l.Match; m != nil {
		b.WriteString(" " + m.Method)
		for _, h := range m.Headers {
			fmt.Fprintf(&b, "|h %q %q %q", h.Type, strings.ToLower(h.Name), h.Value)
		}
		for _, q := range m.QueryParams {
			fmt.Fprintf(&b, "|q %q %q %q", q.Type, q.Name, q.Value)
		}
	}
	return b.String()
}
