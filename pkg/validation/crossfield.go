package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/regex"
)

// crossField refuses what the CRD would refuse if it could afford to. Every
// rule on a single value, and every cross-field rule CEL can afford, lives in
// the CRD (pkg/apis/nginx/v1beta1) and is not repeated here.
//
// Two locations of one server with the same path: nginx refuses the
// duplicate location, but a CEL rule comparing every pair of locations of
// every server (32 servers of 64 paths of up to 512 characters) exceeds the
// apiserver's cost budget for a CRD rule, so the CRD cannot hold it.
//
// A header named twice in one match, in any case: the same pairwise
// comparison. A regular expression (a RegularExpression path, header or
// query match) that does not compile: no CEL function compiles a regular
// expression it is given as data.
//
// A header named twice in one requestHeaders or responseHeaders (set, add
// and remove together, in any case): the same pairwise comparison, for
// every location, is beyond the budget too.
//
// A TLS server name twice on one port among its streams and servers: the
// same pairwise comparison of names.
func crossField(spec *v1beta1.NginxOperatorSpec, path *field.Path) field.ErrorList {
	errs := streamNameRules(spec.Config, path.Child("config"))
	for i, s := range spec.Config.Servers {
		seen := map[string]bool{}
		for j, l := range s.Locations {
			at := path.Child("config", "servers").Index(i).Child("locations").Index(j)
			key := v1beta1.LocationMatchKey(l)
			if seen[key] {
				errs = append(errs, field.Invalid(at.Child("path"), l.Path, "appears twice in this server with the same pathType and match"))
			}
			seen[key] = true
			errs = append(errs, locationRules(l, at)...)
		}
	}
	return errs
}

// locationRules are crossField's rules on one location.
func locationRules(l v1beta1.Location, at *field.Path) field.ErrorList {
	errs := matchRules(l, at)
	if name := repeatedHeader(l.RequestHeaders); name != "" {
		errs = append(errs, field.Invalid(at.Child("requestHeaders"), name, "header appears more than once in set, add and remove"))
	}
	if name := repeatedHeader(l.ResponseHeaders); name != "" {
		errs = append(errs, field.Invalid(at.Child("responseHeaders"), name, "header appears more than once in set, add and remove"))
	}
	return errs
}

// repeatedHeader is the first header name m lists twice, ignoring case.
func repeatedHeader(m *v1beta1.HeaderModifier) string {
	if m == nil {
		return ""
	}
	names := make([]string, 0, len(m.Set)+len(m.Add)+len(m.Remove))
	for _, h := range m.Set {
		names = append(names, h.Name)
	}
	for _, h := range m.Add {
		names = append(names, h.Name)
	}
	names = append(names, m.Remove...)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[strings.ToLower(n)] {
			return n
		}
		seen[strings.ToLower(n)] = true
	}
	return ""
}

// matchRules: each header once in a match, and every regular expression of
// the location is one nginx compiles and reads as the controller does,
// naming no variable (pkg/nginx/regex): one nginx refuses would stop the
// whole instance's configuration.
func matchRules(l v1beta1.Location, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	regex := func(at *field.Path, value string) {
		if err := regex.Check(value); err != nil {
			errs = append(errs, field.Invalid(at, value, err.Error()))
		}
	}
	if v1beta1.PathTypeOf(l) == v1beta1.PathRegularExpression {
		regex(at.Child("path"), l.Path)
	}
	if l.Match == nil {
		return errs
	}
	seen := map[string]bool{}
	for i, h := range l.Match.Headers {
		if seen[strings.ToLower(h.Name)] {
			errs = append(errs, field.Invalid(at.Child("match", "headers").Index(i).Child("name"), h.Name, "header appears more than once in this match"))
		}
		seen[strings.ToLower(h.Name)] = true
		if h.Type == v1beta1.MatchRegularExpression {
			regex(at.Child("match", "headers").Index(i).Child("value"), h.Value)
		}
	}
	for i, q := range l.Match.QueryParams {
		if q.Type == v1beta1.MatchRegularExpression {
			regex(at.Child("match", "queryParams").Index(i).Child("value"), q.Value)
		}
	}
	return errs
}

// serverPairMessages are the messages of the CRD's rules that compare every
// pair of servers (on NginxConfig), which serverPairRules checks instead
// in the controller (see withoutRoom).
var serverPairMessages = []string{tlsAcrossPortMessage, oneDefaultServerMessage}

const (
	tlsAcrossPortMessage    = "servers on one port must all use TLS or all not: nginx cannot serve both on one port"
	oneDefaultServerMessage = "a port can have only one server with defaultServer: true"
)

// serverPairRules are the CRD's rules on pairs of servers, by port in one
// pass: the servers of a port all use TLS or all not, and at most one is
// its default server. The errors name spec.config, as the CRD's do.
func serverPairRules(servers []v1beta1.Server, config *field.Path) field.ErrorList {
	tls := map[string]bool{}
	defaults := map[string]int{}
	mixed, twice := false, false
	for _, s := range servers {
		if was, seen := tls[s.Port]; seen && was != (s.TLS != nil) {
			mixed = true
		}
		tls[s.Port] = s.TLS != nil
		if s.DefaultServer {
			defaults[s.Port]++
			twice = twice || defaults[s.Port] > 1
		}
	}
	var errs field.ErrorList
	if mixed {
		errs = append(errs, field.Invalid(config, field.OmitValueType{}, tlsAcrossPortMessage))
	}
	if twice {
		errs = append(errs, field.Invalid(config, field.OmitValueType{}, oneDefaultServerMessage))
	}
	return errs
}

// room holds an instance to the CRD's bounds on its servers and locations,
// which the controller's schema leaves out (withoutRoom), with the
// apiserver's words.
func room(spec *v1beta1.NginxOperatorSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	servers := path.Child("config", "servers")
	if n := len(spec.Config.Servers); n > v1beta1.MaxServers {
		errs = append(errs, field.TooMany(servers, n, v1beta1.MaxServers))
	}
	for i, s := range spec.Config.Servers {
		if n := len(s.Locations); n > v1beta1.MaxLocations {
			errs = append(errs, field.TooMany(servers.Index(i).Child("locations"), n, v1beta1.MaxLocations))
		}
	}
	return errs
}

// streamNameRules: on one port, a server name belongs to one stream, and
// a stream's name to no server: nginx would send the name's connections
// to the stream alone (stream.go's router), and never to the other.
func streamNameRules(cfg v1beta1.NginxConfig, config *field.Path) field.ErrorList {
	if len(cfg.Streams) == 0 {
		return nil
	}
	var errs field.ErrorList
	owner := map[[2]string]string{}
	for i, s := range cfg.Streams {
		for j, name := range s.ServerNames {
			at := config.Child("streams").Index(i).Child("serverNames").Index(j)
			if was, taken := owner[[2]string{s.Port, name}]; taken {
				errs = append(errs, field.Duplicate(at, name+" (on port "+s.Port+", already "+was+"'s)"))
				continue
			}
			owner[[2]string{s.Port, name}] = at.String()
		}
	}
	for i, s := range cfg.Servers {
		for j, name := range s.ServerNames {
			if was, taken := owner[[2]string{s.Port, name}]; taken {
				at := config.Child("servers").Index(i).Child("serverNames").Index(j)
				errs = append(errs, field.Invalid(at, name, "is "+was+" on the same port: its connections go to the stream, never to this server; give the name to one of them"))
			}
		}
	}
	return errs
}
