package clientchecks

// Checks is every check, in the order Run runs the quick ones. A new field
// of the spec gets a location or server in Spec, its files in Fixtures, and
// a check here.
var Checks = []Check{
	// Routing: routing.go.
	{Name: "redirectToHTTPS keeps host, path and query", Run: redirectToHTTPS},
	{Name: "a redirect replaces the prefix and keeps the rest", Run: redirectReplacesPrefix},
	{Name: "a prefix rewrite and the request headers reach the Service, the response headers the client", Run: rewriteAndHeaders},
	{Name: "weighted split", Run: weightedSplit},
	{Name: "backend TLS verified against the CA", Run: backendTLS},
	{Name: "static: SPA fallback, error page, expires", Run: static},
	{Name: "request matching: path types, headers, query, method, precedence", Run: requestMatching},
	{Name: "read timeouts", Slow: true, Run: readTimeouts},
	{Name: "WebSocket round trips, also after idling", Slow: true, Run: webSockets},
	// Protocols and the door: door.go.
	{Name: "gzip", Run: gzipped},
	{Name: "TLS: HTTP/2, HTTP/1.1, HSTS, versions", Run: tlsProtocols},
	{Name: "client certificates", Run: clientCertificates},
	{Name: "the client address and forwarded headers from a trusted hop only", Run: trustedHop},
	{Name: "allow and deny", Run: allowAndDeny},
	{Name: "basic auth", Run: basicAuth},
	{Name: "rate limit", Run: rateLimit},
	// Limits: limits.go.
	{Name: "rate limit keyed on a header, with exempt keys and clients", Run: keyedRateLimit},
	{Name: "connection limit keyed on a cookie", Run: cookieConnectionLimit},
	{Name: "body size per location, announced or chunked", Run: bodySizes},
	{Name: "header buffers per server: 431 beyond them", Run: headerBuffers},
	// External authentication: auth.go.
	{Name: "external authentication: sign-in, answer headers, cache, a service down", Run: externalAuth},
	{Name: "JSON access log", Run: accessLog},
	{Name: "worker processes from the CPU limit", Run: workers},
}
