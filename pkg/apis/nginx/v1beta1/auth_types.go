// Access control of servers and locations: by client address, by HTTP
// basic authentication, and by an external authentication service.

package v1beta1

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
