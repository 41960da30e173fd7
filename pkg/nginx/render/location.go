package render

import (
	"slices"
	"strconv"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// locations renders the locations of server number server; with none, /
// serves the content.
func (r *renderer) locations(server int, s v1beta1.Server) []conf.Directive {
	locations := s.Locations
	if len(locations) == 0 {
		locations = []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}
	}
	var out []conf.Directive
	for i, l := range locations {
		id := locationID(server, i)
		var body []conf.Directive
		switch {
		case l.Static != nil:
			body = static(l.Static)
		case l.Proxy != nil:
			body = r.proxy(id, l)
		case l.Redirect != nil:
			body = r.redirect(id, l)
		}
		if l.ClientMaxBodySize != "" {
			body = append(body, conf.D("client_max_body_size", l.ClientMaxBodySize))
		}
		if l.Expires != "" {
			body = append(body, conf.D("expires", l.Expires))
		}
		if headers := responseHeaders(l); len(headers) > 0 || slices.ContainsFunc(body, isAddHeader) {
			// Headers of its own (its own, or a proxy's affinity cookie)
			// hide the server's from the location.
			body = append(body, headers...)
			body = append(body, hsts(s.TLS)...)
		}
		body = append(body, r.access(id, l.IPAccess, l.BasicAuth, l.RateLimit)...)
		if l.DisableAccessLog {
			body = append(body, conf.D("access_log", "off"))
		}
		out = append(out, conf.B("location", locationArgs(l), body...))
	}
	if hasGRPC(locations) {
		out = append(out, grpcStatusLocations()...)
	}
	return out
}

// serverID names the blocks of server number i (its rate limit zone).
func serverID(i int) string { return "s" + strconv.Itoa(i) }

// locationID names the blocks of location j of server i: its upstream,
// maps and rate limit zone.
func locationID(i, j int) string { return serverID(i) + "_l" + strconv.Itoa(j) }

func isAddHeader(d conf.Directive) bool { return d.Name == "add_header" }

func static(s *v1beta1.StaticLocation) []conf.Directive {
	autoindex := "off"
	if s.Autoindex {
		autoindex = "on"
	}
	last := "=404"
	if s.Fallback != "" {
		// try_files' last argument is an internal redirect: the fallback
		// file is served by whichever location matches it, with status 200.
		last = s.Fallback
	}
	return []conf.Directive{conf.D("try_files", "$uri", "$uri/", last), conf.D("autoindex", autoindex)}
}

// responseHeaders add to every response of the location; set and remove
// hide what the Service sent first (proxy_hide_header, grpc_hide_header),
// so they act on proxied responses only, which the CRD requires.
func responseHeaders(l v1beta1.Location) []conf.Directive {
	hide := "proxy_hide_header"
	if l.Proxy != nil && protocolOf(l.Proxy).grpc() {
		hide = "grpc_hide_header"
	}
	var out []conf.Directive
	add := func(h v1beta1.Header) {
		// "always": error responses carry the header too.
		out = append(out, conf.D("add_header", h.Name, h.Value, "always"))
	}
	for _, h := range l.Headers {
		add(h)
	}
	m := l.ResponseHeaders
	if m == nil {
		return out
	}
	for _, h := range m.Set {
		out = append(out, conf.D(hide, h.Name))
		add(h)
	}
	for _, name := range m.Remove {
		out = append(out, conf.D(hide, name))
	}
	for _, h := range m.Add {
		add(h)
	}
	return out
}

// locationArgs are the arguments of a location block: the path, after "="
// for an exact match.
func locationArgs(l v1beta1.Location) []string {
	if l.Exact {
		return []string{"=", l.Path}
	}
	return []string{l.Path}
}
