package render

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// protocol is how a proxy location talks to its Services: nginx's module
// (proxy or grpc, the prefix of its directives), the scheme of its pass
// directive, and whether it speaks TLS.
type protocol struct {
	module, scheme string
	tls            bool
}

// grpc reports a gRPC backend.
func (b protocol) grpc() bool { return b.module == "grpc" }

// protocolOf is p's protocol. Without backendProtocol, tls decides between
// HTTP and HTTPS, as before the field existed.
func protocolOf(p *v1beta1.ProxyLocation) protocol {
	switch p.BackendProtocol {
	case "GRPC":
		return protocol{"grpc", "grpc://", false}
	case "GRPCS":
		return protocol{"grpc", "grpcs://", true}
	case "HTTPS":
		return protocol{"proxy", "https://", true}
	case "HTTP":
		return protocol{"proxy", "http://", false}
	}
	if p.TLS != nil {
		return protocol{"proxy", "https://", true}
	}
	return protocol{"proxy", "http://", false}
}

// upstreamName is the name of the upstream block of location id.
func upstreamName(id string) string { return "backend_" + id }

// proxy forwards to an upstream block (declared at the http level, see
// httpBlocks), shared by every location that sends to the same backends
// alike (sharedUpstream), which is what lets nginx keep connections to the
// Services open (keepalive), split requests by weight and balance them by
// the location's method.
func (r *renderer) proxy(id string, l v1beta1.Location, authHeaders []header) []conf.Directive {
	p := l.Proxy
	b := protocolOf(p)
	if len(r.upstreamServers(p)) == 0 {
		// No backend has a ready endpoint: an upstream needs a server,
		// and the client is best told the Service is unavailable (a gRPC
		// client, in its own terms).
		if b.grpc() {
			return append(grpcErrorPages(), conf.D("return", "503"))
		}
		return []conf.Directive{conf.D("return", "503")}
	}
	body := []conf.Directive{conf.D(b.module+"_pass", b.scheme+r.upstreamOf(id))}
	body = append(body, mirrorDirectives(r.mirrorsOf(id, p))...)
	if !b.grpc() {
		body = append(body, conf.D("proxy_http_version", "1.1"))
	}
	for _, h := range requestHeaders(id, l, authHeaders) {
		// HTTP/2 has no Connection or Upgrade: a gRPC Service refuses a
		// request with them.
		if b.grpc() && (h.Name == "Upgrade" || h.Name == "Connection") {
			continue
		}
		body = append(body, conf.D(b.module+"_set_header", h.Name, h.Value))
	}
	w := waitsOf(p)
	body = append(body,
		conf.D(b.module+"_connect_timeout", w.connect),
		conf.D(b.module+"_send_timeout", w.send),
		conf.D(b.module+"_read_timeout", w.read),
	)
	body = append(body, buffering(p.Buffering)...)
	if b.tls {
		body = append(body, r.backendTLS(b.module, p)...)
	}
	body = append(body, r.rewrite(l.Path, p.URLRewrite)...)
	if p.InterceptErrors {
		body = append(body, conf.D("proxy_intercept_errors", "on"))
	}
	body = append(body, retry(b.module, p.Retry, w.tries)...)
	if p.SessionAffinity != nil {
		body = append(body, affinityCookie(id))
	}
	if b.grpc() {
		body = append(body, grpcErrorPages()...)
	}
	return body
}

// retry is which failures send a request on to another endpoint, and how
// many endpoints and how long it may try (tries, see waitsOf). Unset,
// nginx's defaults apply (a connection error or a timeout moves on, to
// every endpoint and the backup in turn), but for the time: no other try
// starts once the read timeout has passed since the first. A connect
// timeout to a pod that vanished still moves on, while a read timeout,
// which comes only after the read timeout, answers 504 at once: nginx's
// unbounded default sent a slow request on to every endpoint, so the
// client waited N+1 read timeouts and the Service ran the request N+1
// times, just when it was slowest.
func retry(module string, rt *v1beta1.ProxyRetry, tries string) []conf.Directive {
	if rt == nil {
		return []conf.Directive{conf.D(module+"_next_upstream_timeout", tries)}
	}
	conditions := slices.Clone(rt.Conditions)
	if rt.NonIdempotent {
		conditions = append(conditions, "non_idempotent")
	}
	return []conf.Directive{
		conf.D(module+"_next_upstream", conditions...),
		conf.D(module+"_next_upstream_tries", itoa(rt.Tries)),
		conf.D(module+"_next_upstream_timeout", tries),
	}
}

func buffering(b *v1beta1.ProxyBuffering) []conf.Directive {
	if b == nil {
		return nil
	}
	on := "on"
	if b.Disabled {
		on = "off"
	}
	// nginx's default busy size (twice the larger buffer) breaks its own
	// rule for few or small buffers; the larger buffer is always within it,
	// which the CRD checks.
	busy := max(b.HeaderBufferKiB, b.BufferKiB)
	return []conf.Directive{
		conf.D("proxy_buffering", on),
		conf.D("proxy_buffer_size", itoa(b.HeaderBufferKiB)+"k"),
		conf.D("proxy_buffers", itoa(b.Buffers), itoa(b.BufferKiB)+"k"),
		conf.D("proxy_busy_buffers_size", itoa(busy)+"k"),
	}
}

