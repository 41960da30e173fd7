package render

import (
	"cmp"
	"strconv"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// servers renders spec.config.servers, or one default server on the first
// port serving the content when there are none.
func (r *renderer) servers(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	ports := map[string]v1beta1.Port{}
	for _, p := range spec.Ports {
		ports[p.Name] = p
	}
	servers := spec.Config.Servers
	if len(servers) == 0 && len(spec.Config.Streams) == 0 && len(spec.Ports) > 0 {
		servers = []v1beta1.Server{{Port: spec.Ports[0].Name, DefaultServer: true}}
	}
	var out []conf.Directive
	for i, s := range servers {
		block := r.listen(spec.Config, s, ports[s.Port])
		if len(s.ServerNames) > 0 {
			block = append(block, conf.D("server_name", s.ServerNames...))
		}
		if s.RedirectToHTTPS != nil {
			// $host is the request's host without its port, lower-cased;
			// $request_uri is its path and query exactly as the client sent
			// them.
			target := "https://$host"
			port := ptr.Deref(s.RedirectToHTTPS.Port, r.opts.HTTPSPort)
			if port != 0 && port != 443 {
				target += ":" + itoa(port)
			}
			block = append(block, headerTooLarge()...)
			block = append(block, conf.D("return", itoa(s.RedirectToHTTPS.Code), target+"$request_uri"))
			out = append(out, conf.B("server", nil, block...))
			continue
		}
		block = append(block, r.serverTLS(s.TLS)...)
		block = append(block, conf.D("root", r.opts.Paths.Content), conf.D("index", "index.html"))
		block = append(block, clientBody(s.ClientMaxBodySize, s.ClientBodyBufferKiB)...)
		block = append(block, headerBuffers(s.ClientHeaderBuffers)...)
		block = append(block, r.access(serverID(i), serverGuards(s))...)
		block = append(block, headerTooLarge()...)
		block = append(block, r.errorPages(i, s.ErrorPages)...)
		block = append(block, r.locations(i, s, cmp.Or(s.ClientMaxBodySize, spec.Config.ClientMaxBodySize))...)
		block = append(block, r.authLocations(i, s)...)
		out = append(out, conf.B("server", nil, block...))
	}
	return out
}

// listen is a server's listen directives: on IPv4, and on IPv6 where the
// Service has it, with the same options. "listen ... http2" is what nginx
// before 1.25.1 knows; later ones accept it with a deprecation warning. On
// a plain-text port (h2c) it serves HTTP/2 with prior knowledge.
func (r *renderer) listen(cfg v1beta1.NginxConfig, s v1beta1.Server, p v1beta1.Port) []conf.Directive {
	if r.behindRouter[p.Name] {
		return r.listenBehindRouter(cfg, s, p)
	}
	port := p.ContainerPort
	var options []string
	switch {
	case s.TLS != nil:
		options = append(options, "ssl")
		if !cfg.DisableHTTP2 {
			options = append(options, "http2")
		}
	case p.H2C:
		options = append(options, "http2")
	}
	if cfg.RealIP != nil && cfg.RealIP.ProxyProtocol {
		options = append(options, "proxy_protocol")
	}
	if s.DefaultServer {
		options = append(options, "default_server")
	}
	out := []conf.Directive{conf.D("listen", append([]string{itoa(port)}, options...)...)}
	if r.opts.IPv6 {
		out = append(out, conf.D("listen", append([]string{"[::]:" + itoa(port)}, options...)...))
	}
	return out
}

// listenBehindRouter is the listen directive of a TLS server on a port with a
// stream router (stream.go): the port's socket, with the router's PROXY
// header, whose address nginx takes as the client's (realip), as the
// router's own peer when a load balancer's PROXY header named none.
func (r *renderer) listenBehindRouter(cfg v1beta1.NginxConfig, s v1beta1.Server, p v1beta1.Port) []conf.Directive {
	args := []string{r.httpSocket(p.Name), "ssl"}
	if !cfg.DisableHTTP2 {
		args = append(args, "http2")
	}
	args = append(args, "proxy_protocol")
	if s.DefaultServer {
		args = append(args, "default_server")
	}
	return []conf.Directive{
		conf.D("listen", args...),
		conf.D("set_real_ip_from", "unix:"),
		conf.D("real_ip_header", "proxy_protocol"),
	}
}

// errorPages sends each listed status to a named location that serves the
// page's file: a named location cannot collide with a user's path, and
// error_page without "=" keeps the original status.
func (r *renderer) errorPages(server int, pages []v1beta1.ErrorPage) []conf.Directive {
	var out []conf.Directive
	for i, p := range pages {
		out = append(out,
			errorPage(server, i, p),
			conf.B("location", []string{errorPageLocation(server, i)}, conf.D("rewrite", "^", p.Path, "break")),
		)
	}
	return out
}

// errorPageDirectives are the error_page directives of a server's pages,
// for a location that states error_page of its own.
func errorPageDirectives(server int, pages []v1beta1.ErrorPage) []conf.Directive {
	out := make([]conf.Directive, 0, len(pages))
	for i, p := range pages {
		out = append(out, errorPage(server, i, p))
	}
	return out
}

func errorPage(server, i int, p v1beta1.ErrorPage) conf.Directive {
	args := make([]string, 0, len(p.Codes)+1)
	for _, c := range p.Codes {
		args = append(args, itoa(c))
	}
	return conf.D("error_page", append(args, errorPageLocation(server, i))...)
}

func errorPageLocation(server, i int) string {
	return "@error_page_" + strconv.Itoa(server) + "_" + strconv.Itoa(i)
}

// serverTLS is a TLS server's certificate, HSTS header and client
// certificate check.
func (r *renderer) serverTLS(t *v1beta1.TLS) []conf.Directive {
	if t == nil {
		return nil
	}
	cert, key := r.opts.Paths.TLSFiles(t.SecretName)
	out := []conf.Directive{
		conf.D("ssl_certificate", cert),
		conf.D("ssl_certificate_key", key),
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
