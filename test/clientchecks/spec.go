// Package clientchecks is the one list of what a client expects of an nginx
// an NginxOperator configures, checked in two tiers: the renderer's tests
// run the real nginx on loopback (pkg/nginx/render), test/realpods runs the
// operator's pods on a real node and goes through their Service. Both deploy
// Spec, put the Fixtures where their nginx reads them, and call Run with a
// Target that reaches their nginx, so a new field adds one check that both
// tiers run.
//
// The upstreams are test/echo's handler, in pods or on loopback, named after
// their Services (API, Canary, Secure).
package clientchecks

import (
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The virtual hosts of Spec: the checks name them in Host headers and SNI.
const (
	// AppHost is the default server of both ports, with every location.
	AppHost = "app.test"
	// PlainHost redirects to HTTPS on the Service port of the https port
	// (redirectToHTTPS without a port).
	PlainHost = "plain.test"
	// TLSOnlyHost redirects to HTTPS on the instance's https port.
	TLSOnlyHost = "tls-only.test"
	// PartnersHost asks for a client certificate from the partners' CA.
	PartnersHost = "partners.test"
	// NewHost is where /old/ redirects.
	NewHost = "new.test"
	// BigHeadersHost proxies to API with header buffers of 80 KiB.
	BigHeadersHost = "big-headers.test"
)

// The Services behind the proxy locations; the echo handler behind each
// answers with the Service's name.
const (
	API    = "api"
	Canary = "api-canary"
	Secure = "secure" // HTTPS
	// AuthDown is a Service without a pod listening: the authentication
	// service of /members-down/.
	AuthDown = "auth-down"
)

// What Spec references, in the instance's namespace: the tier creates them
// from the Fixtures.
const (
	// SiteConfigMap holds Fixtures.Content.
	SiteConfigMap = "site"
	// ServingSecret is the TLS Secret of AppHost (and of PartnersHost).
	ServingSecret = "web-tls"
	// UsersSecret holds Fixtures.Htpasswd under "auth".
	UsersSecret = "users"
	// PartnersCA is a Secret holding Fixtures.PartnersCA's certificate under ca.crt.
	PartnersCA = "partners-ca"
	// SecureCA holds, under ca.crt, the CA of Secure's serving certificate;
	// Options.SecureCAKind says whether it is a ConfigMap or a Secret.
	SecureCA = "secure-ca"
)

// The basic auth realm of /private.
const Realm = "Team A"

// Options are what differs between the tiers' instances of Spec.
type Options struct {
	// HTTPPort and HTTPSPort are the container ports of http and https;
	// clients reach them at the same numbers (Spec sets each servicePort
	// to its containerPort, so the Service's ports match).
	HTTPPort, HTTPSPort int32
	// APIPort, CanaryPort and SecurePort are the ports of the Services.
	APIPort, CanaryPort, SecurePort int32
	// SecureHostname is the name Secure's certificate is verified against;
	// empty: the Service's DNS name.
	SecureHostname string
	// SecureCAKind is SecureCA's kind: ConfigMap or Secret.
	SecureCAKind string
	// TrustedProxies are the addresses whose X-Forwarded-* headers nginx
	// believes: Target's Trusted source connects from one of them.
	TrustedProxies []string
	// ClientCIDR holds the addresses the tier's clients connect from, which
	// /internal allows.
	ClientCIDR string
	// ShortReadTimeout bounds /short/, LongReadTimeout /api/ and /ws, in
	// whole seconds. The checks wait half of each: an answer that slow, or
	// a WebSocket idle that long, passes where the timeout is long and gets
	// 504 where it is short. The real pods take 30 s, as a slow client or
	// application would, through everything between the node and nginx.
	ShortReadTimeout, LongReadTimeout time.Duration
}

// Spec is the NginxOperator spec every check runs against: one instance with
// every field the checks exercise.
func Spec(o Options) v1beta1.NginxOperatorSpec {
	return v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](1),
		Ports:    []v1beta1.Port{{Name: "http", ContainerPort: o.HTTPPort, ServicePort: o.HTTPPort}, {Name: "https", ContainerPort: o.HTTPSPort, ServicePort: o.HTTPSPort}},
		// A limit of 1.5 CPUs makes two workers; the request is small so
		// that the instances of a test fit on the real node.
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
		},
		Content: v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: SiteConfigMap}}},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				TrustedProxies: o.TrustedProxies,
				RealIP:         &v1beta1.RealIP{Header: "X-Forwarded-For"},
				Gzip:           &v1beta1.Gzip{},
				AccessLog:      v1beta1.AccessLog{Format: "JSON"},
			},
			Servers: servers(o),
		},
	}
}