// backendTLS names the Service in SNI (by default its cluster DNS name: the
// upstream's own name means nothing to it) and verifies its certificate
// when a CA is given.
// module is proxy or grpc; without tls, nginx encrypts and checks nothing.
func (r *renderer) backendTLS(module string, p *v1beta1.ProxyLocation) []conf.Directive {
	t := ptr.Deref(p.TLS, v1beta1.BackendTLS{})
	name := t.Hostname
	if name == "" {
		service := p.Service
		if len(p.Backends) > 0 {
			service = p.Backends[0].Service // the CRD requires hostname for several
		}
		name = ServiceDNSName(service, r.opts.Namespace)
	}
	out := []conf.Directive{
		conf.D(module+"_ssl_server_name", "on"),
		conf.D(module+"_ssl_name", name),
		conf.D(module+"_ssl_protocols", "TLSv1.2", "TLSv1.3"),
	}
	if t.CACertificate != nil {
		out = append(out,
			conf.D(module+"_ssl_verify", "on"),
			conf.D(module+"_ssl_trusted_certificate", r.opts.Paths.CAFile(*t.CACertificate)),
		)
	}
	return out
}

// rewrite changes the path sent on. After "rewrite ... break" nginx sends
// the rewritten path, escaped again, with the original query.
func (r *renderer) rewrite(locationPath string, rw *v1beta1.URLRewrite) []conf.Directive {
	if rw == nil || rw.Path == nil {
		return nil
	}
	replacement, ok := r.pathModifier("urlRewrite", rw.Path)
	if !ok {
		return nil
	}
	if rw.Path.Type == pathReplaceFull {
		return []conf.Directive{conf.D("rewrite", "^", replacement, "break")}
	}
	var out []conf.Directive
	for _, rule := range prefixRules(locationPath, replacement) {
		out = append(out, conf.D("rewrite", rule.pattern+"$", rule.replacement, "break"))
	}
	return out
}

// header is one header of a request or response as rendered.
type header struct{ Name, Value string }

// requestHeaders are the headers a proxy location sends: the forwarding
// headers every proxy sets, then spec's requestHeaders, which replace a
// default of the same name. An empty value makes nginx drop the header.
// An added header joins the request's own value through a map
// (requestHeaderMaps). Last come the headers of external authentication's
// answer (authHeaders), which nothing the spec or the client says
// replaces.
func requestHeaders(id string, l v1beta1.Location, authHeaders []header) []header {
	host := varHostWithPort
	if rw := l.Proxy.URLRewrite; rw != nil && rw.Hostname != "" {
		host = rw.Hostname
	}
	out := []header{
		{"Host", host},
		{"Upgrade", "$http_upgrade"},
		{"Connection", varConnectionUpgrade},
		{"X-Real-IP", "$remote_addr"},
		{"X-Forwarded-For", varForwardedFor},
		{"X-Forwarded-Proto", varForwardedProto},
		{"X-Forwarded-Host", varForwardedHost},
		{"X-Forwarded-Port", varForwardedPort},
	}
	set := func(name, value string) {
		for i := range out {
			if strings.EqualFold(out[i].Name, name) {
				out[i].Value = value
				return
			}
		}
		out = append(out, header{name, value})
	}
	if m := l.RequestHeaders; m != nil {
		for _, h := range m.Set {
			set(h.Name, h.Value)
		}
		for i, h := range m.Add {
			set(h.Name, addedHeaderVariable(id, i))
		}
		for _, name := range m.Remove {
			set(name, "")
		}
	}
	for _, h := range authHeaders {
		set(h.Name, h.Value)
	}
	return out
}

// addedHeaderVariable holds the value of the i-th added request header of
// location id.
func addedHeaderVariable(id string, i int) string {
	return "$request_header_" + id + "_" + strconv.Itoa(i)
}

// requestHeaderMaps join each added request header to the request's own
// value of it. nginx offers a request header's current value as
// $http_<name> (the CRD keeps add's names to letters, digits and '-'); a
// comma is how HTTP joins the values of a repeated header.
func requestHeaderMaps(id string, l v1beta1.Location) []conf.Directive {
	if l.RequestHeaders == nil {
		return nil
	}
	var out []conf.Directive
	for i, h := range l.RequestHeaders.Add {
		current := "$http_" + strings.ReplaceAll(strings.ToLower(h.Name), "-", "_")
		out = append(out, conf.B("map", []string{current, addedHeaderVariable(id, i)},
			conf.D("default", current+","+h.Value),
			conf.D("", h.Value),
		))
	}
	return out
}
