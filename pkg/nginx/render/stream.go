package render

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// The stream context relays config.streams: TCP connections and UDP
// datagrams, below HTTP.
//
// A port whose streams all lack serverNames (at most one, as the CRD has
// it) is the stream's alone: nginx listens on it and relays each
// connection at once. A port where some stream names serverNames gets a
// router instead: a server that reads the TLS ClientHello (ssl_preread)
// and hands the connection, by its server name, to the stream that has
// the name, to the port's stream without serverNames, or to the port's
// TLS servers (config.servers), each listening on a unix socket of its
// own under the temp path. The router starts each handed connection with
// a PROXY protocol header, so the stream or server behind it sees the
// client's address rather than the router's; a stream strips it, or,
// where its backend asks for the PROXY protocol, relays it as it is
// (streamServerBehindRouter). The HTTP servers of such a port listen on its
// socket (server.go's listen), and http.go's variables take the client's
// port from the PROXY header there.

// streamPortsOf are the ports that have streams, in the order of
// spec.ports, with the streams of each.
func streamPortsOf(spec *v1beta1.NginxOperatorSpec) []streamPort {
	var out []streamPort
	for k, p := range spec.Ports {
		sp := streamPort{index: k, port: p}
		for i, s := range spec.Config.Streams {
			if s.Port == p.Name {
				sp.streams = append(sp.streams, i)
				sp.byName = sp.byName || len(s.ServerNames) > 0
			}
		}
		if len(sp.streams) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, srv := range spec.Config.Servers {
			if srv.Port != p.Name {
				continue
			}
			sp.servers = true
			for _, name := range srv.ServerNames {
				if !seen[name] {
					seen[name] = true
					sp.serverNames = append(sp.serverNames, name)
				}
			}
		}
		out = append(out, sp)
	}
	return out
}

// streamPort is one port with streams.
type streamPort struct {
	// index of the port in spec.ports.
	index int
	port  v1beta1.Port
	// streams on the port, by index in config.streams.
	streams []int
	// byName: some stream names serverNames, so a router reads them.
	byName bool
	// servers: TLS servers share the port (byName only, as the CRD has it);
	// serverNames are their names, each once.
	servers     bool
	serverNames []string
}

// portsBehindRouter are the names of the ports whose HTTP servers sit behind a
// router: they listen on the port's socket (httpSocket).
func portsBehindRouter(spec *v1beta1.NginxOperatorSpec) map[string]bool {
	var out map[string]bool
	for _, sp := range streamPortsOf(spec) {
		if sp.byName && sp.servers {
			if out == nil {
				out = map[string]bool{}
			}
			out[sp.port.Name] = true
		}
	}
	return out
}

// isUDP tells whether the port named name is a UDP port.
func isUDP(spec *v1beta1.NginxOperatorSpec, name string) bool {
	i := slices.IndexFunc(spec.Ports, func(p v1beta1.Port) bool { return p.Name == name })
	return i >= 0 && spec.Ports[i].Protocol == corev1.ProtocolUDP
}

// Where the servers behind a router listen, under the temp path.
func (r *renderer) streamSocket(i int) string {
	return "unix:" + r.temp("stream-"+strconv.Itoa(i)+".sock")
}
func (r *renderer) httpSocket(port string) string {
	return "unix:" + r.temp("https-"+port+".sock")
}

// closedUpstream is where a stream with no ready pod, and a router's
// connection that no stream or server takes, go: an upstream whose one
// server is down, so that nginx closes the connection (or drops the
// datagram) at once and logs "no live upstreams".
const closedUpstream = "stream_closed"

