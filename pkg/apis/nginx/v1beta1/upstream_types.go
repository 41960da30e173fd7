// nginx's upstream blocks of proxy locations: hash keys, session
// affinity and the keepalive connections to a Service's endpoints.

package v1beta1

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
