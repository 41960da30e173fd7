package render

import (
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// access renders a server's or a location's ipAccess, basicAuth and
// rateLimit. nginx's inheritance gives the API's semantics: a location with
// one of them replaces the server's, one without inherits it. id names the
// rate limit's zone.
func (r *renderer) access(id string, ip *v1beta1.IPAccess, auth *v1beta1.HTTPBasicAuth, limit *v1beta1.RateLimit) []conf.Directive {
	var out []conf.Directive
	if ip != nil {
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
	if auth != nil {
		if auth.Disabled {
			out = append(out, conf.D("auth_basic", "off"))
		} else {
			out = append(out,
				conf.D("auth_basic", auth.Realm),
				conf.D("auth_basic_user_file", r.opts.Paths.AuthFile(*auth)),
			)
		}
	}
	if limit != nil {
		out = append(out, rateLimit(rateZone(id), limit)...)
	}
	return out
}

// rateZone is the name of the rate limit zone of the server or location id.
func rateZone(id string) string { return "rate_" + id }

// rateLimitZone declares a limit's zone at the http level (see httpBlocks),
// keyed by the client's address in binary (4 or 16 bytes).
func rateLimitZone(zone string, l *v1beta1.RateLimit) []conf.Directive {
	if l == nil {
		return nil
	}
	rate := itoa(l.RequestsPerSecond) + "r/s"
	if l.RequestsPerMinute > 0 {
		rate = itoa(l.RequestsPerMinute) + "r/m"
	}
	return []conf.Directive{conf.D("limit_req_zone", "$binary_remote_addr", "zone="+zone+":"+itoa(l.ZoneSizeMiB)+"m", "rate="+rate)}
}

// rateLimit applies the limit's zone (rateLimitZone). nodelay serves a
// burst at once rather than spacing it out; what exceeds it gets 429
// instead of nginx's default 503, which clients would take for an outage.
func rateLimit(zone string, l *v1beta1.RateLimit) []conf.Directive {
	args := []string{"zone=" + zone}
	if l.Burst > 0 {
		args = append(args, "burst="+itoa(l.Burst))
	}
	return []conf.Directive{
		conf.D("limit_req", append(args, "nodelay")...),
		conf.D("limit_req_status", "429"),
	}
}