// servers are the redirecting servers, AppHost on both ports with the same
// locations (so a check sees what http and https change), and PartnersHost.
func servers(o Options) []v1beta1.Server {
	errorPages := []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/404.html"}}
	return []v1beta1.Server{
		{Port: "http", ServerNames: []string{PlainHost}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{}},
		{Port: "http", ServerNames: []string{TLSOnlyHost}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{Port: ptr.To(o.HTTPSPort)}},
		{Port: "http", ServerNames: []string{AppHost}, DefaultServer: true, ErrorPages: errorPages, Locations: locations(o)},
		{Port: "http", ServerNames: []string{BigHeadersHost}, ClientHeaderBuffers: &v1beta1.ClientHeaderBuffers{Count: 4, SizeKiB: bigHeaderKiB},
			Locations: []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: API, Port: o.APIPort}}}},
		{
			Port: "https", ServerNames: []string{AppHost}, DefaultServer: true, ErrorPages: errorPages, Locations: locations(o),
			TLS: &v1beta1.TLS{SecretName: ServingSecret, HSTS: &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](600), IncludeSubDomains: true}},
		},
		{Port: "https", ServerNames: []string{PartnersHost}, TLS: &v1beta1.TLS{
			SecretName:         ServingSecret,
			ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: PartnersCA}},
		}},
	}
}

// locations of AppHost. Content files are flat (ConfigMap keys), so the
// static locations that serve a file are prefixes without a slash:
// /internal serves /internal.html.
func locations(o Options) []v1beta1.Location {
	static := func(path string) v1beta1.Location {
		return v1beta1.Location{Path: path, Static: &v1beta1.StaticLocation{}}
	}
	internal, private, limited, cached, quiet := static("/internal"), static("/private"), static("/limited"), static("/cached"), static("/quiet")
	internal.IPAccess = &v1beta1.IPAccess{Deny: []string{"203.0.113.0/24"}, Allow: []string{o.ClientCIDR, "198.51.100.0/24"}}
	private.BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: UsersSecret, Realm: Realm}
	limited.RateLimit = &v1beta1.RateLimit{RequestsPerMinute: 1, Burst: 2}
	cached.Expires = "1h"
	quiet.Exact, quiet.DisableAccessLog = true, true
	return append([]v1beta1.Location{
		{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}},
		static("/files/"), internal, private, limited, cached, quiet,
		{Path: "/old/", Redirect: &v1beta1.RedirectLocation{Hostname: NewHost, Path: prefix("/new/"), Code: 301}},
		{Path: "/secure-me/", Redirect: &v1beta1.RedirectLocation{Scheme: "https"}},
		{Path: "/see-other", PathType: v1beta1.PathExact, Redirect: &v1beta1.RedirectLocation{Code: http.StatusSeeOther}},
	}, slices.Concat(proxyLocations(o), matchLocations(o), limitLocations(o), authLocations(o))...)
}

// proxyLocations of AppHost.
func proxyLocations(o Options) []v1beta1.Location {
	api := func(timeout time.Duration) *v1beta1.ProxyLocation {
		return &v1beta1.ProxyLocation{Service: API, Port: o.APIPort, ReadTimeoutSeconds: int32(timeout / time.Second)}
	}
	rewritten := api(o.LongReadTimeout)
	rewritten.URLRewrite = &v1beta1.URLRewrite{Path: prefix("/v2")}
	return []v1beta1.Location{
		{
			Path: "/api/", Proxy: rewritten,
			RequestHeaders: &v1beta1.HeaderModifier{
				Set:    []v1beta1.Header{{Name: "X-Team", Value: "a"}},
				Add:    []v1beta1.Header{{Name: "X-Via", Value: "nginx"}},
				Remove: []string{"X-Debug"},
			},
			ResponseHeaders: &v1beta1.HeaderModifier{
				Set:    []v1beta1.Header{{Name: "Cache-Control", Value: "no-store"}},
				Remove: []string{"X-Powered-By"},
			},
		},
		{Path: "/short/", Proxy: api(o.ShortReadTimeout)},
		{Path: "/ws", Proxy: api(o.LongReadTimeout)},
		{Path: "/split/", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{
			{Service: API, Port: o.APIPort, Weight: ptr.To[int32](splitWeights[API])},
			{Service: Canary, Port: o.CanaryPort, Weight: ptr.To[int32](splitWeights[Canary])},
		}}},
		{Path: "/secure/", Proxy: &v1beta1.ProxyLocation{Service: Secure, Port: o.SecurePort, TLS: &v1beta1.BackendTLS{
			Hostname: o.SecureHostname, CACertificate: &v1beta1.CACertificateRef{Kind: o.SecureCAKind, Name: SecureCA},
		}}},
	}
}

// splitWeights are the weights of /split/'s backends.
var splitWeights = map[string]int32{API: 90, Canary: 10}

func prefix(replacement string) *v1beta1.PathModifier {
	return &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To(replacement)}
}
