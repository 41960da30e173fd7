// Proxy locations: ProxyLocation and its mirrors, timeouts, retries and
// buffering.

package v1beta1

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
