package render

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// Variables the http level defines for proxy locations and redirects. nginx
// evaluates a map only when a request uses its variable, so they cost
// nothing where no location needs them.
const (
	// varTrustedHop is 1 when the client is one of spec.config.trustedProxies.
	varTrustedHop = "$trusted_hop"
	// varConnectionUpgrade is the Connection header sent upstream: "upgrade"
	// for a WebSocket (or other) upgrade, otherwise none, which keeps the
	// upstream connection open for the next request.
	varConnectionUpgrade = "$connection_upgrade"
	// varHostWithPort is the Host the client sent, port included ($host
	// drops it), or the server's name for a request without one.
	varHostWithPort = "$host_with_port"
	// The X-Forwarded-* values: the trusted hop's own headers when the
	// client is one, otherwise what nginx saw.
	varForwardedFor   = "$forwarded_for"
	varForwardedProto = "$forwarded_proto"
	varForwardedHost  = "$forwarded_host"
	varForwardedPort  = "$forwarded_port"
	// varClientPort is the port the client used (requestVariables).
	varClientPort = "$client_port"
	// varForwardedPortSuffix is ":<port>" for a URL, or nothing for the
	// scheme's default port.
	varForwardedPortSuffix = "$forwarded_port_suffix"
)

// requestVariables defines the variables above. Only a trusted hop's
// X-Forwarded-* headers are believed: anyone else could claim HTTPS or
// another host, and applications build links and security decisions on
// them (ingress-nginx's use-forwarded-headers, off by default).
//
// The hop is whoever sent the HTTP request: the connection's peer
// ($realip_remote_addr keeps it when realIP replaces $remote_addr with a
// header's address), or, behind the PROXY protocol, the address the load
// balancer reports, since a load balancer that speaks it adds no headers.
//
// With ports behind a router (a stream router in front of their TLS servers, see
// stream.go), the servers behind a router take the hop, and the port the
// client came in on, from the router's PROXY header: the connection's peer
// is the router's socket there, and its local port none.
func requestVariables(cfg v1beta1.NginxConfig, servicePorts map[int32]int32, routed bool) []conf.Directive {
	hop := "$realip_remote_addr"
	if cfg.RealIP != nil && cfg.RealIP.ProxyProtocol {
		hop = "$remote_addr"
	}
	out, hop, listenPort := routedVariables(routed, hop)
	mapBlock := func(source, variable string, entries ...conf.Directive) conf.Directive {
		return conf.B("map", []string{source, variable}, entries...)
	}
	geo := []conf.Directive{conf.D("default", "0")}
	for _, cidr := range cfg.TrustedProxies {
		geo = append(geo, conf.D(cidr, "1"))
	}
	// The port the client used: the one its Host names, as a client that
	// came to a node port or the pod's address does; otherwise, as HTTP
	// has it, the port of the Service it came through (the default port
	// of the scheme for a browser, which leaves it out there).
	portOfService := listenPort
	if len(servicePorts) > 0 {
		portOfService = varServicePort
	}
	out = append(out,
		conf.B("geo", []string{hop, varTrustedHop}, geo...),
		mapBlock("$http_upgrade", varConnectionUpgrade,
			conf.D("default", "upgrade"),
			conf.D("", ""),
		),
		mapBlock("$http_host", varHostWithPort,
			conf.D("default", "$http_host"),
			conf.D("", "$host"),
		),
		mapBlock("$http_host", varClientPort,
			conf.D("default", portOfService),
			conf.D("~:([0-9]{1,5})$", "$1"),
		),
		// A trusted hop's list, with the hop appended. nginx's
		// $proxy_add_x_forwarded_for would append $remote_addr, which
		// realIP may have replaced by the client's address.
		mapBlock(varTrustedHop+":$http_x_forwarded_for", varForwardedFor,
			conf.D("default", hop),
			conf.D("~^1:(.+)$", "$1, "+hop),
		),
		// The keys join the trust bit and the header, so one map decides
		// both: "1https" is a trusted hop that terminated TLS.
		mapBlock(varTrustedHop+"$http_x_forwarded_proto", varForwardedProto,
			conf.D("default", "$scheme"),
			conf.D("1http", "http"),
			conf.D("1https", "https"),
		),
		mapBlock(varTrustedHop+"$http_x_forwarded_host", varForwardedHost,
			conf.D("default", varHostWithPort),
			conf.D("~^1.", "$http_x_forwarded_host"),
		),
		// A trusted hop that names a scheme but no port used the scheme's.
		mapBlock(varTrustedHop+":$http_x_forwarded_port:$http_x_forwarded_proto", varForwardedPort,
			conf.D("default", varClientPort),
			conf.D("~^1:([0-9]{1,5}):", "$1"),
			conf.D("1::https", "443"),
			conf.D("1::http", "80"),
		),
		mapBlock(varForwardedProto+":"+varForwardedPort, varForwardedPortSuffix,
			conf.D("default", ":"+varForwardedPort),
			conf.D("http:80", ""),
			conf.D("https:443", ""),
		),
	)
	return append(out, servicePortMap(servicePorts, listenPort)...)
}

