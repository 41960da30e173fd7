package render

import (
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// guards are what a server or a location checks of a request before its
// handler answers: ipAccess, basicAuth, rateLimit and connectionLimit.
// nginx's inheritance gives the API's semantics: a location with one of
// them replaces the server's, one without inherits it.
type guards struct {
	ip   *v1beta1.IPAccess
	auth *v1beta1.HTTPBasicAuth
	rate *v1beta1.RateLimit
	conn *v1beta1.ConnectionLimit
}

func serverGuards(s v1beta1.Server) guards {
	return guards{s.IPAccess, s.BasicAuth, s.RateLimit, s.ConnectionLimit}
}

func locationGuards(l v1beta1.Location) guards {
	return guards{l.IPAccess, l.BasicAuth, l.RateLimit, l.ConnectionLimit}
}

// access renders the guards of the server or location id (which names the
// limits' zones, see limitZones).
func (r *renderer) access(id string, g guards) []conf.Directive {
	var out []conf.Directive
	if ip := g.ip; ip != nil {
		// nginx stops at the first rule that matches: deny wins over allow.
		for _, cidr := range ip.Deny {
			out = append(out, conf.D("deny", cidr))
		}
		for _, cidr := range ip.Allow {
			out = append(out, conf.D("allow", cidr))
		}
		if len(ip.Allow) > 0 {
			out = append(out, conf.D("deny", "all"))
		}
	}
	if auth := g.auth; auth != nil {
		if auth.Disabled {
			out = append(out, conf.D("auth_basic", "off"))
		} else {
			out = append(out,
				conf.D("auth_basic", auth.Realm),
				conf.D("auth_basic_user_file", r.opts.Paths.AuthFile(*auth)),
			)
		}
	}
	return append(out, limits(id, g)...)
}
