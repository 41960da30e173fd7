package validation_test

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The routing fields refuse bad values at admission with a message that
// says what is wrong, on the field that holds it. Each case is what a user
// could plausibly write; want is the field path and the words they read.
func TestRoutingFieldsRefuseBadValuesWithMessagesUsersUnderstand(t *testing.T) {
	loc := func(o *v1beta1.NginxOperator) *v1beta1.Location { return &o.Spec.Config.Servers[0].Locations[1] }
	proxy := func(o *v1beta1.NginxOperator) *v1beta1.ProxyLocation { return loc(o).Proxy }
	server := func(o *v1beta1.NginxOperator) *v1beta1.Server { return &o.Spec.Config.Servers[0] }
	const at = "spec.config.servers[0].locations[1]"
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"a redirect with both a url and parts of one", func(o *v1beta1.NginxOperator) {
			*loc(o) = v1beta1.Location{Path: "/old", Redirect: &v1beta1.RedirectLocation{URL: "https://x.example/", Scheme: "https"}}
		}, []string{at + ".redirect", "set url for a fixed target, or scheme, hostname, port and path"}},
		{"a redirect scheme other than http and https", func(o *v1beta1.NginxOperator) {
			*loc(o) = v1beta1.Location{Path: "/old", Redirect: &v1beta1.RedirectLocation{Scheme: "ftp"}}
		}, []string{at + ".redirect.scheme", `supported values: "http", "https"`}},
		{"a redirect hostname with a port", func(o *v1beta1.NginxOperator) {
			*loc(o) = v1beta1.Location{Path: "/old", Redirect: &v1beta1.RedirectLocation{Hostname: "x.example:8443"}}
		}, []string{at + ".redirect.hostname", "should match"}},
		{"a path modifier without its value", func(o *v1beta1.NginxOperator) {
			*loc(o) = v1beta1.Location{Path: "/old/", Redirect: &v1beta1.RedirectLocation{Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplaceFullPath: ptr.To("/new")}}}
		}, []string{at + ".redirect.path", "type ReplacePrefixMatch needs replacePrefixMatch"}},
		{"a prefix replacement on an exact location", func(o *v1beta1.NginxOperator) {
			*loc(o) = v1beta1.Location{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/new")}}}
		}, []string{at, "ReplacePrefixMatch needs a prefix location"}},
		{"a rewrite to a path with a query", func(o *v1beta1.NginxOperator) {
			proxy(o).URLRewrite = &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/a?b=c")}}
		}, []string{at + ".proxy.urlRewrite.path.replaceFullPath", "should match"}},
		{"an empty rewrite", func(o *v1beta1.NginxOperator) { proxy(o).URLRewrite = &v1beta1.URLRewrite{} },
			[]string{at + ".proxy.urlRewrite", "set hostname, path or both"}},
		{"service and backends together", func(o *v1beta1.NginxOperator) {
			proxy(o).Backends = []v1beta1.Backend{{Service: "api-v2", Port: 80}}
		}, []string{at + ".proxy", "set service and port to proxy to one Service, or backends"}},
		{"a service without a port", func(o *v1beta1.NginxOperator) { proxy(o).Port = 0 },
			[]string{at + ".proxy", "set service and port"}},
		{"every backend weighted 0", func(o *v1beta1.NginxOperator) {
			*proxy(o) = v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "a", Port: 80, Weight: ptr.To[int32](0)}, {Service: "b", Port: 80, Weight: ptr.To[int32](0)}}}
		}, []string{at + ".proxy.backends", "at least one backend needs a weight above 0"}},
		{"the same backend twice", func(o *v1beta1.NginxOperator) {
			*proxy(o) = v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "a", Port: 80}, {Service: "a", Port: 80}}}
		}, []string{at + ".proxy.backends[1]", "Duplicate value"}},
		{"backend TLS without a hostname for several Services", func(o *v1beta1.NginxOperator) {
			*proxy(o) = v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "a", Port: 443}, {Service: "b", Port: 443}}, TLS: &v1beta1.BackendTLS{}}
		}, []string{at + ".proxy", "tls.hostname is required with more than one backend"}},
		{"a CA from a kind that cannot hold one", func(o *v1beta1.NginxOperator) {
			proxy(o).TLS = &v1beta1.BackendTLS{CACertificate: &v1beta1.CACertificateRef{Kind: "Pod", Name: "ca"}}
		}, []string{at + ".proxy.tls.caCertificate.kind", `supported values: "ConfigMap", "Secret"`}},
		{"a CA key that walks up", func(o *v1beta1.NginxOperator) {
			proxy(o).TLS = &v1beta1.BackendTLS{CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "ca", Key: ".."}}
		}, []string{at + ".proxy.tls.caCertificate.key", "key cannot be . or .."}},
		{"a connect timeout the kernel ignores", func(o *v1beta1.NginxOperator) { proxy(o).ConnectTimeoutSeconds = 300 },
			[]string{at + ".proxy.connectTimeoutSeconds", "should be less than or equal to 75"}},
		{"buffers nginx refuses", func(o *v1beta1.NginxOperator) {
			proxy(o).Buffering = &v1beta1.ProxyBuffering{HeaderBufferKiB: 64, Buffers: 4, BufferKiB: 4}
		}, []string{at + ".proxy.buffering", "must be less than (buffers - 1) * bufferKiB"}},
		{"request headers on a static location", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].RequestHeaders = &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-A", Value: "b"}}}
		}, []string{"spec.config.servers[0].locations[0]", "requestHeaders needs a proxy location"}},
		{"removing a response header of a static location", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].ResponseHeaders = &v1beta1.HeaderModifier{Remove: []string{"ETag"}}
		}, []string{"spec.config.servers[0].locations[0]", "responseHeaders.set and responseHeaders.remove need a proxy location"}},
		{"headers and responseHeaders together", func(o *v1beta1.NginxOperator) {
			loc(o).Headers = []v1beta1.Header{{Name: "X-A", Value: "b"}}
			loc(o).ResponseHeaders = &v1beta1.HeaderModifier{Add: []v1beta1.Header{{Name: "X-B", Value: "c"}}}
		}, []string{at, "headers is the older name of responseHeaders.add"}},
		{"setting the Host header", func(o *v1beta1.NginxOperator) {
			loc(o).RequestHeaders = &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "host", Value: "evil.example"}}}
		}, []string{at + ".requestHeaders", "are nginx's to manage: change the host with proxy.urlRewrite.hostname"}},
		{"removing Connection", func(o *v1beta1.NginxOperator) {
			loc(o).RequestHeaders = &v1beta1.HeaderModifier{Remove: []string{"Connection"}}
		}, []string{at + ".requestHeaders", "are nginx's to manage"}},
		{"a variable in a request header", func(o *v1beta1.NginxOperator) {
			loc(o).RequestHeaders = &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-User", Value: "$remote_user"}}}
		}, []string{at + ".requestHeaders.set[0].value", "should match"}},
		{"adding to a header nginx cannot read", func(o *v1beta1.NginxOperator) {
			loc(o).RequestHeaders = &v1beta1.HeaderModifier{Add: []v1beta1.Header{{Name: "X_Odd", Value: "v"}}}
		}, []string{at, "requestHeaders.add names may hold letters, digits and '-' only"}},
		{"an HTTPS redirect with locations", func(o *v1beta1.NginxOperator) { server(o).RedirectToHTTPS = &v1beta1.HTTPSRedirect{} },
			[]string{"spec.config.servers[0]", "redirectToHTTPS answers every request of the server with a redirect: it cannot be combined with tls, locations, ipAccess, basicAuth, rateLimit or connectionLimit"}},
		{"an error page for a success", func(o *v1beta1.NginxOperator) {
			server(o).ErrorPages = []v1beta1.ErrorPage{{Codes: []int32{200}, Path: "/ok.html"}}
		}, []string{"spec.config.servers[0].errorPages[0].codes", "codes must be from 400 to 599 except 499"}},
		{"an error page for 499", func(o *v1beta1.NginxOperator) {
			server(o).ErrorPages = []v1beta1.ErrorPage{{Codes: []int32{404, 499}, Path: "/oops.html"}}
		}, []string{"spec.config.servers[0].errorPages[0].codes", "nginx refuses a page for it"}},
		{"an error page outside the content", func(o *v1beta1.NginxOperator) {
			server(o).ErrorPages = []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "404.html"}}
		}, []string{"spec.config.servers[0].errorPages[0].path", "should match"}},
		{"a fallback to a named location", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Static.Fallback = "@app"
		}, []string{"spec.config.servers[0].locations[0].static.fallback", "should match"}},
		{"an expiry without a unit", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Locations[0].Expires = "3600" },
			[]string{"spec.config.servers[0].locations[0].expires", "should match"}},
		{"a trusted proxy that is an address, not a CIDR", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.TrustedProxies = []string{"10.0.0.1"}
		}, []string{"spec.config.trustedProxies", "every entry must be a CIDR such as 10.0.0.0/8 or fd00::/8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.want...) })
	}
}