// stream is the stream context.
func (r *renderer) stream(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	cfg := spec.Config
	out := streamLog(cfg.AccessLog)
	if slices.ContainsFunc(cfg.Streams, func(s v1beta1.Stream) bool { return len(s.ServerNames) > 0 }) {
		// The routers' maps hold names of up to 253 characters, and a
		// port's server names beside its streams' (2,048 of a Gateway's):
		// nginx's defaults (buckets of one cache line, 2,048 entries)
		// refuse the whole configuration for either.
		out = append(out, conf.D("map_hash_bucket_size", "512"), conf.D("map_hash_max_size", "8192"))
	}
	if slices.ContainsFunc(cfg.Streams, func(s v1beta1.Stream) bool { return s.TLS != nil }) {
		out = append(out, tlsPolicy(cfg.TLS, "STREAM_TLS")...)
	}
	if cfg.RealIP != nil && cfg.RealIP.ProxyProtocol {
		// The load balancer's PROXY header names the client on the ports
		// nginx listens on itself; the servers behind a router trust only
		// the router (streamServerBehindRouter).
		for _, cidr := range cfg.TrustedProxies {
			out = append(out, conf.D("set_real_ip_from", cidr))
		}
	}
	blocks, upstreams, closed := r.streamUpstreams(spec)
	out = append(out, blocks...)
	var servers []conf.Directive
	for _, sp := range streamPortsOf(spec) {
		if !sp.byName {
			i := sp.streams[0]
			s := cfg.Streams[i]
			servers = append(servers, r.streamServer(s, r.portListen(cfg, sp.port, s.TLS != nil), upstreams[i], s.ProxyProtocol))
			continue
		}
		route, router, refuses := r.router(cfg, sp)
		closed = closed || refuses
		out = append(out, route)
		servers = append(servers, router)
		for _, i := range sp.streams {
			servers = append(servers, r.streamServerBehindRouter(cfg, i, upstreams[i]))
		}
	}
	if closed {
		out = append(out, conf.B("upstream", []string{closedUpstream}, conf.D("server", "127.0.0.1:1", "down")))
	}
	return append(out, servers...)
}

// streamUpstreams are the upstream blocks of the streams, and the name of
// each stream's: a stream with no ready pod gets closedUpstream (and
// closed says one does), and streams with the same upstream (the same
// servers and balancing) share the first one's block, as locations do
// (sharedUpstream).
func (r *renderer) streamUpstreams(spec *v1beta1.NginxOperatorSpec) (blocks []conf.Directive, names []string, closed bool) {
	names, byKey := make([]string, len(spec.Config.Streams)), map[string]string{}
	for i, s := range spec.Config.Streams {
		servers := r.weightedServers(streamBackends(s, isUDP(spec, s.Port)), backupsAllowed(s.LoadBalancingMethod))
		if len(servers) == 0 {
			names[i], closed = closedUpstream, true
			continue
		}
		body := append(streamBalancing(s.LoadBalancingMethod), servers...)
		key := directivesKey(body)
		if name, ok := byKey[key]; ok {
			names[i] = name
			continue
		}
		names[i] = "stream_" + strconv.Itoa(i)
		byKey[key] = names[i]
		blocks = append(blocks, conf.B("upstream", []string{names[i]}, body...))
	}
	return blocks, names, closed
}

// streamLog writes every connection (or UDP session) to the container's
// standard output when it ends, in a line of the access log's format.
func streamLog(l v1beta1.AccessLog) []conf.Directive {
	if l.Format == "JSON" {
		return []conf.Directive{
			conf.D("log_format", "stream_json", "escape=json", `{"time":"$time_iso8601","client_ip":"$remote_addr",`+
				`"protocol":"$protocol","status":$status,"bytes_sent":$bytes_sent,"bytes_received":$bytes_received,`+
				`"session_time":$session_time,"upstream":"$upstream_addr"}`),
			conf.D("access_log", "/dev/stdout", "stream_json"),
		}
	}
	return []conf.Directive{
		conf.D("log_format", "stream", `$remote_addr [$time_local] $protocol $status $bytes_sent $bytes_received $session_time "$upstream_addr"`),
		conf.D("access_log", "/dev/stdout", "stream"),
	}
}

// streamBalancingMethods are the stream module's directive and arguments
// for each method name but round_robin, its default; the hashes are by
// the client's address.
var streamBalancingMethods = map[string][]string{
	"least_conn":            {"least_conn"},
	"hash":                  {"hash", "$remote_addr"},
	"hash consistent":       {"hash", "$remote_addr", "consistent"},
	"random":                {"random"},
	"random two":            {"random", "two"},
	"random two least_conn": {"random", "two", "least_conn"},
}

func streamBalancing(method string) []conf.Directive {
	words, ok := streamBalancingMethods[method]
	if !ok {
		return nil
	}
	return []conf.Directive{conf.D(words[0], words[1:]...)}
}

// portListen are the listen directives of a port nginx listens on for
// streams: IPv4, and IPv6 where the Service has it; UDP for a UDP port,
// otherwise with TLS when the stream terminates it, and the PROXY
// protocol when a load balancer in front speaks it.
func (r *renderer) portListen(cfg v1beta1.NginxConfig, p v1beta1.Port, tls bool) []conf.Directive {
	var options []string
	switch {
	case p.Protocol == corev1.ProtocolUDP:
		options = append(options, "udp")
	case tls:
		options = append(options, "ssl")
	}
	if p.Protocol != corev1.ProtocolUDP && cfg.RealIP != nil && cfg.RealIP.ProxyProtocol {
		options = append(options, "proxy_protocol")
	}
	port := itoa(p.ContainerPort)
	out := []conf.Directive{conf.D("listen", append([]string{port}, options...)...)}
	if r.opts.IPv6 {
		out = append(out, conf.D("listen", append([]string{"[::]:" + port}, options...)...))
	}
	return out
}

