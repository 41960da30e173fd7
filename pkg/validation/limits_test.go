package validation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// Rate and connection limits, their keys and exemptions, and the client
// buffers refuse what nginx cannot do, at admission, with a message naming
// the fix.
func TestLimitFieldsRefuseBadValuesWithMessagesUsersUnderstand(t *testing.T) {
	server := func(o *v1beta1.NginxOperator) *v1beta1.Server { return &o.Spec.Config.Servers[0] }
	const at = "spec.config.servers[0]"
	header := &v1beta1.RequestKey{Source: "Header", Name: "X-API-Key"}
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"exempt keys of an address", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 1, Exempt: &v1beta1.LimitExemptions{Keys: []string{"partner"}}}
		}, []string{at + ".rateLimit", "exempt.keys are values of a Header or Cookie key: set key"}},
		{"exempt keys of a client address key", func(o *v1beta1.NginxOperator) {
			server(o).ConnectionLimit = &v1beta1.ConnectionLimit{Connections: 1, Key: &v1beta1.RequestKey{Source: "ClientIP"},
				Exempt: &v1beta1.LimitExemptions{Keys: []string{"partner"}}}
		}, []string{at + ".connectionLimit", "exempt.keys are values of a Header or Cookie key: set key"}},
		{"an exemption of nothing", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 1, Key: header, Exempt: &v1beta1.LimitExemptions{}}
		}, []string{at + ".rateLimit.exempt", "set clients, keys or both"}},
		{"a header key without its name", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 1, Key: &v1beta1.RequestKey{Source: "Header"}}
		}, []string{at + ".rateLimit.key", "name goes with source Header or Cookie, and only with them"}},
		{"a named client address", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 1, Key: &v1beta1.RequestKey{Source: "ClientIP", Name: "x"}}
		}, []string{at + ".rateLimit.key", "name goes with source Header or Cookie, and only with them"}},
		{"a header nginx drops", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 1, Key: &v1beta1.RequestKey{Source: "Header", Name: "X_Key"}}
		}, []string{at + ".rateLimit.key", "header names may hold letters, digits and '-' only"}},
		{"an exempt key with a space", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 1, Key: header, Exempt: &v1beta1.LimitExemptions{Keys: []string{"a b"}}}
		}, []string{at + ".rateLimit.exempt.keys[0]", "should match"}},
		{"an exempt client that is no CIDR", func(o *v1beta1.NginxOperator) {
			server(o).ConnectionLimit = &v1beta1.ConnectionLimit{Connections: 1, Exempt: &v1beta1.LimitExemptions{Clients: []string{"10.0.0.1"}}}
		}, []string{at + ".connectionLimit.exempt.clients", "every entry must be a CIDR"}},
		{"no connection at all", func(o *v1beta1.NginxOperator) { server(o).ConnectionLimit = &v1beta1.ConnectionLimit{Connections: 0} },
			[]string{at + ".connectionLimit.connections", "should be greater than or equal to 1"}},
		{"a connection limit on a redirecting server", func(o *v1beta1.NginxOperator) {
			*server(o) = v1beta1.Server{Port: "http", RedirectToHTTPS: &v1beta1.HTTPSRedirect{}, ConnectionLimit: &v1beta1.ConnectionLimit{Connections: 1}}
		}, []string{at, "cannot be combined with tls, locations, ipAccess, basicAuth, rateLimit or connectionLimit"}},
		{"a body size in words", func(o *v1beta1.NginxOperator) { server(o).ClientMaxBodySize = "ten megabytes" },
			[]string{at + ".clientMaxBodySize", "should match"}},
		{"one header buffer", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.ClientHeaderBuffers = &v1beta1.ClientHeaderBuffers{Count: 1}
		}, []string{"spec.config.clientHeaderBuffers.count", "should be greater than or equal to 2"}},
		{"a body buffer of more than 64 MiB", func(o *v1beta1.NginxOperator) { server(o).Locations[0].ClientBodyBufferKiB = 65537 },
			[]string{at + ".locations[0].clientBodyBufferKiB", "should be less than or equal to 65536"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.want...) })
	}
}

// clientHeaderBuffers: {} gets nginx's own numbers, written out.
func TestHeaderBuffersDefaultToNginxs(t *testing.T) {
	obj := valid()
	obj.Spec.Config.ClientHeaderBuffers = &v1beta1.ClientHeaderBuffers{}
	out, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff(&v1beta1.ClientHeaderBuffers{Count: 4, SizeKiB: 8}, out.Spec.Config.ClientHeaderBuffers); diff != "" {
		t.Errorf("clientHeaderBuffers: {} (-want +got):\n%s", diff)
	}
}
