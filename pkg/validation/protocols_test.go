package validation_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// The protocol, client address, access control, log and Service fields
// refuse bad values at admission with a message that says what is wrong,
// on the field that holds it.
func TestProtocolFieldsRefuseBadValuesWithMessagesUsersUnderstand(t *testing.T) {
	server := func(o *v1beta1.NginxOperator) *v1beta1.Server { return &o.Spec.Config.Servers[0] }
	tlsOf := func(o *v1beta1.NginxOperator) *v1beta1.TLS {
		server(o).TLS = &v1beta1.TLS{SecretName: "web-tls"}
		return server(o).TLS
	}
	const srv = "spec.config.servers[0]"
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"TLS 1.1", func(o *v1beta1.NginxOperator) { o.Spec.Config.TLS.Protocols = []string{"TLSv1.1", "TLSv1.2"} },
			[]string{"spec.config.tls.protocols[0]", `supported values: "TLSv1.2", "TLSv1.3"`}},
		{"a cipher without forward secrecy", func(o *v1beta1.NginxOperator) { o.Spec.Config.TLS.Ciphers = []string{"AES128-SHA"} },
			[]string{"spec.config.tls.ciphers[0]", `supported values: "ECDHE-ECDSA-AES128-GCM-SHA256"`}},
		{"an OpenSSL cipher string", func(o *v1beta1.NginxOperator) { o.Spec.Config.TLS.Ciphers = []string{"HIGH:!aNULL"} },
			[]string{"spec.config.tls.ciphers[0]", "Unsupported value"}},
		{"a session cache of 0", func(o *v1beta1.NginxOperator) { o.Spec.Config.TLS.SessionCacheMiB = -1 },
			[]string{"spec.config.tls.sessionCacheMiB", "greater than or equal to 1"}},
		{"HSTS preload without subdomains", func(o *v1beta1.NginxOperator) { tlsOf(o).HSTS = &v1beta1.HSTS{Preload: true} },
			[]string{srv + ".tls.hsts", "preload needs includeSubDomains and a maxAgeSeconds of at least 31536000"}},
		{"HSTS preload for a day", func(o *v1beta1.NginxOperator) {
			tlsOf(o).HSTS = &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](86400), IncludeSubDomains: true, Preload: true}
		}, []string{srv + ".tls.hsts", "preload needs"}},
		{"HSTS for three years", func(o *v1beta1.NginxOperator) { tlsOf(o).HSTS = &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](94608000)} },
			[]string{srv + ".tls.hsts.maxAgeSeconds", "less than or equal to 63072000"}},
		{"client certificates from a Pod", func(o *v1beta1.NginxOperator) {
			tlsOf(o).ClientCertificates = &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Pod", Name: "ca"}}
		}, []string{srv + ".tls.clientCertificates.caCertificate.kind", `supported values: "ConfigMap", "Secret"`}},
		{"a client certificate chain of 20", func(o *v1beta1.NginxOperator) {
			tlsOf(o).ClientCertificates = &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "ca"}, VerifyDepth: 20}
		}, []string{srv + ".tls.clientCertificates.verifyDepth", "less than or equal to 8"}},
		{"realIP without trusted proxies", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.TrustedProxies = nil
			o.Spec.Config.RealIP = &v1beta1.RealIP{Header: "X-Forwarded-For"}
		}, []string{"spec.config", "realIP needs trustedProxies"}},
		{"realIP from both a header and the PROXY protocol", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.TrustedProxies = []string{"10.0.0.0/8"}
			o.Spec.Config.RealIP = &v1beta1.RealIP{Header: "X-Real-IP", ProxyProtocol: true}
		}, []string{"spec.config.realIP", "set header or proxyProtocol: true, not both"}},
		{"realIP from nowhere", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.TrustedProxies = []string{"10.0.0.0/8"}
			o.Spec.Config.RealIP = &v1beta1.RealIP{}
		}, []string{"spec.config.realIP", "set header or proxyProtocol"}},
		{"a real IP header with a colon", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.TrustedProxies = []string{"10.0.0.0/8"}
			o.Spec.Config.RealIP = &v1beta1.RealIP{Header: "X-Forwarded-For:"}
		}, []string{"spec.config.realIP.header", "should match"}},
		{"a gzip type with a wildcard", func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{Types: []string{"text/*"}} },
			[]string{"spec.config.gzip.types[0]", "should match"}},
		{"gzip level 11", func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{Level: 11} },
			[]string{"spec.config.gzip.level", "less than or equal to 9"}},
		{"an access log format of nginx's own", func(o *v1beta1.NginxOperator) { o.Spec.Config.AccessLog.Format = "main" },
			[]string{"spec.config.accessLog.format", `supported values: "Combined", "JSON"`}},
		{"an address to allow, not a CIDR", func(o *v1beta1.NginxOperator) { server(o).IPAccess = &v1beta1.IPAccess{Allow: []string{"192.0.2.7"}} },
			[]string{srv + ".ipAccess.allow", "every entry must be a CIDR such as 10.0.0.0/8, 192.0.2.7/32 or fd00::/8"}},
		{"deny all, nginx style", func(o *v1beta1.NginxOperator) { server(o).IPAccess = &v1beta1.IPAccess{Deny: []string{"all"}} },
			[]string{srv + ".ipAccess.deny", "must be a CIDR"}},
		{"an empty ipAccess", func(o *v1beta1.NginxOperator) { server(o).IPAccess = &v1beta1.IPAccess{} },
			[]string{srv + ".ipAccess", "set allow, deny or both"}},
		{"basic auth without a Secret", func(o *v1beta1.NginxOperator) { server(o).BasicAuth = &v1beta1.HTTPBasicAuth{Realm: "Team"} },
			[]string{srv + ".basicAuth", "secretName is required unless disabled is true"}},
		{"the realm off", func(o *v1beta1.NginxOperator) {
			server(o).BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users", Realm: "off"}
		},
			[]string{srv + ".basicAuth.realm", "nginx reads it as turning authentication off"}},
		{"a realm with a quote", func(o *v1beta1.NginxOperator) {
			server(o).BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users", Realm: `Team "A"`}
		}, []string{srv + ".basicAuth.realm", "should match"}},
		{"an htpasswd key with a path", func(o *v1beta1.NginxOperator) {
			server(o).BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "../auth"}
		}, []string{srv + ".basicAuth.key", "should match"}},
		{"a rate per second and per minute", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 10, RequestsPerMinute: 600}
		}, []string{srv + ".rateLimit", "set requestsPerSecond or requestsPerMinute"}},
		{"a rate limit without a rate", func(o *v1beta1.NginxOperator) { server(o).RateLimit = &v1beta1.RateLimit{Burst: 5} },
			[]string{srv + ".rateLimit", "set requestsPerSecond or requestsPerMinute"}},
		{"a rate limit zone of a GiB", func(o *v1beta1.NginxOperator) {
			server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 10, ZoneSizeMiB: 1024}
		}, []string{srv + ".rateLimit.zoneSizeMiB", "less than or equal to 64"}},
		{"a redirect server with basic auth", func(o *v1beta1.NginxOperator) {
			*server(o) = v1beta1.Server{Port: "http", RedirectToHTTPS: &v1beta1.HTTPSRedirect{}, BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users"}}
		}, []string{srv, "cannot be combined with tls, locations, ipAccess, basicAuth, rateLimit or connectionLimit, which would never apply"}},
		{"externalTrafficPolicy on a ClusterIP Service", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, []string{"spec.service", "externalTrafficPolicy needs type NodePort or LoadBalancer"}},
		{"source ranges on a NodePort Service", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.Type = corev1.ServiceTypeNodePort
			o.Spec.Service.LoadBalancerSourceRanges = []string{"203.0.113.0/24"}
		}, []string{"spec.service", "loadBalancerSourceRanges needs type LoadBalancer"}},
		{"a source range that is an address", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.Type = corev1.ServiceTypeLoadBalancer
			o.Spec.Service.LoadBalancerSourceRanges = []string{"203.0.113.9"}
		}, []string{"spec.service.loadBalancerSourceRanges", "every entry must be a CIDR such as 203.0.113.0/24"}},
		{"a load balancer class on a ClusterIP Service", func(o *v1beta1.NginxOperator) { o.Spec.Service.LoadBalancerClass = "example.com/lb" },
			[]string{"spec.service", "loadBalancerClass needs type LoadBalancer"}},
		{"a session affinity by cookie", func(o *v1beta1.NginxOperator) { o.Spec.Service.SessionAffinity = "Cookie" },
			[]string{"spec.service.sessionAffinity", `supported values: "None", "ClientIP"`}},
		{"IPv6 twice", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
			o.Spec.Service.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv6Protocol}
		}, []string{"spec.service.ipFamilies", "IPv4 and IPv6 may each appear once"}},
		{"two families on a single stack", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
		}, []string{"spec.service", "two ipFamilies need ipFamilyPolicy PreferDualStack or RequireDualStack"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.want...) })
	}
}

