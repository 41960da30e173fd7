package validation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// The fields that choose and reach a Service's endpoints (balancing,
// affinity, retries, keepalive, protocol) refuse what nginx cannot do, at
// admission, with a message naming the fix.
func TestUpstreamFieldsRefuseBadValuesWithMessagesUsersUnderstand(t *testing.T) {
	proxy := func(o *v1beta1.NginxOperator) *v1beta1.ProxyLocation {
		return o.Spec.Config.Servers[0].Locations[1].Proxy
	}
	const at = "spec.config.servers[0].locations[1].proxy"
	header := &v1beta1.HashKey{Source: "Header", Name: "X-User"}
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"useClusterIP beside backends", func(o *v1beta1.NginxOperator) {
			p := proxy(o)
			p.UseClusterIP, p.Backends = true, []v1beta1.Backend{{Service: p.Service, Port: p.Port}}
			p.Service, p.Port = "", 0
		}, []string{at, "useClusterIP goes with service; set it on each backend that should use it"}},
		{"a method only NGINX Plus has", func(o *v1beta1.NginxOperator) { proxy(o).LoadBalancingMethod = "least_time header" },
			[]string{at + ".loadBalancingMethod", `supported values: "round_robin", "least_conn"`}},
		{"hash without a key", func(o *v1beta1.NginxOperator) { proxy(o).LoadBalancingMethod = "hash consistent" },
			[]string{at, "hashKey is required with loadBalancingMethod hash or hash consistent"}},
		{"a key without hash", func(o *v1beta1.NginxOperator) { proxy(o).LoadBalancingMethod, proxy(o).HashKey = "least_conn", header },
			[]string{at, "used by no other method"}},
		{"a header key without its name", func(o *v1beta1.NginxOperator) {
			proxy(o).LoadBalancingMethod, proxy(o).HashKey = "hash", &v1beta1.HashKey{Source: "Header"}
		}, []string{at + ".hashKey", "name is required for source Header, Cookie and QueryParameter"}},
		{"a header key with an underscore", func(o *v1beta1.NginxOperator) {
			proxy(o).LoadBalancingMethod, proxy(o).HashKey = "hash", &v1beta1.HashKey{Source: "Header", Name: "X_User"}
		}, []string{at + ".hashKey", "header names may hold letters, digits and '-' only"}},
		{"a URI key with a name", func(o *v1beta1.NginxOperator) {
			proxy(o).LoadBalancingMethod, proxy(o).HashKey = "hash", &v1beta1.HashKey{Source: "RequestURI", Name: "x"}
		}, []string{at + ".hashKey", "not allowed for RequestURI and ClientIP"}},
		{"affinity and a method", func(o *v1beta1.NginxOperator) {
			proxy(o).LoadBalancingMethod, proxy(o).SessionAffinity = "least_conn", &v1beta1.SessionAffinity{}
		}, []string{at, "sessionAffinity picks the endpoint by its cookie (consistent hashing): it replaces loadBalancingMethod"}},
		{"a cookie SameSite=None over plain HTTP", func(o *v1beta1.NginxOperator) {
			proxy(o).SessionAffinity = &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{SameSite: "None"}}
		}, []string{at + ".sessionAffinity.cookie", "sameSite None needs secure: true"}},
		{"a cookie path with a variable", func(o *v1beta1.NginxOperator) {
			proxy(o).SessionAffinity = &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Path: "/$uri"}}
		}, []string{at + ".sessionAffinity.cookie.path", "should match"}},
		{"a retry condition nginx does not know", func(o *v1beta1.NginxOperator) {
			proxy(o).Retry = &v1beta1.ProxyRetry{Conditions: []string{"http_501"}}
		}, []string{at + ".retry.conditions[0]", `supported values: "error", "timeout"`}},
		{"no tries at all", func(o *v1beta1.NginxOperator) { proxy(o).Retry = &v1beta1.ProxyRetry{Tries: -1} },
			[]string{at + ".retry.tries", "should be greater than or equal to 1"}},
		{"keepalive requests of 0", func(o *v1beta1.NginxOperator) { proxy(o).KeepAlive = &v1beta1.UpstreamKeepAlive{Requests: -5} },
			[]string{at + ".keepAlive.requests", "should be greater than or equal to 1"}},
		{"tls to a plain-text protocol", func(o *v1beta1.NginxOperator) {
			proxy(o).BackendProtocol, proxy(o).TLS = "GRPC", &v1beta1.BackendTLS{}
		}, []string{at, "tls needs backendProtocol HTTPS or GRPCS"}},
		{"GRPCS to several Services without a hostname", func(o *v1beta1.NginxOperator) {
			*proxy(o) = v1beta1.ProxyLocation{BackendProtocol: "GRPCS", Backends: []v1beta1.Backend{{Service: "a", Port: 443}, {Service: "b", Port: 443}}}
		}, []string{at, "tls.hostname is required with more than one backend"}},
		{"buffering a gRPC stream", func(o *v1beta1.NginxOperator) {
			proxy(o).BackendProtocol, proxy(o).Buffering = "GRPC", &v1beta1.ProxyBuffering{Disabled: true}
		}, []string{at, "buffering, interceptErrors, sessionAffinity and urlRewrite.path are for HTTP backends"}},
		{"cookie affinity for gRPC", func(o *v1beta1.NginxOperator) {
			proxy(o).BackendProtocol, proxy(o).SessionAffinity = "GRPC", &v1beta1.SessionAffinity{}
		}, []string{at, "keeps no cookies"}},
		{"h2c on a TLS port", func(o *v1beta1.NginxOperator) {
			o.Spec.Ports[0].H2C = true
			o.Spec.Config.Servers[0].TLS = &v1beta1.TLS{SecretName: "web-tls"}
		}, []string{"spec", "h2c is for plain-text ports"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.want...) })
	}
}

