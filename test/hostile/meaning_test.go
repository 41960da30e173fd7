package hostile

// What the directive tree nginx reads back must mean: the checks that `nginx
// -t` and the tree comparison cannot make.

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// The ports the operator's own servers and sidecar use inside every pod.
var reservedPorts = map[int]bool{layout.HealthPort: true, layout.StubStatusPort: true, layout.ExporterPort: true}

// treeMeaning checks, on the tree nginx reads, that the user's servers
// mean what the spec's fields say. `nginx -t` and the tree comparison cannot
// see these: a location "~^/x" or a header "$http_cookie" is one valid
// argument, and nginx gives it another meaning (a regex, a variable).
func treeMeaning(dirs []conf.Directive) []string {
	var out []string
	for _, top := range dirs {
		if top.Name == "worker_processes" {
			out = append(out, workersMeaning(top)...)
		}
		if top.Name == "stream" {
			out = append(out, streamMeaning(top)...)
		}
		if top.Name != "http" {
			continue
		}
		for _, srv := range top.Block {
			if srv.Name != "server" || operatorServer(srv) {
				continue
			}
			out = append(out, serverMeaning(srv)...)
		}
	}
	return out
}

// workersMeaning: nginx's own "auto", or a count within the operator's
// bound, whatever the CPU limit (nginx -t starts no worker, so it accepts
// three million of them).
func workersMeaning(d conf.Directive) []string {
	if len(d.Args) == 1 && d.Args[0] == "auto" {
		return nil
	}
	if n, err := strconv.Atoi(d.Args[0]); err != nil || n < 1 || n > v1beta1.MaxWorkerProcesses {
		return []string{fmt.Sprintf("worker_processes %v: not auto or 1 to %d", d.Args, v1beta1.MaxWorkerProcesses)}
	}
	return nil
}

// operatorServer reports the operator's own servers: health and
// stub_status.
func operatorServer(srv conf.Directive) bool {
	for _, d := range srv.Block {
		if d.Name == "listen" && len(d.Args) > 0 &&
			(d.Args[0] == strconv.Itoa(layout.HealthPort) || d.Args[0] == "127.0.0.1:"+strconv.Itoa(layout.StubStatusPort)) {
			return true
		}
	}
	return false
}

func serverMeaning(srv conf.Directive) []string {
	out := authMeaning(srv)
	for _, d := range srv.Block {
		switch d.Name {
		case "listen":
			out = append(out, listenMeaning(d)...)
		case "server_name":
			for _, n := range d.Args {
				if strings.HasPrefix(n, "~") || strings.Contains(n, "$") {
					out = append(out, fmt.Sprintf("server_name %q is a regex or a variable", n))
				}
			}
		case "return":
			out = append(out, returnMeaning(d)...)
		case "location":
			out = append(out, locationMeaning(d)...)
		case "allow", "deny":
			out = append(out, accessMeaning(d)...)
		default:
			// auth_basic's realm and the file paths are complex values:
			// nginx would expand a variable in them.
			for _, a := range d.Args {
				for _, v := range foreignVariables(a) {
					out = append(out, fmt.Sprintf("%s argument %q expands %s, a variable the renderer does not write", d.Name, a, v))
				}
			}
		}
	}
	return out
}

// rendererSocket is a socket the renderer has a server listen on behind a
// stream router, under the temp path (the pod's /tmp, or the test's
// <dir>/tmp).
var rendererSocket = regexp.MustCompile(`^unix:(/[A-Za-z0-9._-]+)*` + regexp.QuoteMeta(layout.TempMountPath) + `/(https-[a-z0-9-]+|stream-[0-9]+)\.sock$`)

// listenMeaning: a port an unprivileged nginx may use and the operator
// does not reserve, or one of the renderer's sockets.
func listenMeaning(d conf.Directive) []string {
	if rendererSocket.MatchString(d.Args[0]) {
		return nil
	}
	port, err := strconv.Atoi(strings.TrimPrefix(d.Args[0], "[::]:"))
	switch {
	case err != nil:
		return []string{fmt.Sprintf("listen %q is not a port", d.Args[0])}
	case port < 1024 || port > 65535:
		return []string{fmt.Sprintf("listen %d: not a port an unprivileged nginx can use", port)}
	case reservedPorts[port]:
		return []string{fmt.Sprintf("listen %d: a port the operator reserves", port)}
	}
	return nil
}

