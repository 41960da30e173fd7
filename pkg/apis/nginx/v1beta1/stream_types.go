package v1beta1

// MaxStreams and MaxStreamServerNames are the most streams an instance
// has and the most server names a stream has: the maxItems of
// NginxConfig.Streams and Stream.ServerNames (a test holds the CRD to
// these). The Gateway translator keeps an instance within them.
const (
	MaxStreams           = 32
	MaxStreamServerNames = 32
)

// Stream relays the connections (or datagrams) of one port to Services,
// below HTTP: nginx reads nothing of what they carry but, with
// serverNames, the server name a TLS client asks for.
//
// Without serverNames a stream takes every connection of its port, and
// nginx relays the bytes at once, so protocols in which the server speaks
// first (SMTP, MySQL) work. With serverNames it takes the TLS connections
// that ask for one of them (SNI), and the port's other connections go to
// its other streams, or to its TLS servers (config.servers) by their
// serverNames as ever: one port, 443 say, passes some names through to
// backends that hold their own certificates and terminates the others.
// +kubebuilder:validation:XValidation:rule="!(has(self.tls) && has(self.serverNames) && has(self.proxyProtocol) && self.proxyProtocol)",message="proxyProtocol cannot be combined with tls and serverNames: nginx terminates such a stream behind the port's router, where its PROXY header could not name the address the client connected to; give the stream a port of its own (without serverNames), or pass TLS through (without tls)"
type Stream struct {
	// Port is the name of the entry of spec.ports this stream listens on.
	// Its protocol is the stream's: TCP connections or UDP datagrams.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Port string `json:"port"`

	// ServerNames are the TLS server names (SNI) this stream takes on its
	// port; wildcards are allowed as the first label ("*.example.com"), and
	// an exact name wins over a wildcard. Without tls, the connection is
	// passed through as it is: the backend completes the TLS handshake
	// with its own certificate (TLS passthrough), and nginx never sees the
	// keys. With tls, nginx terminates it. A client that sends no name, or
	// a name no stream or server of the port has, goes to the port's stream
	// without serverNames, or to its default TLS server; with neither,
	// nginx closes the connection. TCP ports only.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServerNames []string `json:"serverNames,omitempty"`

	// TLS terminates TLS with the certificate of a Secret of type
	// kubernetes.io/tls, under the protocols and ciphers of config.tls,
	// and relays the plain bytes to the backends. TCP ports only.
	// +optional
	TLS *StreamTLS `json:"tls,omitempty"`

	// Backends are the Services the stream relays to, each connection (or
	// UDP session) to one ready pod of one of them, in shares by weight.
	// A Service with no ready pod gets none: its share goes to the others.
	// With no backend, or none with a weight above 0 and a ready pod,
	// nginx closes each connection at once (and answers no datagram), as
	// Gateway API has a route whose backends do not resolve.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Backends []Backend `json:"backends,omitempty"`

	// LoadBalancingMethod picks the pod of each connection: round_robin
	// (the default; weighted), least_conn (the pod with the fewest open
	// connections: long connections do not pile up on one), hash and hash
	// consistent (by the client's address: a client keeps its pod while
	// the pods stay; consistent moves only about 1/n of the clients when a
	// pod comes or goes), random, and random two or random two least_conn
	// (the less busy of two pods drawn at random). A method applies within
	// each nginx worker.
	// +optional
	// +kubebuilder:validation:Enum=round_robin;least_conn;hash;hash consistent;random;random two;random two least_conn
	LoadBalancingMethod string `json:"loadBalancingMethod,omitempty"`

	// ProxyProtocol starts each connection to a backend with a PROXY
	// protocol (version 1) header naming the client's address and port,
	// for backends that read it (HAProxy, Postgres behind pgbouncer,
	// nginx's own proxy_protocol listeners). A backend that does not
	// expect it fails every connection. TCP ports only.
	// +optional
	ProxyProtocol bool `json:"proxyProtocol,omitempty"`

	// ConnectTimeoutSeconds is how long nginx waits for a pod to accept a
	// connection before it tries the next (proxy_connect_timeout).
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=75
	ConnectTimeoutSeconds int32 `json:"connectTimeoutSeconds,omitempty"`

	// IdleTimeoutSeconds closes a connection (or ends a UDP session) after
	// this long without a byte in either direction (proxy_timeout): a
	// database connection pool that idles longer needs more, or keepalive
	// probes of its own.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	IdleTimeoutSeconds int32 `json:"idleTimeoutSeconds,omitempty"`

	// ExpectedResponses is how many datagrams a backend answers each
	// datagram of a client with (proxy_responses): 1 for DNS. nginx ends
	// the UDP session once they have come, rather than keeping it until
	// idleTimeoutSeconds, so a client's next datagram may go to another
	// pod. 0 expects none (syslog, metrics). Unset, the session lasts until
	// it idles. UDP ports only.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	ExpectedResponses *int32 `json:"expectedResponses,omitempty"`
}

// StreamTLS is the certificate a stream terminates TLS with.
type StreamTLS struct {
	// SecretName is a Secret of type kubernetes.io/tls in this namespace:
	// its tls.crt and tls.key are mounted into the pods, and a renewed
	// certificate is loaded without a restart.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName"`
}
