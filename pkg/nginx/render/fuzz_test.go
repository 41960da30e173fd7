package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// FuzzRenderedConfigHasExactlyTheDirectivesAsked puts arbitrary strings in
// every free-text field of a spec (bypassing the schema, as a compromised or
// buggy client would) and checks that the rendered nginx.conf parses back to
// exactly the directive tree the renderer built: no string can add, remove or
// reshape a directive or a block. Render may refuse a string; it may not
// misrender one.
//
// The routing fields take the same strings: name goes into every header
// name and value of the header filters, and every other new string field
// (CIDR, paths, hostnames, CA reference, expiry) takes path or serverName.
// So do the protocol and access fields: the real IP header and gzip types
// take name and headerValue, TLS protocols and ciphers take bodySize and
// url, the allow/deny CIDRs take path and serverName, and basic auth takes
// secret, name and headerValue. The upstream fields too: hash keys take
// name, headerValue and secret, the balancing method bodySize, retry
// conditions name, headerValue and url, and the affinity cookie name, path
// and headerValue; gRPC locations take the header filters and backend TLS.
func FuzzRenderedConfigHasExactlyTheDirectivesAsked(f *testing.F) {
	f.Add("example.com", "/", "max-age=60", "https://example.com/", "web-tls", "api", "1m", "X-Team")
	f.Add("a; } server { listen 80", "/x { return 200 pwned; }", "v\" always; add_header X-Evil \"1", "https://a/#;", "t\nls", "svc;", "1m; include /etc/passwd", "X\\E) { }")
	f.Add("", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, serverName, path, headerValue, url, secret, service, bodySize, name string) {
		headers := &v1beta1.HeaderModifier{
			Set: []v1beta1.Header{{Name: name, Value: headerValue}}, Add: []v1beta1.Header{{Name: name + "a", Value: headerValue}}, Remove: []string{name + "b"},
		}
		spec := v1beta1.NginxOperatorSpec{
			Ports:   []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}, {Name: "grpc", ContainerPort: 8081, H2C: true}},
			Metrics: v1beta1.MetricsSpec{Enabled: true},
			Config: v1beta1.NginxConfig{
				NginxSettings: v1beta1.NginxSettings{
					ClientMaxBodySize: bodySize,
					TrustedProxies:    []string{path},
					RealIP:            &v1beta1.RealIP{Header: name},
					Gzip:              &v1beta1.Gzip{Types: []string{headerValue, name}, Level: 5},
					AccessLog:         v1beta1.AccessLog{Format: "JSON"},
					TLS:               v1beta1.TLSPolicy{Protocols: []string{bodySize}, Ciphers: []string{url, name}, SessionCacheMiB: 1, SessionTimeoutMinutes: 1},
				},
				Servers: []v1beta1.Server{
					{Port: "http", ServerNames: []string{serverName}, ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: path}},
						IPAccess:  &v1beta1.IPAccess{Allow: []string{path}, Deny: []string{serverName}},
						BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: secret, Key: name, Realm: headerValue},
						RateLimit: &v1beta1.RateLimit{RequestsPerSecond: 1, ZoneSizeMiB: 1},
						Locations: []v1beta1.Location{
							{Path: path, Static: &v1beta1.StaticLocation{Fallback: path}, Expires: bodySize, ClientMaxBodySize: bodySize, Headers: []v1beta1.Header{{Name: "X-Test", Value: headerValue}}},
							{Path: "/r", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: url, Code: 301}},
							{Path: "/p/", Proxy: &v1beta1.ProxyLocation{Service: service, Port: 80,
								TLS:        &v1beta1.BackendTLS{Hostname: serverName, CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: secret, Key: path}},
								URLRewrite: &v1beta1.URLRewrite{Hostname: serverName, Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: &path}}},
								RequestHeaders: headers, ResponseHeaders: headers},
							{Path: path + "/w", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: service, Port: 80}, {Service: serverName, Port: 81}},
								URLRewrite: &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: &path}}}},
							{Path: path + "/g", Redirect: &v1beta1.RedirectLocation{Hostname: serverName, Scheme: service, Code: 308,
								Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: &url}}},
							{Path: path + "/hash", Proxy: &v1beta1.ProxyLocation{Service: service, Port: 80, LoadBalancingMethod: "hash consistent",
								HashKey:   &v1beta1.HashKey{Source: "Header", Name: name},
								Retry:     &v1beta1.ProxyRetry{Conditions: []string{name, headerValue}, Tries: 2, NonIdempotent: true},
								KeepAlive: &v1beta1.UpstreamKeepAlive{Connections: ptr.To[int32](8), Requests: 1, TimeSeconds: 1, TimeoutSeconds: 1}}},
							{Path: path + "/q", Proxy: &v1beta1.ProxyLocation{Service: service, Port: 80, LoadBalancingMethod: bodySize,
								HashKey: &v1beta1.HashKey{Source: "QueryParameter", Name: headerValue}}},
							{Path: path + "/cookie", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: service, Port: 80, Weight: ptr.To[int32](1)}},
								SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Name: name, Path: path, SameSite: headerValue,
									MaxAgeSeconds: ptr.To[int32](60), Secure: true, HTTPOnly: ptr.To(true)}}}},
							{Path: path + "/grpc", Proxy: &v1beta1.ProxyLocation{Service: service, Port: 50051, BackendProtocol: "GRPCS",
								TLS:                 &v1beta1.BackendTLS{Hostname: serverName},
								Retry:               &v1beta1.ProxyRetry{Conditions: []string{url}, Tries: 1},
								LoadBalancingMethod: "random two least_conn"},
								ResponseHeaders: headers},
						}},
					{Port: "https", TLS: &v1beta1.TLS{SecretName: secret,
						ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: secret, Key: name}, VerifyDepth: 1}}},
					{Port: "http", ServerNames: []string{serverName + "x"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{Code: 308}},
					{Port: "grpc", Locations: []v1beta1.Location{{Path: path, Proxy: &v1beta1.ProxyLocation{Service: service, Port: 80, BackendProtocol: "GRPC",
						LoadBalancingMethod: "hash", HashKey: &v1beta1.HashKey{Source: "Cookie", Name: secret}}}}},
				},
			},
		}
		opts := Options{Paths: PodPaths(), Namespace: "team-a"}
		want, err := Directives(&spec, opts)
		if err != nil {
			return // a spec validation refuses
		}
		text, err := conf.Render(want)
		if err != nil {
			return // refused, e.g. a control character: nothing is written
		}
		got, err := conf.Parse(text)
		if err != nil {
			t.Fatalf("rendered config does not parse: %v\n%s", err, text)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("parsed config differs from what was rendered (-want +got):\n%s\n%s", diff, text)
		}
	})
}
