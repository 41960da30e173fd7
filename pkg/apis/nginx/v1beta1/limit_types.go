// Limits of a client's requests: rate and connection limits, the key
// they (and external authentication's cache) tell requests apart by, and
// their exemptions.

package v1beta1

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
