package render

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// specs are representative instances; each has a golden nginx.conf.
var specs = map[string]v1beta1.NginxOperatorSpec{
	"minimal": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
	},
	"static-site-with-metrics": {
		Ports:   []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Metrics: v1beta1.MetricsSpec{Enabled: true},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				WorkerConnections:       2048,
				ClientMaxBodySize:       "10m",
				KeepaliveTimeoutSeconds: 30,
			},
			Servers: []v1beta1.Server{{
				Port: "http", ServerNames: []string{"example.com", "*.example.com"}, DefaultServer: true,
				Locations: []v1beta1.Location{
					{Path: "/", Static: &v1beta1.StaticLocation{}, Headers: []v1beta1.Header{{Name: "Cache-Control", Value: "max-age=60"}}},
					{Path: "/files/", Static: &v1beta1.StaticLocation{Autoindex: true}},
				},
			}},
		},
	},
	"reverse-proxy-with-tls": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "http", Locations: []v1beta1.Location{{Path: "/", Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/", Code: 301}}}},
			{
				Port: "https", ServerNames: []string{"example.com"}, TLS: &v1beta1.TLS{SecretName: "web-tls"},
				Locations: []v1beta1.Location{
					{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, ReadTimeoutSeconds: 30}},
					{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 308}},
					{Path: "/", Static: &v1beta1.StaticLocation{}},
				},
			},
		}},
	},
	// A NodePort Service whose https port clients reach on 8443 (the
	// cluster's 443 being another's): redirects without a port of their
	// own name it; one that names 443 leaves the port out.
	"service-ports": {
		Ports: []v1beta1.Port{
			{Name: "http", ContainerPort: 8080, NodePort: 30080},
			{Name: "https", ContainerPort: 9443, ServicePort: 8443, NodePort: 30443},
		},
		Service: v1beta1.ServiceSpec{Type: corev1.ServiceTypeNodePort},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "http", ServerNames: []string{"example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{}},
			{Port: "http", ServerNames: []string{"www.example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{Port: ptr.To[int32](443), Code: 301}},
			{Port: "https", ServerNames: []string{"example.com", "www.example.com"}, TLS: &v1beta1.TLS{SecretName: "web-tls"}},
		}},
	},
	// Every routing field at once: what a gateway in front of real
	// applications needs.
	"gateway-routing": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				TrustedProxies: []string{"10.0.0.0/8", "fd00::/8"},
			},
			Servers: []v1beta1.Server{
				{Port: "http", ServerNames: []string{"app.example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{}},
				{Port: "http", ServerNames: []string{"legacy.example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{Port: ptr.To[int32](8443), Code: 301}},
				{
					Port: "https", ServerNames: []string{"app.example.com"}, TLS: &v1beta1.TLS{SecretName: "app-tls"},
					ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/errors/404.html"}, {Codes: []int32{502, 503, 504}, Path: "/errors/5xx.html"}},
					Locations: []v1beta1.Location{
						{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}},
						{Path: "/assets/", Static: &v1beta1.StaticLocation{}, Expires: "7d", ResponseHeaders: &v1beta1.HeaderModifier{Add: []v1beta1.Header{{Name: "X-Content-Type-Options", Value: "nosniff"}}}},
						{Path: "/api/", ClientMaxBodySize: "100m", Proxy: &v1beta1.ProxyLocation{
							Backends:              []v1beta1.Backend{{Service: "api", Port: 80, Weight: ptr.To[int32](90)}, {Service: "api-canary", Port: 80, Weight: ptr.To[int32](10)}, {Service: "api-old", Port: 80, Weight: ptr.To[int32](0)}, {Service: "api-next", Port: 80}},
							ConnectTimeoutSeconds: 5, SendTimeoutSeconds: 30, ReadTimeoutSeconds: 120, InterceptErrors: true,
							URLRewrite: &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/v2/")}},
						},
							RequestHeaders: &v1beta1.HeaderModifier{
								Set:    []v1beta1.Header{{Name: "X-Forwarded-Proto", Value: "https"}, {Name: "X-Team", Value: "a"}},
								Add:    []v1beta1.Header{{Name: "X-Via", Value: "nginx-operator"}},
								Remove: []string{"Cookie"},
							},
							ResponseHeaders: &v1beta1.HeaderModifier{
								Set:    []v1beta1.Header{{Name: "Cache-Control", Value: "no-store"}},
								Remove: []string{"X-Powered-By"},
							},
						},
						{Path: "/events", Proxy: &v1beta1.ProxyLocation{Service: "events", Port: 8080, ReadTimeoutSeconds: 3600,
							Buffering: &v1beta1.ProxyBuffering{Disabled: true, HeaderBufferKiB: 16, Buffers: 4, BufferKiB: 8}}},
						{Path: "/secure/", Proxy: &v1beta1.ProxyLocation{Service: "vault", Port: 8200,
							TLS:        &v1beta1.BackendTLS{CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "vault-ca"}},
							URLRewrite: &v1beta1.URLRewrite{Hostname: "vault.internal", Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/v1/sys/health")}}}},
						{Path: "/docs/", Redirect: &v1beta1.RedirectLocation{Hostname: "docs.example.com", Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/")}, Code: 301}},
						{Path: "/moved", Exact: true, Redirect: &v1beta1.RedirectLocation{Scheme: "https", Port: ptr.To[int32](443), Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/new")}}},
					},
				},
			},
		},
	},
	// A Gateway's routes to the same Services: locations that would have
	// the same upstream and speak to it alike share one block; the
	// forwarding headers and timeouts most locations have are stated once
	// in http (inherit.go), and a location that differs states its own.
	"routes-to-shared-services": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{
			Port: "http", DefaultServer: true,
			Locations: []v1beta1.Location{
				{Path: "/a", PathType: v1beta1.PathPrefixElements, Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}},
				{Path: "/b", PathType: v1beta1.PathPrefixElements, Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}},
				{Path: "/slow", PathType: v1beta1.PathPrefixElements, Proxy: &v1beta1.ProxyLocation{ReadTimeoutSeconds: 300, Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}},
				{Path: "/least", PathType: v1beta1.PathPrefixElements, Proxy: &v1beta1.ProxyLocation{LoadBalancingMethod: "least_conn", Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}},
				{Path: "/tls", PathType: v1beta1.PathPrefixElements, Proxy: &v1beta1.ProxyLocation{BackendProtocol: "HTTPS", Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}},
				{Path: "/echo.Echo/Say", PathType: v1beta1.PathExact, Proxy: &v1beta1.ProxyLocation{BackendProtocol: "GRPC", Backends: []v1beta1.Backend{{Service: "echo", Port: 9000, Weight: ptr.To[int32](1)}}}},
				{Path: "/echo.Echo/Stream", PathType: v1beta1.PathExact, Proxy: &v1beta1.ProxyLocation{BackendProtocol: "GRPC", Backends: []v1beta1.Backend{{Service: "echo", Port: 9000, Weight: ptr.To[int32](1)}}}},
				{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}},
			},
		}}},
	},
	// Request matching: locations of one path told apart by header, query
	// and method, element-wise prefixes, an exact path, a regular
	// expression, and a fallback to the shorter prefix when a match fails.
	"request-matching": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{
			Port: "http",
			Locations: []v1beta1.Location{
				{Path: "/", PathType: "PathPrefix", Static: &v1beta1.StaticLocation{}},
				{Path: "/api", PathType: "PathPrefix", ClientMaxBodySize: "10m", Match: &v1beta1.RequestMatch{Headers: []v1beta1.HeaderMatch{{Name: "X-Canary", Value: "always"}}},
					Proxy: &v1beta1.ProxyLocation{Service: "api-canary", Port: 80}},
				{Path: "/api", PathType: "PathPrefix", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}},
				{Path: "/api/orders", PathType: "PathPrefix", Match: &v1beta1.RequestMatch{Method: "POST",
					QueryParams: []v1beta1.QueryParamMatch{{Type: "RegularExpression", Name: "v", Value: "2|3"}}},
					Proxy: &v1beta1.ProxyLocation{Service: "orders-v2", Port: 80}},
				{Path: "/healthz", PathType: "Exact", Static: &v1beta1.StaticLocation{}, DisableAccessLog: true},
				{Path: `/img/[a-z0-9]+\.(png|jpe?g)`, PathType: "RegularExpression", Static: &v1beta1.StaticLocation{}, Expires: "7d"},
			},
		}}},
	},
	// The protocols, client address, access control and log settings of
	// an edge server, on a dual-stack Service.
	"edge-protocols": {
		Ports:     []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
		Service:   v1beta1.ServiceSpec{IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				TrustedProxies: []string{"10.0.0.0/8"},
				RealIP:         &v1beta1.RealIP{Header: "X-Forwarded-For"},
				Gzip:           &v1beta1.Gzip{Types: []string{"text/html", "text/css", "application/json"}},
				AccessLog:      v1beta1.AccessLog{Format: "JSON"},
				TLS:            v1beta1.TLSPolicy{Protocols: []string{"TLSv1.3"}, SessionCacheMiB: 20},
			},
			Servers: []v1beta1.Server{
				{Port: "http", ServerNames: []string{"shop.example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{}},
				{
					Port: "https", ServerNames: []string{"shop.example.com"}, DefaultServer: true,
					TLS:       &v1beta1.TLS{SecretName: "shop-tls", HSTS: &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](31536000), IncludeSubDomains: true}},
					IPAccess:  &v1beta1.IPAccess{Deny: []string{"10.66.0.0/16", "2001:db8::/32"}},
					RateLimit: &v1beta1.RateLimit{RequestsPerSecond: 20, Burst: 40},
					Locations: []v1beta1.Location{
						{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}, ResponseHeaders: &v1beta1.HeaderModifier{Add: []v1beta1.Header{{Name: "X-Frame-Options", Value: "DENY"}}}},
						{Path: "/healthz", Exact: true, Static: &v1beta1.StaticLocation{}, DisableAccessLog: true},
						{Path: "/admin/", Static: &v1beta1.StaticLocation{}, IPAccess: &v1beta1.IPAccess{Allow: []string{"10.0.0.0/8"}}, BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "admins"}},
						{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}, RateLimit: &v1beta1.RateLimit{RequestsPerMinute: 600, Burst: 50, ZoneSizeMiB: 4}},
					},
				},
				{
					Port: "https", ServerNames: []string{"partners.example.com"},
					TLS:       &v1beta1.TLS{SecretName: "partners-tls", ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "partners-ca"}, VerifyDepth: 2}},
					BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "partners", Realm: "Partners"},
					Locations: []v1beta1.Location{
						{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "partner-api", Port: 8080}},
						{Path: "/status", Exact: true, Static: &v1beta1.StaticLocation{}, BasicAuth: &v1beta1.HTTPBasicAuth{Disabled: true}},
					},
				},
			},
		},
	},
	// Every way of choosing an endpoint, retrying and reusing connections,
	// one location each (issue 28).
	"upstream-balancing": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{
			Port: "https", ServerNames: []string{"app.example.com"},
			TLS: &v1beta1.TLS{SecretName: "app-tls", HSTS: &v1beta1.HSTS{}},
			Locations: []v1beta1.Location{
				{Path: "/least/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "least_conn",
					KeepAlive: &v1beta1.UpstreamKeepAlive{Connections: ptr.To[int32](64), Requests: 500, TimeSeconds: 600, TimeoutSeconds: 30}}},
				{Path: "/ip/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "ip_hash",
					KeepAlive: &v1beta1.UpstreamKeepAlive{Connections: ptr.To[int32](0)}}},
				{Path: "/user/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "hash consistent",
					HashKey: &v1beta1.HashKey{Source: "Header", Name: "X-User-ID"}, KeepAlive: &v1beta1.UpstreamKeepAlive{}}},
				{Path: "/cart/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "hash",
					HashKey: &v1beta1.HashKey{Source: "Cookie", Name: "cart_id"}}},
				{Path: "/search", Exact: true, Proxy: &v1beta1.ProxyLocation{Service: "search", Port: 80, LoadBalancingMethod: "hash consistent",
					HashKey: &v1beta1.HashKey{Source: "QueryParameter", Name: "q"}}},
				{Path: "/files/", Proxy: &v1beta1.ProxyLocation{Service: "files", Port: 80, LoadBalancingMethod: "hash consistent", HashKey: &v1beta1.HashKey{Source: "RequestURI"}}},
				{Path: "/client/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "hash consistent", HashKey: &v1beta1.HashKey{Source: "ClientIP"}}},
				{Path: "/random/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "random two least_conn"}},
				{Path: "/rr/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "round_robin"}},
				{Path: "/shop/", Proxy: &v1beta1.ProxyLocation{
					Backends:        []v1beta1.Backend{{Service: "shop", Port: 80, Weight: ptr.To[int32](9)}, {Service: "shop-canary", Port: 80, Weight: ptr.To[int32](1)}},
					SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Name: "shop_route", MaxAgeSeconds: ptr.To[int32](3600), Secure: true, SameSite: "None"}},
					Retry:           &v1beta1.ProxyRetry{Conditions: []string{"error", "timeout", "http_502", "http_503", "http_504"}, Tries: 2, TimeoutSeconds: 10},
				}},
				{Path: "/session", Exact: true, Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80,
					SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Path: "/", HTTPOnly: ptr.To(false)}}}},
				{Path: "/orders/", Proxy: &v1beta1.ProxyLocation{Service: "orders", Port: 80, Retry: &v1beta1.ProxyRetry{NonIdempotent: true}}},
			},
		}}},
	},
	// Gateway API's timeouts to the millisecond, and mirrors of every
	// request and of a share, one to a Service the location also uses.
	"mirrors-and-timeouts": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
			{Path: "/checkout/", Proxy: &v1beta1.ProxyLocation{Service: "shop", Port: 80,
				Timeouts: &v1beta1.ProxyTimeouts{Request: "2s", BackendRequest: "500ms"},
				Mirrors: []v1beta1.Mirror{
					{Service: "shop-next", Port: 80},
					{Service: "audit", Namespace: "security", Port: 8080, Fraction: &v1beta1.Fraction{Numerator: 1, Denominator: 3}},
				}}},
			{Path: "/reports/", Proxy: &v1beta1.ProxyLocation{Service: "reports", Port: 80, Timeouts: &v1beta1.ProxyTimeouts{Request: "0s"},
				Mirrors: []v1beta1.Mirror{{Service: "shop-next", Port: 80, Percent: ptr.To[int32](25)}}}},
		}}}},
	},
	// CORS on a proxy (the Service's own CORS headers hidden) and on
	// static content, under HSTS, which the preflight's answer keeps.
	"cors": {
		Ports: []v1beta1.Port{{Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "https", TLS: &v1beta1.TLS{SecretName: "tls", HSTS: &v1beta1.HSTS{}},
			Locations: []v1beta1.Location{
				{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}, CORS: &v1beta1.CORS{
					AllowOrigins: []string{"https://app.example.com", "https://*.example.org", "http://localhost:3000"}, AllowCredentials: true,
					AllowMethods: []string{"GET", "POST"}, AllowHeaders: []string{"*"}, ExposeHeaders: []string{"X-Request-Id"}}},
				{Path: "/fonts/", Static: &v1beta1.StaticLocation{}, CORS: &v1beta1.CORS{AllowOrigins: []string{"*"}}},
			}}}},
	},
	// Body and header buffers at every level, rate and connection limits
	// keyed on the address, a header and a cookie nginx has no variable for,
	// with exemptions; a block of matched locations whose body sizes mix
	// their own and the server's.
	"limits-and-buffers": {
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{ClientBodyBufferKiB: 32, ClientHeaderBuffers: &v1beta1.ClientHeaderBuffers{Count: 4, SizeKiB: 16}},
			Servers: []v1beta1.Server{{Port: "http",
				ClientMaxBodySize: "8m", ClientBodyBufferKiB: 64, ClientHeaderBuffers: &v1beta1.ClientHeaderBuffers{Count: 8, SizeKiB: 80},
				ConnectionLimit: &v1beta1.ConnectionLimit{Connections: 20, Exempt: &v1beta1.LimitExemptions{Clients: []string{"10.0.0.0/8"}}},
				Locations: []v1beta1.Location{
					{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80},
						RateLimit: &v1beta1.RateLimit{RequestsPerSecond: 10, Burst: 20,
							Key:    &v1beta1.RequestKey{Source: "Header", Name: "X-API-Key"},
							Exempt: &v1beta1.LimitExemptions{Keys: []string{"partner-key", "~not-a-regex", "default"}, Clients: []string{"192.0.2.0/24"}}}},
					{Path: "/session/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, LoadBalancingMethod: "hash consistent",
						HashKey: &v1beta1.HashKey{Source: "Cookie", Name: "session-id"}},
						ConnectionLimit: &v1beta1.ConnectionLimit{Connections: 2, Key: &v1beta1.RequestKey{Source: "Cookie", Name: "session-id"}}},
					{Path: "/upload/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}, ClientMaxBodySize: "100m", ClientBodyBufferKiB: 1024,
						Match: &v1beta1.RequestMatch{Method: "PUT"}},
					{Path: "/upload/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}},
				}}},
		},
	},
	// External authentication: a server's by a Service, with sign-in,
	// answer headers and a cache keyed on a cookie nginx has no variable
	// for, inherited by a proxy, a static and a gRPC location, turned off in
	// one; a location's own over TLS; error pages kept beside the
	// sign-in redirect.
	"external-auth": {
		Ports: []v1beta1.Port{{Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "https", TLS: &v1beta1.TLS{SecretName: "tls"},
			ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/errors/404.html"}},
			ExternalAuth: &v1beta1.ExternalAuth{Service: "oauth2-proxy", Port: 4180, Path: "/oauth2/auth",
				ResponseHeaders: []string{"X-Auth-Request-User", "X-Auth-Request-Email"},
				SignIn:          &v1beta1.ExternalAuthSignIn{URL: "https://auth.example.com/oauth2/start"},
				Cache: &v1beta1.ExternalAuthCache{Key: []v1beta1.RequestKey{{Source: "Cookie", Name: "_oauth2-proxy"}, {Source: "Header", Name: "Authorization"}},
					DurationSeconds: 30}},
			Locations: []v1beta1.Location{
				{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "app", Port: 80}},
				{Path: "/docs/", Static: &v1beta1.StaticLocation{}},
				{Path: "/grpc.Service/", Proxy: &v1beta1.ProxyLocation{Service: "grpc", Port: 50051, BackendProtocol: "GRPC"}},
				{Path: "/oauth2/", Proxy: &v1beta1.ProxyLocation{Service: "oauth2-proxy", Port: 4180}, ExternalAuth: &v1beta1.ExternalAuth{Disabled: true}},
				{Path: "/partners/", Proxy: &v1beta1.ProxyLocation{Service: "app", Port: 80},
					ExternalAuth: &v1beta1.ExternalAuth{Service: "partner-auth", Port: 8443, Path: "/check", TimeoutSeconds: 2,
						TLS: &v1beta1.BackendTLS{Hostname: "auth.partner.example", CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "partner-ca"}}}},
			}}}},
	},
	// gRPC in plain text (h2c) and over TLS, to plain and TLS Services.
	"grpc": {
		Ports: []v1beta1.Port{{Name: "grpc", ContainerPort: 8081, H2C: true}, {Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "grpc", Locations: []v1beta1.Location{
				{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "greeter", Port: 50051, BackendProtocol: "GRPC",
					ReadTimeoutSeconds: 300, LoadBalancingMethod: "random two",
					Retry: &v1beta1.ProxyRetry{Conditions: []string{"error", "timeout", "http_503"}, Tries: 3, NonIdempotent: true}},
					RequestHeaders:  &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-Team", Value: "a"}}},
					ResponseHeaders: &v1beta1.HeaderModifier{Remove: []string{"X-Internal"}}},
			}},
			{Port: "https", ServerNames: []string{"grpc.example.com"}, TLS: &v1beta1.TLS{SecretName: "grpc-tls"},
				ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{502}, Path: "/errors/502.html"}},
				RateLimit:  &v1beta1.RateLimit{RequestsPerSecond: 100},
				Locations: []v1beta1.Location{
					{Path: "/payments.Payments/", Proxy: &v1beta1.ProxyLocation{Service: "payments", Port: 443, BackendProtocol: "GRPCS",
						TLS: &v1beta1.BackendTLS{Hostname: "payments.internal", CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "payments-ca"}}}},
					{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "web", Port: 443, BackendProtocol: "HTTPS"}},
				}},
		}},
	},
	// Streams: a port shared by TLS passthrough (by name, with a default
	// for the other names) and an HTTPS server moved to Service port 443; a
	// database split by weight and told the client's address; DNS over
	// UDP and TCP on one number; TLS terminated for a broker.
	"streams": {
		Ports: []v1beta1.Port{
			{Name: "https", ContainerPort: 8443, ServicePort: 443},
			{Name: "db", ContainerPort: 5432},
			{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", ContainerPort: 5353},
			{Name: "amqps", ContainerPort: 5671},
		},
		Config: v1beta1.NginxConfig{
			Servers: []v1beta1.Server{{Port: "https", ServerNames: []string{"www.example.com"}, TLS: &v1beta1.TLS{SecretName: "www-tls"},
				Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "web", Port: 80}}}}},
			Streams: []v1beta1.Stream{
				{Port: "https", ServerNames: []string{"db.example.com", "*.vault.example.com"}, Backends: []v1beta1.Backend{{Service: "vault", Port: 8200}}},
				{Port: "https", ServerNames: []string{"mq.example.com"}, TLS: &v1beta1.StreamTLS{SecretName: "mq-tls"},
					Backends: []v1beta1.Backend{{Service: "rabbitmq", Port: 5672}}},
				{Port: "db", LoadBalancingMethod: "least_conn", ProxyProtocol: true, IdleTimeoutSeconds: 3600,
					Backends: []v1beta1.Backend{{Service: "postgres", Port: 5432, Weight: ptr.To[int32](3)}, {Service: "postgres-canary", Port: 5432, Weight: ptr.To[int32](1)}}},
				{Port: "dns", ExpectedResponses: ptr.To[int32](1), LoadBalancingMethod: "hash consistent",
					Backends: []v1beta1.Backend{{Service: "coredns", Port: 53}}},
				{Port: "dns-tcp", Backends: []v1beta1.Backend{{Service: "coredns", Port: 53}}},
				{Port: "amqps", TLS: &v1beta1.StreamTLS{SecretName: "mq-tls"}, ConnectTimeoutSeconds: 2,
					Backends: []v1beta1.Backend{{Service: "rabbitmq", Port: 5672}}},
			},
		},
	},
}

