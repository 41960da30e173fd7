// spec.config: NginxConfig, the bounds on its servers and their
// locations, and the settings nginx applies to all its servers (the main
// and http blocks): real client addresses, compression, the access log and
// the request header buffers.

package v1beta1

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
