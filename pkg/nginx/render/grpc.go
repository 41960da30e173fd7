package render

import (
	"slices"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// grpcStatuses are the gRPC statuses a gRPC location answers nginx's own
// errors with (a Service down or timing out, a refused or rate-limited
// client, a body too large), so that a gRPC client reads a status rather
// than an HTML page. The mapping is gRPC's own for HTTP statuses
// (doc/http-grpc-status-mapping.md in grpc/grpc), with nginx's 408, 413 and
// 500 given the statuses that say what happened. A Service's own gRPC
// errors pass through untouched: they come with HTTP status 200.
var grpcStatuses = []struct {
	code, message string
	httpStatuses  []string
}{
	{"4", "deadline exceeded", []string{"408"}},
	{"7", "permission denied", []string{"403"}},
	{"8", "resource exhausted", []string{"413"}},
	{"12", "unimplemented", []string{"404"}},
	{"13", "internal", []string{"400", "500"}},
	{"14", "unavailable", []string{"429", "502", "503", "504"}},
	{"16", "unauthenticated", []string{"401"}},
}

// grpcStatusLocation is the name of the named location answering with
// gRPC status code.
func grpcStatusLocation(code string) string { return "@grpc_status_" + code }

// grpcErrorPages send a gRPC location's errors to the named locations of
// grpcStatusLocations. Error pages of a location replace the server's,
// whose HTML a gRPC client could not read.
func grpcErrorPages() []conf.Directive {
	var out []conf.Directive
	for _, s := range grpcStatuses {
		out = append(out, conf.D("error_page", append(slices.Clone(s.httpStatuses), "=", grpcStatusLocation(s.code))...))
	}
	return out
}

// grpcStatusLocations answer with a trailers-only gRPC response: HTTP/2
// headers that end the stream, with the status. nginx drops the default
// Content-Type of a 204, so the header is added; a gRPC client goes by it
// and the grpc-status, not by the HTTP status. They are reached only by
// error_page, for a request already refused or failed: the server's access
// rules, which they would otherwise inherit, must not refuse the answer
// again (nginx would then send its HTML page).
func grpcStatusLocations() []conf.Directive {
	var out []conf.Directive
	for _, s := range grpcStatuses {
		out = append(out, conf.B("location", []string{grpcStatusLocation(s.code)},
			conf.D("allow", "all"),
			conf.D("auth_basic", "off"),
			conf.D("add_header", "Content-Type", "application/grpc", "always"),
			conf.D("add_header", "grpc-status", s.code, "always"),
			conf.D("add_header", "grpc-message", s.message, "always"),
			conf.D("return", "204"),
		))
	}
	return out
}

// hasGRPC reports a server with a gRPC location, which needs the named
// locations of grpcStatusLocations.
func hasGRPC(locations []v1beta1.Location) bool {
	return slices.ContainsFunc(locations, func(l v1beta1.Location) bool {
		return l.Proxy != nil && protocolOf(l.Proxy).grpc()
	})
}