// renderOptions are the options the controller would pass for spec: IPv6
// when its Service asks for an IPv6 family, and the https port of a new
// instance's Service (serviceport.Standard).
// renderOptions render spec as the controller does in a cluster: each
// proxied Service resolved to two ready pods (clusterEndpoints).
func renderOptions(spec *v1beta1.NginxOperatorSpec, paths Paths) Options {
	ports := serviceport.Resolve(spec, serviceport.Standard)
	return Options{Paths: paths, Namespace: "team-a", IPv6: slices.Contains(spec.Service.IPFamilies, corev1.IPv6Protocol),
		HTTPSPort: ports.HTTPSRedirect, ServicePorts: ports.Moved(spec), Services: clusterEndpoints(spec)}
}

// clusterEndpoints resolve spec's proxied Services as a cluster would: the
// i-th with the ClusterIP 10.96.0.(10+i) and, behind each of its ports, two
// ready pods 10.244.(i).1 and .2 at target port 8080: the upstream shape
// the operator ships (endpoint servers with max_fails=0, the cluster
// address as the backup).
func clusterEndpoints(spec *v1beta1.NginxOperatorSpec) map[string]Service {
	out := map[string]Service{}
	for i, ref := range ReferencesOf(spec).Of(UseProxy) {
		s := Service{Address: fmt.Sprintf("10.96.0.%d", 10+i), AtEndpoints: true, Endpoints: map[int32][]string{}}
		for _, port := range ref.Ports {
			s.Endpoints[port] = []string{fmt.Sprintf("10.244.%d.1:8080", i), fmt.Sprintf("10.244.%d.2:8080", i)}
		}
		s.UDPEndpoints = map[int32][]string{}
		for _, port := range ref.UDPPorts {
			s.UDPEndpoints[port] = []string{fmt.Sprintf("10.244.%d.1:5353", i), fmt.Sprintf("10.244.%d.2:5353", i)}
		}
		out[ServiceKey(ref.Namespace, ref.Name)] = s
	}
	return out
}