// streamServerBehindRouter is the server of stream i behind its port's router,
// on the stream's socket. It reads the router's PROXY header and takes
// its address as the client's, unless the stream passes TLS through to a
// backend that asks for the PROXY protocol: that backend gets the
// router's header as it is, since a header of this server's own would
// name its socket as the address the client connected to, which a PROXY
// protocol reader refuses. (The CRD refuses a stream that terminates TLS
// behind a router and sends the PROXY protocol, for that reason.)
func (r *renderer) streamServerBehindRouter(cfg v1beta1.NginxConfig, i int, upstream string) conf.Directive {
	s := cfg.Streams[i]
	listen := []string{r.streamSocket(i)}
	if s.TLS != nil {
		listen = append(listen, "ssl")
	}
	relayHeader := s.ProxyProtocol && s.TLS == nil
	if relayHeader {
		return r.streamServer(s, []conf.Directive{conf.D("listen", listen...)}, upstream, false)
	}
	return r.streamServer(s, []conf.Directive{conf.D("listen", append(listen, "proxy_protocol")...), conf.D("set_real_ip_from", "unix:")}, upstream, false)
}

// streamServer is one stream's server: where it listens, its
// certificate, and how it relays to its upstream, starting each
// connection with a PROXY protocol header when sendProxy.
func (r *renderer) streamServer(s v1beta1.Stream, listen []conf.Directive, upstream string, sendProxy bool) conf.Directive {
	body := listen
	if s.TLS != nil {
		cert, key := r.opts.Paths.TLSFiles(s.TLS.SecretName)
		body = append(body, conf.D("ssl_certificate", cert), conf.D("ssl_certificate_key", key))
	}
	body = append(body,
		conf.D("proxy_pass", upstream),
		conf.D("proxy_connect_timeout", itoa(s.ConnectTimeoutSeconds)+"s"),
		conf.D("proxy_timeout", itoa(s.IdleTimeoutSeconds)+"s"),
	)
	if sendProxy {
		body = append(body, conf.D("proxy_protocol", "on"))
	}
	if s.ExpectedResponses != nil {
		body = append(body, conf.D("proxy_responses", itoa(*s.ExpectedResponses)))
	}
	return conf.B("server", nil, body...)
}

// routerIdleTimeout is how long a router relays a connection without a
// byte: as long as anything behind it may, since the stream or server
// that took the connection times it out by its own settings.
const routerIdleTimeout = "86400s"

// router is the map, of a port with a router, from TLS server name to the
// socket of the stream or servers that take the name, and its server;
// refuses tells that some names go to closedUpstream.
func (r *renderer) router(cfg v1beta1.NginxConfig, sp streamPort) (route, server conf.Directive, refuses bool) {
	variable := "$stream_route_" + strconv.Itoa(sp.index)
	entries := []conf.Directive{conf.D("hostnames")}
	fallback := closedUpstream
	if sp.servers {
		fallback = r.httpSocket(sp.port.Name)
	}
	for _, i := range sp.streams {
		s := cfg.Streams[i]
		if len(s.ServerNames) == 0 {
			fallback = r.streamSocket(i)
			continue
		}
		for _, name := range s.ServerNames {
			// A backslash makes any name a name: "default", "include",
			// "hostnames" and "volatile" are parameters of map otherwise
			// (nginx strips it, before it reads a wildcard).
			entries = append(entries, conf.D(`\`+name, r.streamSocket(i)))
		}
	}
	// The servers' own names go to them, also where a stream's wildcard
	// covers them: the map takes an exact name, or the longest wildcard,
	// over a shorter wildcard, as a server name does in HTTP.
	for _, name := range sp.serverNames {
		if name != "_" { // the catch-all: default below
			entries = append(entries, conf.D(`\`+name, r.httpSocket(sp.port.Name)))
		}
	}
	entries = append(entries, conf.D("default", fallback))
	route = conf.B("map", []string{"$ssl_preread_server_name", variable}, entries...)
	body := append(r.portListen(cfg, sp.port, false),
		conf.D("ssl_preread", "on"),
		conf.D("proxy_pass", variable),
		conf.D("proxy_protocol", "on"),
		conf.D("proxy_timeout", routerIdleTimeout),
		conf.D("access_log", "off"),
	)
	return route, conf.B("server", nil, body...), fallback == closedUpstream
}
