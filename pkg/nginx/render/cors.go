package render

import (
	"regexp"
	"slices"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// A location's CORS: one map per location turns the request's Origin into
// itself when the location allows it, or "" when not, and every CORS
// header's value is a map of that, "" for a refused origin. add_header
// sends no header with an empty value, so a refused origin gets none of
// them, from the same directives.

// varCORSPreflight is "1" for a CORS preflight: OPTIONS with an Origin and
// an Access-Control-Request-Method (a method is a token, without ':').
const varCORSPreflight = "$cors_preflight"

// Variables of a location's CORS, suffixed with its id.
const (
	varCORSOrigin = "$cors_origin_"
	varCORSPrefix = "$cors_"
)

// corsHeader is one header of a CORS answer: its name, the suffix of its
// variable, and whether only a preflight's answer carries it.
type corsHeader struct {
	name, variable string
	preflightOnly  bool
}

var corsHeaders = []corsHeader{
	{"Access-Control-Allow-Credentials", "credentials_", false},
	{"Access-Control-Expose-Headers", "expose_", false},
	{"Access-Control-Allow-Methods", "methods_", true},
	{"Access-Control-Allow-Headers", "headers_", true},
	{"Access-Control-Max-Age", "max_age_", true},
}

// corsValues are the values of c's headers as corsHeaders lists them, ""
// for a header not sent.
func corsValues(c *v1beta1.CORS) []string {
	credentials := ""
	if c.AllowCredentials {
		credentials = "true"
	}
	methods := strings.Join(c.AllowMethods, ", ")
	if slices.Contains(c.AllowMethods, "*") {
		methods = "$http_access_control_request_method"
	}
	headers := strings.Join(c.AllowHeaders, ", ")
	if slices.Contains(c.AllowHeaders, "*") {
		headers = "$http_access_control_request_headers"
	}
	return []string{credentials, strings.Join(c.ExposeHeaders, ", "), methods, headers, itoa(c.MaxAgeSeconds)}
}

// corsPreflightMap declares varCORSPreflight, once for every location.
func corsPreflightMap() conf.Directive {
	return conf.B("map", []string{"$request_method:$http_origin:$http_access_control_request_method", varCORSPreflight},
		conf.D("default", ""),
		conf.D("~^OPTIONS:.+:[^:]+$", "1"),
	)
}

// hasCORS reports a spec with a CORS location, which needs corsPreflightMap.
func hasCORS(spec *v1beta1.NginxOperatorSpec) bool {
	for _, s := range spec.Config.Servers {
		if slices.ContainsFunc(s.Locations, func(l v1beta1.Location) bool { return l.CORS != nil }) {
			return true
		}
	}
	return false
}

// corsMaps are the http-level maps of location id's CORS: its allowed
// origin, and each header's value for it.
func corsMaps(id string, c *v1beta1.CORS) []conf.Directive {
	origin := varCORSOrigin + id
	entries := []conf.Directive{conf.D("default", "")}
	for _, o := range c.AllowOrigins {
		entries = append(entries, conf.D("~*"+originPattern(o), "$http_origin"))
	}
	out := []conf.Directive{conf.B("map", []string{"$http_origin", origin}, entries...)}
	for i, v := range corsValues(c) {
		if v == "" {
			continue
		}
		out = append(out, conf.B("map", []string{origin, varCORSPrefix + corsHeaders[i].variable + id},
			conf.D("default", v),
			conf.D("", ""),
		))
	}
	return out
}

// originPattern is the regular expression of an allowed origin (the CRD's
// pattern: "*", or scheme://host[:port] with a host of "*" or "*.name"):
// "*" stands for any host, or in "*." for any labels before the name.
func originPattern(o string) string {
	if o == "*" {
		return "^.+$"
	}
	scheme, rest, _ := strings.Cut(o, "://")
	host, port, hasPort := strings.Cut(rest, ":")
	pattern := "^" + regexp.QuoteMeta(scheme) + "://"
	switch {
	case host == "*":
		pattern += "[^/:]+"
	case strings.HasPrefix(host, "*."):
		pattern += `[^/:]+\.` + regexp.QuoteMeta(host[2:])
	default:
		pattern += regexp.QuoteMeta(host)
	}
	if hasPort {
		pattern += ":" + regexp.QuoteMeta(port)
	}
	return pattern + "$"
}

// corsAnswers are the directives of location id's CORS: first the
// preflight's answer, at the rewrite phase (before access checks), then
// the headers of every other response, with a Service's own CORS headers
// hidden (hide is proxy_hide_header or grpc_hide_header; "" for a
// location that proxies nothing).
func corsAnswers(id string, c *v1beta1.CORS, hide string) (preflight conf.Directive, headers []conf.Directive) {
	origin := varCORSOrigin + id
	answer := []conf.Directive{conf.D("add_header", "Access-Control-Allow-Origin", origin, "always")}
	headers = slices.Clone(answer)
	for i, v := range corsValues(c) {
		if v == "" {
			continue
		}
		d := conf.D("add_header", corsHeaders[i].name, varCORSPrefix+corsHeaders[i].variable+id, "always")
		answer = append(answer, d)
		if !corsHeaders[i].preflightOnly {
			headers = append(headers, d)
		}
	}
	vary := conf.D("add_header", "Vary", "Origin", "always")
	answer = append(answer, vary, conf.D("return", "204"))
	headers = append(headers, vary)
	if hide != "" {
		for _, h := range corsHeaders {
			if !h.preflightOnly {
				headers = append(headers, conf.D(hide, h.name))
			}
		}
		headers = append(headers, conf.D(hide, "Access-Control-Allow-Origin"))
	}
	return conf.B("if", []string{"(" + varCORSPreflight + ")"}, answer...), headers
}
