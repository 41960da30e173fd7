package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// http is the http context: protocol settings, the operator's own servers
// (health, stub_status), the http-level blocks the user's locations need,
// and the user's servers.
func (r *renderer) http(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	cfg := spec.Config
	out := []conf.Directive{
		conf.D("include", r.opts.Paths.MimeTypes),
		conf.D("default_type", "application/octet-stream"),
		conf.D("server_tokens", "off"),
	}
	out = append(out, accessLog(cfg.AccessLog)...)
	if r.countRequests {
		out = append(out, r.requestLog()...)
	}
	out = append(out,
		conf.D("sendfile", "on"),
		conf.D("keepalive_timeout", itoa(cfg.KeepaliveTimeoutSeconds)),
		conf.D("client_max_body_size", cfg.ClientMaxBodySize),
	)
	out = append(out, clientBody("", cfg.ClientBodyBufferKiB)...)
	out = append(out, headerBuffers(cfg.ClientHeaderBuffers)...)
	out = append(out,
		// Room for the longest server name the schema allows (253
		// characters) and for 32 servers of 32 names each: nginx's defaults
		// (buckets of one cache line, 512 entries) refuse such configs.
		conf.D("server_names_hash_bucket_size", "512"),
		conf.D("server_names_hash_max_size", "4096"),
		// Room for the longest header name the schema allows (128
		// characters) in the hashes of proxy_set_header and
		// proxy_hide_header: nginx's default bucket of 64 bytes refuses it.
		conf.D("proxy_headers_hash_bucket_size", "256"),
		// The root filesystem is read-only: every temp path lives on the writable emptyDir.
		conf.D("client_body_temp_path", r.temp("client_body")),
		conf.D("proxy_temp_path", r.temp("proxy")),
		conf.D("fastcgi_temp_path", r.temp("fastcgi")),
		conf.D("uwsgi_temp_path", r.temp("uwsgi")),
		conf.D("scgi_temp_path", r.temp("scgi")),
	)
	out = append(out, compression(cfg.Gzip)...)
	if slices.ContainsFunc(cfg.Servers, func(s v1beta1.Server) bool { return s.TLS != nil }) {
		out = append(out, tlsPolicy(cfg.TLS, "TLS")...)
	}
	out = append(out, realIP(cfg)...)
	out = append(out, requestVariables(cfg, r.opts.ServicePorts, len(r.behindRouter) > 0)...)
	out = append(out, r.healthServer())
	if spec.Metrics.Enabled {
		out = append(out, r.stubStatusServer())
	}
	// Upstreams, maps and rate limit zones are http-level blocks the
	// servers' locations refer to.
	out = append(out, r.httpBlocks(spec)...)
	return append(out, r.servers(spec)...)
}

// httpBlocks are the http-level blocks the servers refer to, in the order
// of the servers and their locations: for each server its limits' zones,
// then for each location what locationBlocks lists.
func (r *renderer) httpBlocks(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	var out []conf.Directive
	if hasCORS(spec) {
		out = append(out, corsPreflightMap())
	}
	out = append(out, r.authBlocks(spec)...)
	for i, s := range spec.Config.Servers {
		if s.RedirectToHTTPS != nil {
			continue // a redirecting server has nothing else
		}
		id := serverID(i)
		out = append(out, limitZones(id, serverGuards(s))...)
		for j, l := range s.Locations {
			out = append(out, r.locationBlocks(locationID(i, j), l)...)
		}
		out = append(out, r.matching(i, serverLocations(s)).maps()...)
	}
	return out
}

// locationBlocks are the http-level blocks of location id: a proxy's
// affinity key or never-empty hash key, upstream, added request headers,
// affinity cookie and mirrors; a redirect's path; its limits' zones.
func (r *renderer) locationBlocks(id string, l v1beta1.Location) []conf.Directive {
	var out []conf.Directive
	// A proxy without servers answers 503 and refers to nothing.
	if p := l.Proxy; p != nil {
		if servers := r.upstreamServers(p); len(servers) > 0 {
			a := p.SessionAffinity
			if a != nil {
				out = append(out, affinityKeyMap(id, a.Cookie))
			}
			out = append(out, hashKeyMap(id, p)...)
			if block, fresh := r.sharedUpstream(id, l, servers); fresh {
				out = append(out, block)
			}
			out = append(out, requestHeaderMaps(id, l)...)
			if a != nil {
				out = append(out, affinityCookieMap(id, cookiePath(l), a.Cookie))
			}
			out = append(out, r.mirrorBlocks(r.mirrorsOf(id, p))...)
		}
	}
	out = append(out, redirectMap(id, l)...)
	if l.CORS != nil {
		out = append(out, corsMaps(id, l.CORS)...)
	}
	return append(out, limitZones(id, locationGuards(l))...)
}

// healthServer answers the kubelet's probes, on the pod's address of the
// cluster's primary family, without touching user content.
func (r *renderer) healthServer() conf.Directive {
	port := itoa(int32(r.opts.HealthPort))
	body := []conf.Directive{conf.D("listen", port)}
	if r.opts.IPv6 {
		body = append(body, conf.D("listen", "[::]:"+port))
	}
	var declared []conf.Directive
	if r.countRequests {
		declared = declareRequestVariables()
	}
	return conf.B("server", nil, append(body,
		conf.D("access_log", "off"),
		conf.B("location", []string{"=", "/healthz"}, append(declared, conf.D("return", "200", "ok\n"))...),
	)...)
}

// stubStatusServer serves stub_status on loopback only: the exporter
// sidecar shares the pod's network namespace; nothing outside the pod can
// reach it.
func (r *renderer) stubStatusServer() conf.Directive {
	return conf.B("server", nil,
		conf.D("listen", "127.0.0.1:"+strconv.Itoa(r.opts.StubStatusPort)),
		conf.D("access_log", "off"),
		conf.B("location", []string{"=", "/stub_status"}, conf.D("stub_status")),
	)
}

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

// tlsPolicy applies to every TLS server (or TLS stream, with a cache
// zone of its own: nginx refuses one zone for two modules): nginx picks
// the protocol and cipher on the port's default server, before SNI names
// another. Session tickets are off: their keys would differ between pods
// and never rotate; the shared cache resumes sessions within a pod
// instead.
func tlsPolicy(p v1beta1.TLSPolicy, cacheZone string) []conf.Directive {
	return []conf.Directive{
		conf.D("ssl_protocols", p.Protocols...),
		conf.D("ssl_ciphers", strings.Join(p.Ciphers, ":")),
		conf.D("ssl_prefer_server_ciphers", "off"),
		conf.D("ssl_session_cache", "shared:"+cacheZone+":"+itoa(p.SessionCacheMiB)+"m"),
		conf.D("ssl_session_timeout", itoa(p.SessionTimeoutMinutes)+"m"),
		conf.D("ssl_session_tickets", "off"),
	}
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