// routedVariables are the maps of the hop and the client's port where
// servers listen behind a stream router: there, the connection's peer is
// the router's socket ("unix:"), and the client and its port are the
// router's PROXY header's. Without routed ports, they are hop and
// $server_port as they are.
func routedVariables(routed bool, hop string) (maps []conf.Directive, hopVariable, listenPort string) {
	if !routed {
		return nil, hop, "$server_port"
	}
	if hop != "$remote_addr" {
		maps = append(maps, conf.B("map", []string{hop, varHop}, conf.D("default", hop), conf.D("unix:", "$remote_addr")))
		hop = varHop
	}
	maps = append(maps, conf.B("map", []string{"$server_port:$proxy_protocol_server_port", varListenPort},
		conf.D("default", "$server_port"),
		conf.D("~^:([0-9]+)$", "$1"),
	))
	return maps, hop, varListenPort
}

// varHop and varListenPort are the hop and the port the client came in on
// where some servers listen behind a stream router (requestVariables).
const (
	varHop        = "$hop_addr"
	varListenPort = "$listen_port"
)

// varServicePort is the Service port of the port a request came in on.
const varServicePort = "$service_port"

// servicePortMap defines varServicePort where a Service port differs from
// the container port nginx listens on, listenPort; without one the
// client's port is listenPort.
func servicePortMap(ports map[int32]int32, listenPort string) []conf.Directive {
	if len(ports) == 0 {
		return nil
	}
	entries := []conf.Directive{conf.D("default", listenPort)}
	for _, container := range slices.Sorted(maps.Keys(ports)) {
		entries = append(entries, conf.D(itoa(container), itoa(ports[container])))
	}
	return []conf.Directive{conf.B("map", []string{listenPort, varServicePort}, entries...)}
}

// partVariable is the variable holding the request's header, cookie or
// query parameter named name (source Header, Cookie or QueryParameter), and
// the http-level map defining it where nginx has none: its $cookie_ and
// $arg_ names end at the first '-', so $cookie_session-id would read the
// cookie "session" followed by "-id". Such a cookie or parameter is read
// from the whole Cookie header or query, by name regardless of case as
// nginx's variables do, into "$part_<id>". An absent part is empty.
func partVariable(id, source, name string) (string, []conf.Directive) {
	var whole, pattern string
	switch source {
	case "Header":
		return headerVariable(name), nil
	case "Cookie":
		if !strings.Contains(name, "-") {
			return "$cookie_" + name, nil
		}
		whole, pattern = "$http_cookie", `~*(?:^|;\s*)`+regexp.QuoteMeta(name)+`=([^;]*)`
	default:
		if !strings.Contains(name, "-") {
			return "$arg_" + name, nil
		}
		whole, pattern = "$args", "~*(?:^|&)"+regexp.QuoteMeta(name)+"=([^&]*)"
	}
	part := "$part_" + id
	return part, []conf.Directive{conf.B("map", []string{whole, part}, conf.D(pattern, "$1"), conf.D("default", ""))}
}