// BenchmarkNginxOperatorAdmission is what one reconcile spends checking an
// instance against the CRD: the benchmark's default instance, and one that
// uses the protocol and access fields on two servers.
func BenchmarkNginxOperatorAdmission(b *testing.B) {
	edge := valid()
	edge.Spec.Ports = append(edge.Spec.Ports, v1beta1.Port{Name: "https", ContainerPort: 8443})
	edge.Spec.Config.TrustedProxies = []string{"10.0.0.0/8"}
	edge.Spec.Config.RealIP = &v1beta1.RealIP{Header: "X-Forwarded-For"}
	edge.Spec.Config.Gzip = &v1beta1.Gzip{}
	edge.Spec.Config.AccessLog.Format = "JSON"
	srv := &edge.Spec.Config.Servers[0]
	srv.IPAccess = &v1beta1.IPAccess{Allow: []string{"10.0.0.0/8"}, Deny: []string{"10.66.0.0/16"}}
	srv.BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users"}
	srv.RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 10, Burst: 20}
	edge.Spec.Config.Servers = append(edge.Spec.Config.Servers, v1beta1.Server{Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls",
		HSTS: &v1beta1.HSTS{IncludeSubDomains: true}, ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "ca"}}}})
	for name, obj := range map[string]*v1beta1.NginxOperator{"default": {Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}}}, "edge": edge} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, errs := validation.NginxOperator(context.Background(), obj); len(errs) > 0 {
					b.Fatal(errs.ToAggregate())
				}
			}
		})
	}
}
