package nginx

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// jsonLogFormat is the access log line of format JSON. escape=json makes
// nginx escape every value for a JSON string; the fields that nginx always
// fills with a number are written as numbers. upstream_time is a string: it
// is empty without a Service and lists one time per Service tried.
const jsonLogFormat = `{"time":"$time_iso8601","request_id":"$request_id",` +
	`"method":"$request_method","uri":"$request_uri","status":$status,` +
	`"bytes":$body_bytes_sent,"request_time":$request_time,` +
	`"upstream_time":"$upstream_response_time","client_ip":"$remote_addr",` +
	`"user_agent":"$http_user_agent","host":"$host","protocol":"$server_protocol"}`

// accessLog writes every request to the container's standard output in
// the format named after spec's: nginx's own "combined", or "json" defined
// here.
func accessLog(l v1beta1.AccessLog) []conf.Directive {
	var out []conf.Directive
	if l.Format == "JSON" {
		out = append(out, conf.D("log_format", "json", "escape=json", jsonLogFormat))
	}
	return append(out, conf.D("access_log", "/dev/stdout", strings.ToLower(l.Format)))
}

// workerProcesses is one nginx worker per CPU of the container's limit,
// rounded up. nginx's "auto" counts the node's CPUs: on a large node a
// container limited to one CPU would run dozens of workers, each with its
// own connections and caches, all throttled together.
func workerProcesses(r corev1.ResourceRequirements) string {
	cpu, ok := r.Limits[corev1.ResourceCPU]
	if !ok || cpu.IsZero() {
		return "auto"
	}
	return itoa(int32(max(1, (cpu.MilliValue()+999)/1000)))
}

// compression gzips the listed types. Vary tells caches that the body
// depends on Accept-Encoding; "proxied any" compresses for clients behind
// a proxy too (nginx's default skips requests with a Via header).
func compression(g *v1beta1.Gzip) []conf.Directive {
	if g == nil {
		return nil
	}
	out := []conf.Directive{
		conf.D("gzip", "on"),
		conf.D("gzip_comp_level", itoa(g.Level)),
		conf.D("gzip_min_length", itoa(g.MinLengthBytes)),
		conf.D("gzip_vary", "on"),
		conf.D("gzip_proxied", "any"),
	}
	// nginx always compresses text/html and warns when it is listed.
	types := slices.DeleteFunc(slices.Clone(g.Types), func(t string) bool { return t == "text/html" })
	if len(types) > 0 {
		out = append(out, conf.D("gzip_types", types...))
	}
	return out
}

// tlsPolicy applies to every TLS server: nginx picks the protocol and
// cipher on the port's default server, before SNI names another. Session
// tickets are off: their keys would differ between pods and never rotate;
// the shared cache resumes sessions within a pod instead.
func tlsPolicy(p v1beta1.TLSPolicy) []conf.Directive {
	return []conf.Directive{
		conf.D("ssl_protocols", p.Protocols...),
		conf.D("ssl_ciphers", strings.Join(p.Ciphers, ":")),
		conf.D("ssl_prefer_server_ciphers", "off"),
		conf.D("ssl_session_cache", "shared:TLS:"+itoa(p.SessionCacheMiB)+"m"),
		conf.D("ssl_session_timeout", itoa(p.SessionTimeoutMinutes)+"m"),
		conf.D("ssl_session_tickets", "off"),
	}
}

// serverTLS is a TLS server's certificate, HSTS header and client
// certificate check.
func (r *renderer) serverTLS(t *v1beta1.TLS) []conf.Directive {
	if t == nil {
		return nil
	}
	dir := r.opts.Paths.TLS + "/" + t.SecretName
	out := []conf.Directive{
		conf.D("ssl_certificate", dir+"/tls.crt"),
		conf.D("ssl_certificate_key", dir+"/tls.key"),
	}
	out = append(out, hsts(t)...)
	if c := t.ClientCertificates; c != nil {
		out = append(out,
			conf.D("ssl_client_certificate", r.opts.Paths.CAFile(c.CACertificate)),
			conf.D("ssl_verify_client", "on"),
			conf.D("ssl_verify_depth", itoa(c.VerifyDepth)),
		)
	}
	return out
}

// hsts is the Strict-Transport-Security header of a TLS server, on every
// response ("always": errors too). A location with add_header of its own
// inherits none of the server's, so locations repeat it.
func hsts(t *v1beta1.TLS) []conf.Directive {
	if t == nil || t.HSTS == nil {
		return nil
	}
	// The CRD defaults maxAgeSeconds; a pointer keeps an explicit 0.
	value := "max-age=" + itoa(ptr.Deref(t.HSTS.MaxAgeSeconds, 0))
	if t.HSTS.IncludeSubDomains {
		value += "; includeSubDomains"
	}
	if t.HSTS.Preload {
		value += "; preload"
	}
	return []conf.Directive{conf.D("add_header", "Strict-Transport-Security", value, "always")}
}

// realIP replaces the client address ($remote_addr) with the one a trusted
// proxy reports. Recursive: with several trusted hops in X-Forwarded-For,
// the last address that is not one of them is the client.
func realIP(cfg v1beta1.NginxConfig) []conf.Directive {
	if cfg.RealIP == nil {
		return nil
	}
	var out []conf.Directive
	for _, cidr := range cfg.TrustedProxies {
		out = append(out, conf.D("set_real_ip_from", cidr))
	}
	header := cfg.RealIP.Header
	if cfg.RealIP.ProxyProtocol {
		header = "proxy_protocol"
	}
	return append(out, conf.D("real_ip_header", header), conf.D("real_ip_recursive", "on"))
}