// Existing proxy locations stay valid and get no new defaults: the new
// fields are unset until a user sets them, so nothing renders differently.
func TestUpstreamFieldsDefaultOnlyWhatIsSet(t *testing.T) {
	obj := valid()
	obj.Spec.Config.Servers[0].Locations[1].Proxy.TLS = &v1beta1.BackendTLS{}
	out, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p := out.Spec.Config.Servers[0].Locations[1].Proxy
	if p.BackendProtocol != "" || p.LoadBalancingMethod != "" || p.Retry != nil || p.KeepAlive != nil || p.SessionAffinity != nil {
		t.Errorf("an existing proxy location got new fields: %+v", p)
	}

	obj = valid()
	obj.Spec.Config.Servers[0].Locations[1].Proxy.Retry = &v1beta1.ProxyRetry{}
	obj.Spec.Config.Servers[0].Locations[1].Proxy.KeepAlive = &v1beta1.UpstreamKeepAlive{}
	obj.Spec.Config.Servers[0].Locations[1].Proxy.SessionAffinity = &v1beta1.SessionAffinity{}
	out, errs = validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p = out.Spec.Config.Servers[0].Locations[1].Proxy
	want := &v1beta1.ProxyLocation{Service: "api", Port: 80, ConnectTimeoutSeconds: 1, SendTimeoutSeconds: 60, ReadTimeoutSeconds: 60,
		Retry:           &v1beta1.ProxyRetry{Conditions: []string{"error", "timeout"}, Tries: 3},
		KeepAlive:       &v1beta1.UpstreamKeepAlive{Connections: ptr.To[int32](32), Requests: 1000, TimeSeconds: 3600, TimeoutSeconds: 60},
		SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Name: "route", HTTPOnly: ptr.To(true)}},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("the defaults of retry: {}, keepAlive: {} and sessionAffinity: {} (-want +got):\n%s", diff)
	}
}