// streamUpstream is what a stream's proxy_pass may name: its upstream
// block, the closed one, or its port's route.
var streamUpstream = regexp.MustCompile(`^(stream_[0-9]+|stream_closed|\$stream_route_[0-9]+)$`)

// streamMeaning: the stream servers listen where HTTP servers may, relay
// to the renderer's upstreams, and a router's names are names (escaped
// with a backslash), never a regular expression, a variable or a map
// parameter (default, include), which nginx's map would read.
func streamMeaning(stream conf.Directive) []string {
	var out []string
	for _, d := range stream.Block {
		switch d.Name {
		case "server":
			for _, sd := range d.Block {
				switch {
				case sd.Name == "listen":
					out = append(out, listenMeaning(sd)...)
				case sd.Name == "proxy_pass" && !streamUpstream.MatchString(sd.Args[0]):
					out = append(out, fmt.Sprintf("stream proxy_pass %q is not an upstream of the renderer's", sd.Args[0]))
				}
			}
		case "map":
			for _, e := range d.Block {
				if e.Name == "hostnames" || e.Name == "default" {
					continue
				}
				if !strings.HasPrefix(e.Name, `\`) || strings.Contains(e.Name, "$") || !rendererSocket.MatchString(e.Args[0]) {
					out = append(out, fmt.Sprintf("stream route %q %q is not a name to a socket of the renderer's", e.Name, e.Args))
				}
			}
		}
	}
	return out
}

// authMeaning: the renderer writes "auth_basic off" only to turn a
// server's authentication off, never with a password file; a realm nginx
// reads as "off" would leave one behind, unused.
func authMeaning(block conf.Directive) []string {
	off, file := false, false
	for _, d := range block.Block {
		switch {
		case d.Name == "auth_basic" && len(d.Args) == 1 && d.Args[0] == "off":
			off = true
		case d.Name == "auth_basic_user_file":
			file = true
		}
	}
	if off && file {
		return []string{"a realm nginx reads as \"off\" turns basic authentication off"}
	}
	return nil
}

// accessMeaning: allow and deny take one CIDR (or the renderer's
// "deny all"); nginx also reads a bare address, "all" and "unix:".
func accessMeaning(d conf.Directive) []string {
	if len(d.Args) != 1 {
		return []string{fmt.Sprintf("%s %q is not one CIDR", d.Name, d.Args)}
	}
	if d.Name == "deny" && d.Args[0] == "all" {
		return nil
	}
	if _, _, err := net.ParseCIDR(d.Args[0]); err != nil {
		return []string{fmt.Sprintf("%s %q is not a CIDR", d.Name, d.Args[0])}
	}
	return nil
}

var redirectCodes = map[string]bool{"301": true, "302": true, "303": true, "307": true, "308": true}

var (
	// variableRef finds nginx variable references, $name and ${name}.
	variableRef = regexp.MustCompile(`\$(\{[^}]*\}?|[A-Za-z0-9_]+)`)
	// operatorVariables are the variables the renderer itself
	// writes into arguments; a user value may expand none.
	operatorVariables = regexp.MustCompile(`^\$(host|uri|request_uri|is_args|args|remote_addr|http_upgrade|` +
		`connection_upgrade|host_with_port|forwarded_(for|proto|host|port|port_suffix)|request_method|sign_in_uri|auth_s[0-9]+(_l[0-9]+)?_[0-9]+|` +
		`redirect_path_s[0-9]+_l[0-9]+|request_header_s[0-9]+_l[0-9]+_[0-9]+|mirror_s[0-9]+_l[0-9]+_m[0-9]+|cors_preflight|cors_[a-z_]+_s[0-9]+_l[0-9]+|1)$`)
	// routeLocation is the renderer's named location of a location a block
	// hands requests to, or of the 404 when none matches; routeVariable
	// names one of them.
	routeLocation = regexp.MustCompile(`^@route_s[0-9]+_(l[0-9]+|none)$`)
	routeVariable = regexp.MustCompile(`^\$route_s[0-9]+_b[0-9]+$`)
	// signInLocation is the renderer's named location redirecting to an
	// external authentication's sign-in page.
	signInLocation = regexp.MustCompile(`^@auth_sign_in_s[0-9]+(_l[0-9]+)?$`)
	// authAnswer is what auth_request_set takes: a header of the
	// authentication's answer, into a variable of the renderer's.
	authAnswer = regexp.MustCompile(`^\$auth_s[0-9]+(_l[0-9]+)?_[0-9]+ \$upstream_http_[a-z0-9_]+$`)
	// authCacheKey is the renderer's cache key of an external
	// authentication: its id, then a variable for each part on a line.
	authCacheKey = regexp.MustCompile(`^s[0-9]+(_l[0-9]+)?(\n\$(remote_addr|http_[a-z0-9_]+|cookie_[A-Za-z0-9_]+|part_auth_key_s[0-9]+(_l[0-9]+)?_[0-9]+))+$`)
	// errorPageLocation is the renderer's named location of an error page.
	errorPageLocation = regexp.MustCompile(`^@error_page_[0-9]+_[0-9]+$`)
	// grpcStatusLocation is the renderer's named location answering a gRPC
	// location's errors with a gRPC status.
	grpcStatusLocation = regexp.MustCompile(`^@grpc_status_([0-9]+)$`)
	// affinityCookie is the renderer's Set-Cookie of session affinity: a
	// variable of its own, whose value (a map at the http level) it built.
	affinityCookie = regexp.MustCompile(`^\$affinity_cookie_s[0-9]+_l[0-9]+$`)
	// corsVariable is the value of a CORS header the renderer declares
	// (a map of the allowed origin), and corsHeaderNames the headers that
	// carry one.
	corsVariable    = regexp.MustCompile(`^\$cors_(origin|credentials|expose|methods|headers|max_age)_s[0-9]+_l[0-9]+$`)
	corsHeaderNames = map[string]bool{"Access-Control-Allow-Origin": true, "Access-Control-Allow-Credentials": true, "Access-Control-Expose-Headers": true,
		"Access-Control-Allow-Methods": true, "Access-Control-Allow-Headers": true, "Access-Control-Max-Age": true}
	// mirrorVariable is a mirror's share variable.
	mirrorVariable = regexp.MustCompile(`^\$mirror_s[0-9]+_l[0-9]+_m[0-9]+$`)
	// rewriteRegex is the shape of every rewrite regex the renderer
	// writes: anything, or a literal prefix quoted by \Q...\E (which only a
	// backslash in the prefix could end early) and maybe the rest of the path.
	rewriteRegex = regexp.MustCompile(`^\^(\\Q[^\\]*\\E)?(\(/\.\*\))?\$?$`)
)

// foreignVariables are the variables in arg the renderer does not write.
func foreignVariables(arg string) []string {
	var out []string
	for _, v := range variableRef.FindAllString(arg, -1) {
		if !operatorVariables.MatchString(v) {
			out = append(out, v)
		}
	}
	return out
}

func returnMeaning(d conf.Directive) []string {
	var out []string
	if len(d.Args) > 0 && !redirectCodes[d.Args[0]] {
		out = append(out, fmt.Sprintf("return %q is not a redirect", d.Args[0]))
	}
	if len(d.Args) > 1 && !strings.HasPrefix(d.Args[1], "http://") && !strings.HasPrefix(d.Args[1], "https://") && !strings.HasPrefix(d.Args[1], "$forwarded_proto://") {
		out = append(out, fmt.Sprintf("return %q is not an absolute http(s) URL", d.Args[1]))
	}
	return out
}

// grpcStatusMeaning: a gRPC status location is exactly the renderer's
// fixed answer, whatever the spec: it admits the request (already refused
// or failed) and returns 204 with the status in its headers.
func grpcStatusMeaning(loc conf.Directive) []string {
	code := grpcStatusLocation.FindStringSubmatch(loc.Args[0])[1]
	var got []string
	for _, d := range loc.Block {
		got = append(got, d.Name+" "+strings.Join(d.Args, " "))
	}
	want := []string{"allow all", "auth_basic off", "add_header Content-Type application/grpc always", "add_header grpc-status " + code + " always"}
	if len(got) != 6 || strings.Join(got[:4], "\n") != strings.Join(want, "\n") ||
		!strings.HasPrefix(got[4], "add_header grpc-message ") || strings.Contains(got[4], "$") || got[5] != "return 204" {
		return []string{fmt.Sprintf("location %s is not the renderer's gRPC status answer: %q", loc.Args[0], got)}
	}
	return nil
}

// headerTooLarge is the renderer's named location that answers headers
// overflowing a server's buffers; it is exactly "return 431", whatever the
// spec.
const headerTooLarge = "@request_header_too_large"

func locationMeaning(loc conf.Directive) []string {
	if len(loc.Args) == 1 && grpcStatusLocation.MatchString(loc.Args[0]) {
		return grpcStatusMeaning(loc)
	}
	if len(loc.Args) == 1 && loc.Args[0] == headerTooLarge {
		if len(loc.Block) != 1 || loc.Block[0].Name != "return" || strings.Join(loc.Block[0].Args, " ") != "431" {
			return []string{fmt.Sprintf("location %s is not the renderer's 431 answer: %v", headerTooLarge, loc.Block)}
		}
		return nil
	}
	out := authMeaning(loc)
	args := loc.Args
	plain := len(args) == 1 && strings.HasPrefix(args[0], "/") ||
		len(args) == 2 && args[0] == "=" && strings.HasPrefix(args[1], "/") ||
		len(args) == 2 && args[0] == "~" && wholePathRegex(args[1]) ||
		len(args) == 1 && (errorPageLocation.MatchString(args[0]) || routeLocation.MatchString(args[0]) || signInLocation.MatchString(args[0]))
	if !plain {
		out = append(out, fmt.Sprintf("location %q is not a URI prefix, an exact URI, the renderer's whole-path regular expression or one of its named locations", args))
	}
	for _, d := range loc.Block {
		switch d.Name {
		case "add_header":
			// Values are literal: not even the renderer's variables, but
			// for the affinity cookie it builds itself.
			out = append(out, addHeaderMeaning(d)...)
			continue
		case "if":
			out = append(out, ifMeaning(d)...)
			continue
		case "return":
			if len(d.Args) > 0 && !redirectCodes[d.Args[0]] {
				out = append(out, respondMeaning(d)...)
				continue
			}
			out = append(out, returnMeaning(d)...)
		case "rewrite":
			if len(d.Args) != 3 || !rewriteRegex.MatchString(d.Args[0]) || d.Args[2] != "break" {
				out = append(out, fmt.Sprintf("rewrite %q is not a literal prefix or full-path rewrite", d.Args))
			}
		case "allow", "deny":
			out = append(out, accessMeaning(d)...)
		case "auth_request_set":
			if !authAnswer.MatchString(strings.Join(d.Args, " ")) {
				out = append(out, fmt.Sprintf("auth_request_set %q is not an answer's header into the renderer's variable", d.Args))
			}
			continue
		case "set":
			out = append(out, requestLabelMeaning(d)...)
			continue
		case "proxy_cache_key":
			if len(d.Args) != 1 || !authCacheKey.MatchString(d.Args[0]) {
				out = append(out, fmt.Sprintf("proxy_cache_key %q is not the renderer's key of request parts", d.Args))
			}
			continue
		case "try_files":
			if len(d.Args) == 2 && d.Args[0] == "" && routeVariable.MatchString(d.Args[1]) {
				continue // a block handing its requests to a named location
			}
			if n := len(d.Args); n > 0 && !strings.HasPrefix(d.Args[n-1], "/") && d.Args[n-1] != "=404" {
				out = append(out, fmt.Sprintf("try_files falls back to %q, not a file of the content", d.Args[n-1]))
			}
		}
		for _, a := range d.Args {
			for _, v := range foreignVariables(a) {
				out = append(out, fmt.Sprintf("%s argument %q expands %s, a variable the renderer does not write", d.Name, a, v))
			}
		}
	}
	return out
}

// requestLabel is a request metrics label a location sets: the renderer's
// variable, and a value whose only variable is the renderer's '$'.
var requestLabel = regexp.MustCompile(`^\$request_metrics_(route|service)$`)

// requestLabelMeaning: "set" only writes the request metrics' labels, and
// their values are literal: a variable in them would give every request a
// series of its own.
func requestLabelMeaning(d conf.Directive) []string {
	if len(d.Args) != 2 || !requestLabel.MatchString(d.Args[0]) {
		return []string{fmt.Sprintf("set %q does not set a request metrics label", d.Args)}
	}
	if rest := strings.ReplaceAll(d.Args[1], "${request_metrics_dollar}", ""); strings.Contains(rest, "$") {
		return []string{fmt.Sprintf("set %q: the label is not literal", d.Args)}
	}
	return nil
}

// addHeaderMeaning: a header's value is literal, but for the affinity
// cookie and the CORS headers, whose values the renderer builds itself
// (maps at the http level).
func addHeaderMeaning(d conf.Directive) []string {
	if len(d.Args) == 3 && d.Args[2] == "always" &&
		(d.Args[0] == "Set-Cookie" && affinityCookie.MatchString(d.Args[1]) || corsHeaderNames[d.Args[0]] && corsVariable.MatchString(d.Args[1])) {
		return nil
	}
	var out []string
	for _, a := range d.Args {
		if strings.Contains(a, "$") {
			out = append(out, fmt.Sprintf("add_header argument %q expands nginx variables", a))
		}
	}
	return out
}

// ifMeaning: the renderer's only ifs in a location are a CORS preflight's
// answer (headers as addHeaderMeaning has them, then 204) and the check
// that skips a request not drawn for a mirror's share (204).
func ifMeaning(d conf.Directive) []string {
	cors := len(d.Args) == 1 && d.Args[0] == "($cors_preflight)"
	mirror := len(d.Args) == 3 && mirrorVariable.MatchString(strings.TrimPrefix(d.Args[0], "(")) && d.Args[1] == "=" && d.Args[2] == "0)"
	n := len(d.Block)
	if !cors && !mirror || n == 0 || d.Block[n-1].Name != "return" || len(d.Block[n-1].Args) != 1 || d.Block[n-1].Args[0] != "204" || mirror && n != 1 {
		return []string{fmt.Sprintf("if %q is neither the renderer's CORS preflight nor its mirror share", d.Args)}
	}
	var out []string
	for _, h := range d.Block[:n-1] {
		if h.Name != "add_header" {
			out = append(out, fmt.Sprintf("if %q holds %s", d.Args, h.Name))
			continue
		}
		out = append(out, addHeaderMeaning(h)...)
	}
	return out
}

// wholePathRegex: a location regex is the renderer's ^(?:re)\z around a
// regular expression re that RE2 compiles on its own, so that re is one
// group that cannot end the renderer's early (the controller refuses any
// other).
func wholePathRegex(arg string) bool {
	inner, ok := strings.CutPrefix(arg, "^(?:")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, `)\z`)
	if !ok {
		return false
	}
	_, err := regexp.Compile(inner)
	return err == nil
}

// respondMeaning: a location's return that is no redirect answers a
// status nginx sends (200 to 599, not its 444 that closes the connection)
// with a literal body, if any.
func respondMeaning(d conf.Directive) []string {
	code, err := strconv.Atoi(d.Args[0])
	if err != nil || code < 200 || code > 599 || code == 444 || len(d.Args) > 2 {
		return []string{fmt.Sprintf("return %q is not a status and a body", d.Args)}
	}
	if len(d.Args) == 2 && strings.Contains(d.Args[1], "$") {
		return []string{fmt.Sprintf("return body %q expands nginx variables", d.Args[1])}
	}
	return nil
}
