package render

import (
	"strconv"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// A proxy location's mirrors (Gateway API's RequestMirror): nginx's mirror
// directive starts, beside the request, a background subrequest to a URI of
// the same server, whose answer it throws away. That URI is an internal
// exact location of the mirror's own, which sends the request as the
// client sent it ($request_uri, its headers and body) to an upstream of the
// mirrored Service's endpoints. A share below every request is drawn per
// request by split_clients on $request_id (random), and a request not drawn
// ends in its mirror location at once, sending nothing.

// mirrorPathPrefix starts the exact path of each mirror's location.
const mirrorPathPrefix = "/nginx-operator-mirror/"

// varMirror (suffixed with the mirror's id) is "1" for a request drawn for
// a share of the requests, "0" for the others.
const varMirror = "$mirror_"

// mirror is one mirror of a location that copies requests.
type mirror struct {
	// id names its location, upstream and share variable.
	id string
	// share is its split_clients percentage; "" for every request.
	share string
	// to is a location proxying to the mirrored Service, whose upstream
	// the mirror's is, and servers that upstream's server lines.
	to      v1beta1.Location
	servers []conf.Directive
}

// mirrorsOf are the mirrors of proxy location id that copy anything: a
// mirror whose share rounds to nothing, or whose Service has no ready
// endpoint, is left out of nginx.conf.
func (r *renderer) mirrorsOf(id string, p *v1beta1.ProxyLocation) []mirror {
	var out []mirror
	for k, m := range p.Mirrors {
		share, some := mirrorShare(m)
		if !some {
			continue
		}
		to := v1beta1.Location{Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{
			{Service: m.Service, Namespace: m.Namespace, Port: m.Port, Weight: ptr.To[int32](1)}}}}
		servers := r.upstreamServers(to.Proxy)
		if len(servers) == 0 {
			continue
		}
		out = append(out, mirror{id: id + "_m" + strconv.Itoa(k), share: share, to: to, servers: servers})
	}
	return out
}

// mirrorShare is m's share as a split_clients percentage, in hundredths
// of a percent rounded down ("" for every request), and false when that is
// none.
func mirrorShare(m v1beta1.Mirror) (string, bool) {
	num, den := int64(1), int64(1)
	switch {
	case m.Percent != nil:
		num, den = int64(*m.Percent), 100
	case m.Fraction != nil:
		num, den = int64(m.Fraction.Numerator), int64(max(m.Fraction.Denominator, 1))
	}
	hundredths := num * 10000 / den
	switch {
	case hundredths <= 0:
		return "", false
	case hundredths >= 10000:
		return "", true
	case hundredths%100 == 0:
		return strconv.FormatInt(hundredths/100, 10) + "%", true
	}
	return strconv.FormatInt(hundredths/100, 10) + "." + fmtHundredths(hundredths%100) + "%", true
}

func fmtHundredths(h int64) string {
	if h < 10 {
		return "0" + strconv.FormatInt(h, 10)
	}
	return strconv.FormatInt(h, 10)
}

// mirrorBlocks are the http-level blocks of a location's mirrors: each
// one's upstream (shared as sharedUpstream shares) and share variable.
func (r *renderer) mirrorBlocks(ms []mirror) []conf.Directive {
	var out []conf.Directive
	for _, m := range ms {
		if block, fresh := r.sharedUpstream(m.id, m.to, m.servers); fresh {
			out = append(out, block)
		}
		if m.share != "" {
			out = append(out, conf.B("split_clients", []string{"$request_id", varMirror + m.id},
				conf.D(m.share, "1"),
				conf.D("*", "0"),
			))
		}
	}
	return out
}

// mirrorDirectives start the location's mirrors.
func mirrorDirectives(ms []mirror) []conf.Directive {
	var out []conf.Directive
	for _, m := range ms {
		out = append(out, conf.D("mirror", mirrorPathPrefix+m.id))
	}
	return out
}

// mirrorLocations are the internal locations of location id's mirrors.
// A copy carries the location's request headers and waits as its requests
// do, but neither upgrades (a WebSocket is not mirrored) nor asks to close
// the kept-alive connection.
func (r *renderer) mirrorLocations(id string, l v1beta1.Location, ms []mirror) []conf.Directive {
	var out []conf.Directive
	w := waitsOf(l.Proxy)
	for _, m := range ms {
		body := []conf.Directive{conf.D("internal")}
		if m.share != "" {
			body = append(body, conf.B("if", []string{"(" + varMirror + m.id, "=", "0)"}, conf.D("return", "204")))
		}
		body = append(body,
			conf.D("proxy_pass", "http://"+r.upstreamOf(m.id)+"$request_uri"),
			conf.D("proxy_http_version", "1.1"),
		)
		for _, h := range requestHeaders(id, l, nil) {
			if h.Name == "Upgrade" || h.Name == "Connection" {
				h.Value = ""
			}
			body = append(body, conf.D("proxy_set_header", h.Name, h.Value))
		}
		body = append(body,
			conf.D("proxy_connect_timeout", w.connect),
			conf.D("proxy_send_timeout", w.send),
			conf.D("proxy_read_timeout", w.read),
			conf.D("proxy_next_upstream_timeout", w.tries),
		)
		out = append(out, conf.B("location", []string{"=", mirrorPathPrefix + m.id}, body...))
	}
	return out
}
