// nginx's server blocks: Server, its redirect to https and its error
// pages.

package v1beta1

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
