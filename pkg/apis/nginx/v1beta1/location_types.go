// nginx's location blocks: Location, its static, respond and redirect
// handlers, and CORS. The proxy handler is in proxy_types.go, matching in
// match_types.go.

package v1beta1

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
	// is a regular expression that must match the whole path, in the
	// syntax nginx's PCRE2 and RE2 read alike (Documentation/
	// nginxoperator.md, "Regular expressions"): no named groups, no \x{…}
	// or \p, printable ASCII.
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
