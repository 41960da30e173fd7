package render

import (
	"strconv"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// pathReplaceFull is Gateway API's path modifier type that replaces the
// whole path; the other, ReplacePrefixMatch, replaces the location's prefix.
const pathReplaceFull = "ReplaceFullPath"

// redirect answers with a redirect: to the fixed url, or to the request's
// own URL with the parts the spec names replaced (Gateway API's
// RequestRedirect). The query always goes along.
func (r *renderer) redirect(id string, l v1beta1.Location) []conf.Directive {
	rd := l.Redirect
	if rd.URL != "" {
		return []conf.Directive{conf.D("return", itoa(rd.Code), rd.URL)}
	}
	scheme := varForwardedProto
	if rd.Scheme != "" {
		scheme = rd.Scheme
	}
	host := "$host"
	if rd.Hostname != "" {
		host = rd.Hostname
	}
	// With no port: the scheme's default when the scheme changes, else the
	// port the client used (as a trusted hop reported it).
	port := ""
	switch {
	case rd.Port != nil && !(rd.Scheme == "http" && *rd.Port == 80 || rd.Scheme == "https" && *rd.Port == 443):
		port = ":" + itoa(*rd.Port)
	case rd.Port == nil && rd.Scheme == "":
		port = varForwardedPortSuffix
	}
	// $request_uri is the path and query exactly as the client sent them.
	// The decoded $uri would be unsafe here: a %0d%0a in it would end the
	// Location header and start another.
	path := "$request_uri"
	if rd.Path != nil {
		replacement, ok := r.pathModifier("redirect", rd.Path)
		switch {
		case !ok:
		case rd.Path.Type == pathReplaceFull:
			path = replacement + "$is_args$args"
		default:
			path = redirectPathVariable(id) // redirectMap
		}
	}
	return []conf.Directive{conf.D("return", itoa(rd.Code), scheme+"://"+host+port+path)}
}

// redirectPathVariable holds the path a redirect with a ReplacePrefixMatch
// of location id sends to.
func redirectPathVariable(id string) string { return "$redirect_path_" + id }

// redirectMap computes redirectPathVariable at the http level: the raw
// $request_uri with the location's prefix replaced. nil for a location
// without a prefix redirect.
func redirectMap(id string, l v1beta1.Location) []conf.Directive {
	rd := l.Redirect
	if rd == nil || rd.URL != "" || rd.Path == nil || rd.Path.Type == pathReplaceFull || rd.Path.ReplacePrefixMatch == nil {
		return nil
	}
	var entries []conf.Directive
	for _, rule := range prefixRules(l.Path, *rd.Path.ReplacePrefixMatch) {
		// The raw $request_uri still holds the query. The greedy (/.*) of
		// the second rule takes it along, leaving (\?.*)? empty.
		query := "$" + strconv.Itoa(rule.groups+1)
		entries = append(entries, conf.D("~"+rule.pattern+`(\?.*)?$`, rule.replacement+query))
	}
	// A path that does not start with the location's path as sent
	// (percent-encoded, say) is kept as it is.
	entries = append(entries, conf.D("default", "$request_uri"))
	return []conf.Directive{conf.B("map", []string{"$request_uri", redirectPathVariable(id)}, entries...)}
}

// pathModifier is the replacement of a redirect's or rewrite's path: the
// full path or the prefix, as its type says. The CRD requires the one its
// type names; a spec without it (which no admitted object is) is refused
// rather than rendered, and ok is false.
func (r *renderer) pathModifier(field string, m *v1beta1.PathModifier) (replacement string, ok bool) {
	value := m.ReplacePrefixMatch
	if m.Type == pathReplaceFull {
		value = m.ReplaceFullPath
	}
	if value == nil {
		r.fault("%s.path of type %s has no value for it", field, m.Type)
		return "", false
	}
	return *value, true
}

// prefixRule is one regex of a ReplacePrefixMatch: pattern (without its end
// anchor) matches a path that starts with the location's path, and
// replacement, which may refer to the pattern's groups, is the new path.
type prefixRule struct {
	pattern, replacement string
	groups               int
}

// prefixRules replace the location's path prefix at the start of a path
// with replacement, as Gateway API defines it: a trailing '/' on either is
// ignored, and an empty result is "/". /api with /v2 turns /api into /v2
// and /api/users into /v2/users.
//
// The prefix goes into the regex between \Q and \E, which PCRE reads as
// literal text; the CRD's path pattern has no backslash, so nothing can end
// the quoting early. Paths that only share a string prefix with the
// location (/apis under /api) match neither rule and keep their path.
func prefixRules(prefix, replacement string) []prefixRule {
	prefix = strings.TrimSuffix(prefix, "/")
	replacement = strings.TrimSuffix(replacement, "/")
	literal := "^"
	if prefix != "" {
		literal += `\Q` + prefix + `\E`
	}
	whole := replacement
	if whole == "" {
		whole = "/"
	}
	return []prefixRule{
		{pattern: literal, replacement: whole},
		{pattern: literal + "(/.*)", replacement: replacement + "$1", groups: 1},
	}
}