// localEndpoints resolve spec's proxied Services to one endpoint each on
// 127.0.0.1, at the Service port, in the shape clusterEndpoints has: a real
// nginx on loopback reaches the tests' servers through the upstreams the
// operator ships.
func localEndpoints(spec *v1beta1.NginxOperatorSpec) map[string]Service {
	out := map[string]Service{}
	for _, ref := range ReferencesOf(spec).Of(UseProxy) {
		s := Service{Address: "127.0.0.1", AtEndpoints: true, Endpoints: map[int32][]string{}}
		for _, port := range ref.Ports {
			s.Endpoints[port] = []string{"127.0.0.1:" + strconv.Itoa(int(port))}
		}
		s.UDPEndpoints = map[int32][]string{}
		for _, port := range ref.UDPPorts {
			s.UDPEndpoints[port] = []string{"127.0.0.1:" + strconv.Itoa(int(port))}
		}
		out[ServiceKey(ref.Namespace, ref.Name)] = s
	}
	return out
}

func TestRenderMatchesGoldenFiles(t *testing.T) {
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			admitted := validationtest.Spec(t, spec)
			got, err := Config(admitted, renderOptions(admitted, PodPaths()))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".nginx.conf")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pkg/nginx/render -run Golden -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("nginx.conf differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestGoldenConfigsPassNginxT renders every representative spec with paths in
// a temporary directory (nginx -t opens the certificates and mime.types) and
// checks it with the real nginx.
func TestGoldenConfigsPassNginxT(t *testing.T) {
	nginxBin := tools.Nginx(t)
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			admitted := validationtest.Spec(t, spec)
			paths := testPaths(t, dir, admitted)
			cfg, err := Config(admitted, renderOptions(admitted, paths))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "nginx.conf")
			if err := os.WriteFile(file, cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tools.NginxTest(nginxBin, dir, file); err != nil {
				t.Fatalf("the %s config: %v\n%s", name, err, cfg)
			}
		})
	}
}

func TestSameLocationPathAsPrefixAndExactIsAllowed(t *testing.T) {
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
			{Path: "/a", Static: &v1beta1.StaticLocation{}},
			{Path: "/a", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/", Code: 302}},
		}}}},
	}
	if _, err := Config(validationtest.Spec(t, spec), Options{Paths: PodPaths()}); err != nil {
		t.Errorf("prefix and exact location on the same path refused: %v", err)
	}
}

// BenchmarkRender renders each golden spec, as admitted: what one reconcile
// of such an instance spends on its nginx.conf.
func BenchmarkRender(b *testing.B) {
	for _, name := range []string{"minimal", "gateway-routing", "edge-protocols"} {
		admitted := validationtest.Spec(b, specs[name])
		opts := renderOptions(admitted, PodPaths())
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Config(admitted, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
