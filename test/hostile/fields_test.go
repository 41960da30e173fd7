package hostile

// The corpus: the base spec, the hostile strings and numbers, the fields
// they are set in, the structures that break cross-field rules, and the
// assembly of distinct cases from them.

import (
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

const baselineField = "(baseline)"

// specCase is one complete v1beta1 spec, the base spec with one field set
// to one hostile value.
type specCase struct {
	id    int
	field string // where the value goes, in the spec's JSON names
	show  string // the value, for the report
	spec  map[string]any
}

// corpusField sets one field of a spec (as JSON) to each of its values.
type corpusField struct {
	name   string
	set    func(spec map[string]any, v any)
	values []any
}

// baseSpec touches every field the corpus varies; valid on both paths.
func baseSpec() v1beta1.NginxOperatorSpec {
	tcp := corev1.ProtocolTCP
	return v1beta1.NginxOperatorSpec{
		Replicas:         ptr.To[int32](2),
		Image:            "nginx:1.27",
		ImagePullPolicy:  corev1.PullIfNotPresent,
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}},
		Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: tcp, H2C: true}, {Name: "https", ContainerPort: 8443, Protocol: tcp},
			{Name: "db", ContainerPort: 5432, Protocol: tcp}, {Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP}},
		ForceRedeploy: "2026-01-01",
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				WorkerConnections: 1024, ClientMaxBodySize: "1m", KeepaliveTimeoutSeconds: 65,
				ClientBodyBufferKiB: 16, ClientHeaderBuffers: &v1beta1.ClientHeaderBuffers{Count: 4, SizeKiB: 8},
				TrustedProxies: []string{"10.0.0.0/8"},
				RealIP:         &v1beta1.RealIP{Header: "X-Forwarded-For"},
				Gzip:           &v1beta1.Gzip{Types: []string{"text/css", "application/json"}, MinLengthBytes: 1024, Level: 5},
				AccessLog:      v1beta1.AccessLog{Format: "JSON"},
				TLS: v1beta1.TLSPolicy{Protocols: []string{"TLSv1.2", "TLSv1.3"}, Ciphers: []string{"ECDHE-RSA-AES128-GCM-SHA256"},
					SessionCacheMiB: 10, SessionTimeoutMinutes: 60},
			},
			Servers: []v1beta1.Server{
				{Port: "http", ServerNames: []string{"example.com"}, DefaultServer: true,
					IPAccess:  &v1beta1.IPAccess{Allow: []string{"10.0.0.0/8"}, Deny: []string{"10.66.0.0/16"}},
					BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth", Realm: "Team A"},
					RateLimit: &v1beta1.RateLimit{RequestsPerSecond: 10, Burst: 20, ZoneSizeMiB: 1,
						Key: &v1beta1.RequestKey{Source: "Header", Name: "X-API-Key"}, Exempt: &v1beta1.LimitExemptions{Keys: []string{"partner"}, Clients: []string{"10.1.0.0/16"}}},
					ConnectionLimit: &v1beta1.ConnectionLimit{Connections: 10, ZoneSizeMiB: 1,
						Key: &v1beta1.RequestKey{Source: "Cookie", Name: "session-id"}, Exempt: &v1beta1.LimitExemptions{Keys: []string{"ops"}, Clients: []string{"10.2.0.0/16"}}},
					ClientMaxBodySize: "2m", ClientBodyBufferKiB: 16, ClientHeaderBuffers: &v1beta1.ClientHeaderBuffers{Count: 4, SizeKiB: 16},
					ExternalAuth: &v1beta1.ExternalAuth{Service: "auth", Port: 4180, Path: "/oauth2/auth", TimeoutSeconds: 5,
						ResponseHeaders: []string{"X-Auth-Request-User"},
						SignIn:          &v1beta1.ExternalAuthSignIn{URL: "https://auth.example.com/oauth2/start?x=1", RedirectParameter: "rd"},
						Cache: &v1beta1.ExternalAuthCache{Key: []v1beta1.RequestKey{{Source: "Cookie", Name: "_oauth2-proxy"}, {Source: "Header", Name: "Authorization"}},
							DurationSeconds: 60}},
					ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/errors/404.html"}},
					Locations: []v1beta1.Location{
						{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}, Expires: "1h", Headers: []v1beta1.Header{{Name: "X-Frame-Options", Value: "DENY"}},
							DisableAccessLog: true, IPAccess: &v1beta1.IPAccess{Deny: []string{"192.0.2.0/24"}}, BasicAuth: &v1beta1.HTTPBasicAuth{Disabled: true, Key: "auth", Realm: "x"},
							RateLimit: &v1beta1.RateLimit{RequestsPerMinute: 60, ZoneSizeMiB: 2}, ConnectionLimit: &v1beta1.ConnectionLimit{Connections: 2, ZoneSizeMiB: 1},
							ClientBodyBufferKiB: 8,
							ExternalAuth: &v1beta1.ExternalAuth{Service: "auth-tls", Port: 443, TimeoutSeconds: 5,
								TLS: &v1beta1.BackendTLS{Hostname: "auth.example.com", CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "auth-ca", Key: "ca.crt"}}},
							CORS: &v1beta1.CORS{AllowOrigins: []string{"https://app.example.com"}, AllowCredentials: true, AllowMethods: []string{"GET"},
								AllowHeaders: []string{"X-A"}, ExposeHeaders: []string{"X-B"}, MaxAgeSeconds: 600}},
						{Path: "/api/", Name: "api", ClientMaxBodySize: "10m", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 8081, ReadTimeoutSeconds: 60,
							ConnectTimeoutSeconds: 5, SendTimeoutSeconds: 60,
							Buffering:       &v1beta1.ProxyBuffering{HeaderBufferKiB: 8, Buffers: 8, BufferKiB: 4},
							TLS:             &v1beta1.BackendTLS{Hostname: "api.internal", CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "api-ca", Key: "ca.crt"}},
							BackendProtocol: "HTTPS", LoadBalancingMethod: "hash consistent", HashKey: &v1beta1.HashKey{Source: "Header", Name: "X-User"},
							Retry:     &v1beta1.ProxyRetry{Conditions: []string{"error", "timeout", "http_502"}, Tries: 3, TimeoutSeconds: 10, NonIdempotent: true},
							KeepAlive: &v1beta1.UpstreamKeepAlive{Connections: ptr.To[int32](16), Requests: 1000, TimeSeconds: 3600, TimeoutSeconds: 60},
							URLRewrite: &v1beta1.URLRewrite{Hostname: "api.internal",
								Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/v2/")}}},
							RequestHeaders: &v1beta1.HeaderModifier{
								Set: []v1beta1.Header{{Name: "X-Team", Value: "a"}}, Add: []v1beta1.Header{{Name: "X-Via", Value: "edge"}}, Remove: []string{"X-Debug"},
							},
							ResponseHeaders: &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "Cache-Control", Value: "no-store"}}, Remove: []string{"X-Powered-By"}},
						},
						{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 301}},
						{Path: "/next/", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{
							{Service: "next", Port: 80, Weight: ptr.To[int32](9)}, {Service: "next-canary", Port: 80, Weight: ptr.To[int32](1)}},
							SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Name: "route", Path: "/next/", MaxAgeSeconds: ptr.To[int32](3600),
								HTTPOnly: ptr.To(true), SameSite: "Lax"}},
							Mirrors: []v1beta1.Mirror{{Service: "next-shadow", Port: 80, Percent: ptr.To[int32](10)}}}},
						{Path: "/docs/", Redirect: &v1beta1.RedirectLocation{Scheme: "https", Hostname: "docs.example.com", Port: ptr.To[int32](8443), Code: 308,
							Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/guide/")}}},
						{Path: "/grpc.health.v1.Health/", Proxy: &v1beta1.ProxyLocation{Service: "health", Port: 50051, BackendProtocol: "GRPC",
							LoadBalancingMethod: "random two least_conn"}},
						{Path: "/m/", PathType: "PathPrefix", Static: &v1beta1.StaticLocation{}, Match: &v1beta1.RequestMatch{
							Headers:     []v1beta1.HeaderMatch{{Name: "X-Team", Value: "a"}},
							QueryParams: []v1beta1.QueryParamMatch{{Name: "id", Value: "1"}},
							Method:      "GET"}},
						{Path: "/r/[0-9]+", PathType: "RegularExpression", Static: &v1beta1.StaticLocation{}, Match: &v1beta1.RequestMatch{
							Headers:     []v1beta1.HeaderMatch{{Type: "RegularExpression", Name: "X-Re", Value: "a.*"}},
							QueryParams: []v1beta1.QueryParamMatch{{Type: "RegularExpression", Name: "q", Value: "[a-z]+"}}}},
					}},
				{Port: "https", ServerNames: []string{"example.com"}, TLS: &v1beta1.TLS{SecretName: "web-tls",
					HSTS:               &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](31536000), IncludeSubDomains: true},
					ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "clients-ca", Key: "ca.crt"}, VerifyDepth: 2}},
					Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}},
				{Port: "http", ServerNames: []string{"plain.example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{Port: ptr.To[int32](8443), Code: 308}},
			},
			Streams: []v1beta1.Stream{
				{Port: "https", ServerNames: []string{"vault.example.com", "*.db.example.com"}, ProxyProtocol: true,
					Backends: []v1beta1.Backend{{Service: "vault", Port: 8200, Weight: ptr.To[int32](1)}}, ConnectTimeoutSeconds: 5, IdleTimeoutSeconds: 600},
				{Port: "db", TLS: &v1beta1.StreamTLS{SecretName: "db-tls"}, LoadBalancingMethod: "least_conn",
					Backends:              []v1beta1.Backend{{Service: "postgres", Port: 5432, Weight: ptr.To[int32](3)}, {Service: "postgres-canary", Namespace: "other-ns", Port: 5432, Weight: ptr.To[int32](1)}},
					ConnectTimeoutSeconds: 5, IdleTimeoutSeconds: 3600},
				{Port: "dns", Backends: []v1beta1.Backend{{Service: "coredns", Port: 53, Weight: ptr.To[int32](1)}}, ExpectedResponses: ptr.To[int32](1),
					LoadBalancingMethod: "hash consistent", ConnectTimeoutSeconds: 5, IdleTimeoutSeconds: 30},
			},
		},
		Content: v1beta1.Content{VolumeClaimTemplate: &v1beta1.VolumeClaimTemplate{
			Size: resource.MustParse("1Gi"), StorageClassName: ptr.To("standard"),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		}},
		Restore: &v1beta1.RestoreSpec{Backup: "nightly", ID: "20261122T030000.000000000Z-1a2b3c4d"},
		Metrics: v1beta1.MetricsSpec{Enabled: true, Requests: &v1beta1.RequestMetrics{}},
		Service: v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Annotations: map[string]string{"lb.example.com/internal": "true"},
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, LoadBalancerSourceRanges: []string{"203.0.113.0/24"},
			LoadBalancerClass: "example.com/lb", SessionAffinity: corev1.ServiceAffinityClientIP,
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		PodDisruptionBudget: &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		NetworkPolicy: &v1beta1.NetworkPolicySpec{
			From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}},
				{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "edge"}}}},
			MetricsFrom: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "prometheus"}}}},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		ChildMetadata: v1beta1.ChildMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"example.com/owner": "web"}},
		Pod: v1beta1.PodSettings{
			Labels:            map[string]string{"team": "a"},
			Annotations:       map[string]string{"example.com/owner": "web"},
			NodeSelector:      map[string]string{"kubernetes.io/os": "linux"},
			PriorityClassName: "high",
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					TopologyKey:   "kubernetes.io/hostname",
				}},
			}},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			}},
		},
	}
}

// Strings that are syntax to nginx, to the shell or to a terminal, or that
// stretch a parser: for every string field that reaches nginx.conf.
func fullStrings() []string {
	return []string{
		"", " ", "\t", "a b", " leading", "trailing ",
		";", "a;b", "x;include /etc/passwd;", "include /etc/passwd;", "listen 80", "listen 80;",
		"} server { listen 80; } #", "{", "}", "a{b}", "#", "a#b", "# comment",
		`"`, `'`, `a"b`, `a';`, `\`, `a\`, `\"; deny all; #`, `a\nb`,
		"$http_cookie", "$http_authorization", "$host", "${host}x", "$1",
		"a\nb", "a\r\nlisten 80;", "\r", "a\x00b", "\x00", "\x01", "\x1b[31m", "\x7f",
		"~^/(?<x>.*)$", "~* \\.php$", "@internal", "= /x", "^~ /x",
		strings.Repeat("a", 300), strings.Repeat("a", 5000), strings.Repeat(`";{}`, 1200),
		"ünïcødé", "日本語", "\u202egnp.exe", "a\u00a0b", "\ufeffa", "e\u0301",
	}
}

// A shorter list for the string fields that never reach nginx.conf.
func shortStrings() []string {
	return []string{
		"", " ", ";", "a;b", "}", "#", `"`, `\`, "$host", "a\nb", "a\x00b", "\x7f",
		"include /etc/passwd;", "ünï", strings.Repeat("a", 300), strings.Repeat("a", 5000),
	}
}

var numbers = []int64{
	-2147483648, -1, 0, 1, 15, 1023, 1024, 9113, 18080, 18081, 65535, 65536,
	2147483647, 2147483648, 9223372036854775807,
}

func anyOf[T any](lists ...[]T) []any {
	var out []any
	for _, l := range lists {
		for _, v := range l {
			out = append(out, v)
		}
	}
	return out
}

// setAt is a setter of the value at path (map keys and list indexes).
// issuerRef sets field of servers[1]'s tls.issuerRef to the value, with a
// valid name, which the field needs.
func issuerRef(field string) func(spec map[string]any, v any) {
	return func(spec map[string]any, v any) {
		hostiletest.SetAt("config", "servers", 1, "tls", "issuerRef", "name")(spec, "letsencrypt")
		hostiletest.SetAt("config", "servers", 1, "tls", "issuerRef", field)(spec, v)
	}
}

// antiAffinity is the path of a field of the base spec's required pod
// anti-affinity term.
func antiAffinity(field ...any) []any {
	return append([]any{"pod", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", 0}, field...)
}

// setKey sets a map at path to {v: "x"}: the hostile value is a key.
func setKey(path ...any) func(spec map[string]any, v any) {
	return func(spec map[string]any, v any) { hostiletest.SetAt(path...)(spec, map[string]any{v.(string): "x"}) }
}

func getAt(spec map[string]any, path ...any) any {
	var cur any = spec
	for _, p := range path {
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur
}

func corpusFields() []corpusField {
	srv0 := []any{"config", "servers", 0}
	loc := func(j int, rest ...any) []any {
		return append(append(append([]any{}, srv0...), "locations", j), rest...)
	}
	full := fullStrings()
	short := shortStrings()
	str := func(extra ...string) []any { return anyOf(full, extra) }
	shortStr := func(extra ...string) []any { return anyOf(short, extra) }
	nums := func(extra ...int64) []any { return anyOf(numbers, extra) }
	slashed := []string{"/a b", "/a;b", "/a{b}", "/a#b", "/$host", "/a\nb", "/a\x00b", "/../etc/passwd", "/%00", "//", "/", "/" + strings.Repeat("a", 600), "x", "*"}
	urls := []string{
		"https://example.com/$http_cookie", "https://example.com/a b", "https://example.com/a;b",
		`https://example.com/";return 200 x;#`, "javascript:alert(1)", "//evil.example", "http://x/\r\nSet-Cookie: a=b",
		"https://例え.jp/", "ftp://example.com/", "https://example.com/" + strings.Repeat("a", 3000),
	}
	sizes := []string{"1t", "-1", "0", "999999999g", "1T", "1 m", "1mm", "0x10", "1e3", "9999999999", "1k;", "1.5m", "1G", "10M"}
	serverNames := []string{"*", "_", "*.x.com", "a..b", ".x.com", "x.*", "*.*.x.com", "EXAMPLE.com", "bücher.de",
		`~^(?<x>.+)\.example\.com$`, "example.com:80", "localhost", strings.Repeat("a", 254)}

	// Regular expressions that are not one, close the group they are put
	// in, or are PCRE's alone (comments, verbs, \Z).
	regexes := []string{"(", ")", "a)|(b", ".*)\\z|^(?:/x", "[", "a{1,", "(?#c)", "(*LIMIT_MATCH=1)a", "\\Z", "\\", "\\E", "(?i)/A", ".*", "\\x{110000}"}
	return []corpusField{
		{"config.servers[].locations[].pathType (with a regular expression path)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(6, "pathType")...)(spec, v)
			hostiletest.SetAt(loc(6, "path")...)(spec, "/m/(a|b)")
		}, shortStr("RegularExpression", "Exact", "Regex", "exact", "PathPrefix")},
		{"config.servers[].locations[].path (RegularExpression)", hostiletest.SetAt(loc(7, "path")...), str(append(regexes, slashed...)...)},
		{"config.servers[].locations[].match.headers[].name", hostiletest.SetAt(loc(6, "match", "headers", 0, "name")...), str("X_Team", "X.Team", "x-team", "Host")},
		{"config.servers[].locations[].match.headers[].value", hostiletest.SetAt(loc(6, "match", "headers", 0, "value")...), str(regexes...)},
		{"config.servers[].locations[].match.headers[].value (RegularExpression)", hostiletest.SetAt(loc(7, "match", "headers", 0, "value")...), str(regexes...)},
		{"config.servers[].locations[].match.queryParams[].name", hostiletest.SetAt(loc(6, "match", "queryParams", 0, "name")...), str("ID", "a=b", "a&b", "id[]")},
		{"config.servers[].locations[].match.queryParams[].value", hostiletest.SetAt(loc(6, "match", "queryParams", 0, "value")...), str(regexes...)},
		{"config.servers[].locations[].match.queryParams[].value (RegularExpression)", hostiletest.SetAt(loc(7, "match", "queryParams", 0, "value")...), str(regexes...)},
		{"config.servers[].locations[].respond.body", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(0)...)(spec, map[string]any{"path": "/", "respond": map[string]any{"status": int64(503), "body": v}})
		}, str("a\nb", "$host", "https://example.com/")},
		{"config.servers[].locations[].respond.status", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(0)...)(spec, map[string]any{"path": "/", "respond": map[string]any{"status": v, "body": "x"}})
		}, nums(301, 444, 499, 599, 600)},
		{"metrics.requests.disabled", hostiletest.SetAt("metrics", "requests", "disabled"), anyOf([]any{true, false, "yes", int64(1)})},
		{"config.servers[].locations[].match.method", hostiletest.SetAt(loc(6, "match", "method")...), shortStr("get", "PURGE", "GET ", "POST")},
		{"image", hostiletest.SetAt("image"), str("-nginx", "nginx:1.27 --foo", "nginx:1.27@sha256:abc", "evil.example.com/nginx:latest")},
		{"imagePullPolicy", hostiletest.SetAt("imagePullPolicy"), shortStr("Always", "Sometimes", "always")},
		{"imagePullSecrets[].name", hostiletest.SetAt("imagePullSecrets", 0, "name"), shortStr("../x", "Regcred")},
		{"ports[].name (and servers[].port)", func(spec map[string]any, v any) {
			hostiletest.SetAt("ports", 0, "name")(spec, v)
			hostiletest.SetAt(append(srv0, "port")...)(spec, v)
		}, shortStr("metrics", "HTTP", "a-", "abcdefghijklmnop")},
		{"ports[0].containerPort (v1alpha1 port)", hostiletest.SetAt("ports", 0, "containerPort"), nums(8443)},
		{"ports[1].containerPort", hostiletest.SetAt("ports", 1, "containerPort"), nums(8080)},
		{"ports[].protocol", hostiletest.SetAt("ports", 0, "protocol"), shortStr("UDP", "SCTP", "tcp")},
		{"ports[].servicePort", hostiletest.SetAt("ports", 0, "servicePort"), nums(80, 443, 8443, 9113, 18082)},
		{"ports[].nodePort", hostiletest.SetAt("ports", 0, "nodePort"), nums(30080, 32767, 80)},
		{"replicas (v1alpha1 replicas)", hostiletest.SetAt("replicas"), nums(1000, 1001)},
		{"forceRedeploy (v1alpha1 forceRedeploy)", hostiletest.SetAt("forceRedeploy"), str(strings.Repeat("a", 253), strings.Repeat("a", 254))},
		{"config.workerConnections", hostiletest.SetAt("config", "workerConnections"), nums(16)},
		{"config.clientMaxBodySize", hostiletest.SetAt("config", "clientMaxBodySize"), str(sizes...)},
		{"config.keepaliveTimeoutSeconds", hostiletest.SetAt("config", "keepaliveTimeoutSeconds"), nums(3600, 3601)},
		{"config.servers[].port", hostiletest.SetAt(append(srv0, "port")...), shortStr("https", "nope", "HTTP")},
		{"config.servers[].serverNames[]", hostiletest.SetAt(append(srv0, "serverNames", 0)...), str(serverNames...)},
		{"config.servers[].defaultServer (on servers[1], same port)", func(spec map[string]any, v any) {
			hostiletest.SetAt("config", "servers", 1, "defaultServer")(spec, true)
			hostiletest.SetAt("config", "servers", 1, "port")(spec, v)
		}, anyOf([]string{"http", "https"})},
		{"config.servers[].tls.secretName", hostiletest.SetAt("config", "servers", 1, "tls", "secretName"), str("../../etc", ".", "..", "a/b", "web-tls/../x")},
		{"config.servers[].locations[].path", hostiletest.SetAt(loc(0, "path")...), str(slashed...)},
		{"config.servers[].locations[].name", hostiletest.SetAt(loc(1, "name")...), str("checkout", "httproute/team-a/shop", "a$b", "$request_uri", "-", "a/", strings.Repeat("a", 330), strings.Repeat("a", 331))},
		{"config.servers[].locations[].exact (with path)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(1, "exact")...)(spec, true)
			hostiletest.SetAt(loc(1, "path")...)(spec, v)
		}, anyOf([]string{"/x", "= /x", "~^/x", "@internal", "", "/a b", "/old"})},
		{"config.servers[].locations[].static (with path)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(0, "static", "autoindex")...)(spec, true)
			hostiletest.SetAt(loc(0, "path")...)(spec, v)
		}, anyOf([]string{"/files/", "~ /", "@static"})},
		{"config.servers[].locations[].proxy.service", hostiletest.SetAt(loc(1, "proxy", "service")...), str("api.other-ns", "api:8080", "127.0.0.1", "API")},
		{"config.servers[].locations[].proxy.port", hostiletest.SetAt(loc(1, "proxy", "port")...), nums(80)},
		{"config.servers[].locations[].proxy.readTimeoutSeconds", hostiletest.SetAt(loc(1, "proxy", "readTimeoutSeconds")...), nums(3600, 3601)},
		{"config.servers[].locations[].proxy.timeouts.request", hostiletest.SetAt(loc(1, "proxy", "timeouts", "request")...),
			str("0s", "500ms", "1h2m3s4ms", "1.5s", "-1s", "1d", "500", "99999h", "1s;", "1s proxy_pass", "1s\nx", "$request_time", "1h1h1h1h1h")},
		{"config.servers[].locations[].proxy.timeouts.backendRequest (request 1s)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(1, "proxy", "timeouts", "request")...)(spec, "1s")
			hostiletest.SetAt(loc(1, "proxy", "timeouts", "backendRequest")...)(spec, v)
		}, anyOf([]string{"0s", "999ms", "1s", "1001ms", "2s", "1m", "10us", "1s ", " 1s"})},
		{"config.servers[].locations[].proxy.mirrors[].service", hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "service")...), str("next.other-ns", "next:80", "NEXT")},
		{"config.servers[].locations[].proxy.mirrors[].namespace", hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "namespace")...), shortStr("kube-system", "Other", "a.b", "../x")},
		{"config.servers[].locations[].proxy.mirrors[].port", hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "port")...), nums(80)},
		{"config.servers[].locations[].proxy.mirrors[].percent", hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "percent")...), nums(33, 99, 100, 101)},
		{"config.servers[].locations[].proxy.mirrors[].fraction", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "percent")...)(spec, nil)
			hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "fraction")...)(spec, v)
		}, anyOf([]map[string]any{
			{"numerator": int64(1), "denominator": int64(3)}, {"numerator": int64(1), "denominator": int64(1000000)},
			{"numerator": int64(2147483647), "denominator": int64(2147483647)}, {"numerator": int64(3), "denominator": int64(2)},
			{"numerator": int64(-1)}, {"numerator": int64(1), "denominator": int64(0)}, {"numerator": int64(0), "denominator": int64(1)},
			{"numerator": int64(5)}, {"denominator": int64(10)},
		})},
		{"config.servers[].locations[].proxy.mirrors (with percent and fraction)", hostiletest.SetAt(loc(3, "proxy", "mirrors", 0, "fraction")...),
			anyOf([]map[string]any{{"numerator": int64(1)}})},
		{"config.servers[].locations[].cors.allowOrigins[]", hostiletest.SetAt(loc(0, "cors", "allowOrigins", 0)...),
			str("*", "https://*.example.com", "https://*", "http://a:8080", "https://a.example.com/", "https://a.example.com/x", "ftp://a", "https://*.*.a", "https://a*.b",
				"https://a.example.com:99999", "null", "https://user@a", "https://[::1]", "~^https://", "https://a$b")},
		{"config.servers[].locations[].cors.allowOrigins (with '*')", hostiletest.SetAt(loc(0, "cors", "allowOrigins")...),
			anyOf([][]any{{"*", "https://a.test"}, {"*"}, {}, {"https://a.test", "https://a.test"}})},
		{"config.servers[].locations[].cors.allowMethods[]", hostiletest.SetAt(loc(0, "cors", "allowMethods", 0)...), shortStr("*", "get", "PURGE", "GET, POST", "GET;")},
		{"config.servers[].locations[].cors.allowHeaders[]", hostiletest.SetAt(loc(0, "cors", "allowHeaders", 0)...), str("*", "X-A, X-B", "X_A", "x.a", "a$b", "`x`")},
		{"config.servers[].locations[].cors.exposeHeaders[]", hostiletest.SetAt(loc(0, "cors", "exposeHeaders", 0)...), str("*", "X-A, X-B", "Set-Cookie", "a$b")},
		{"config.servers[].locations[].cors.exposeHeaders (without credentials)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(0, "cors", "allowCredentials")...)(spec, false)
			hostiletest.SetAt(loc(0, "cors", "exposeHeaders", 0)...)(spec, v)
		}, shortStr("*")},
		{"config.servers[].locations[].cors.maxAgeSeconds", hostiletest.SetAt(loc(0, "cors", "maxAgeSeconds")...), nums(86400, 86401)},
		{"config.servers[].locations[].redirect.url", hostiletest.SetAt(loc(2, "redirect", "url")...), str(urls...)},
		{"config.servers[].locations[].redirect.code", hostiletest.SetAt(loc(2, "redirect", "code")...), nums(200, 301, 302, 303, 304, 307, 308, 399, 444, 999, 1000)},
		{"config.servers[].locations[].headers[].name", hostiletest.SetAt(loc(0, "headers", 0, "name")...), str("X-A B", "X-A:B", "Set-Cookie", strings.Repeat("X", 129))},
		{"config.servers[].locations[].headers[].value", hostiletest.SetAt(loc(0, "headers", 0, "value")...), str("a$b", "v\r\nX-Injected: 1", "x always", `"always`, strings.Repeat("v", 1025))},
		{"config.trustedProxies[]", hostiletest.SetAt("config", "trustedProxies", 0), str("10.0.0.1", "10.0.0.0/33", "::/0", "0.0.0.0/0", "fd00::/8", "10.0.0.0/8 1", "10.0.0.0/8;", "default")},
		{"config.servers[].redirectToHTTPS.port", hostiletest.SetAt("config", "servers", 2, "redirectToHTTPS", "port"), nums(443)},
		{"config.servers[].redirectToHTTPS.code", hostiletest.SetAt("config", "servers", 2, "redirectToHTTPS", "code"), nums(301, 200, 404)},
		{"config.servers[].errorPages[].path", hostiletest.SetAt(append(srv0, "errorPages", 0, "path")...), str(slashed...)},
		{"config.servers[].errorPages[].codes[]", hostiletest.SetAt(append(srv0, "errorPages", 0, "codes", 0)...), nums(400, 499, 599, 600, 200)},
		{"config.servers[].locations[].static.fallback", hostiletest.SetAt(loc(0, "static", "fallback")...), str(slashed...)},
		{"config.servers[].locations[].expires", hostiletest.SetAt(loc(0, "expires")...), str("max", "epoch", "off", "-1", "1x", "1h 2m", "@15h", "modified 1h", "99999999y")},
		{"config.servers[].locations[].clientMaxBodySize", hostiletest.SetAt(loc(1, "clientMaxBodySize")...), str(sizes...)},
		{"config.servers[].locations[].proxy.connectTimeoutSeconds", hostiletest.SetAt(loc(1, "proxy", "connectTimeoutSeconds")...), nums(75, 76)},
		{"config.servers[].locations[].proxy.sendTimeoutSeconds", hostiletest.SetAt(loc(1, "proxy", "sendTimeoutSeconds")...), nums(3600, 3601)},
		{"config.servers[].locations[].proxy.buffering.headerBufferKiB", hostiletest.SetAt(loc(1, "proxy", "buffering", "headerBufferKiB")...), nums(28, 29, 1024, 1025)},
		{"config.servers[].locations[].proxy.buffering.buffers", hostiletest.SetAt(loc(1, "proxy", "buffering", "buffers")...), nums(2, 3, 256, 257)},
		{"config.servers[].locations[].proxy.tls.hostname", hostiletest.SetAt(loc(1, "proxy", "tls", "hostname")...), str(serverNames...)},
		{"config.servers[].locations[].proxy.tls.caCertificate.name", hostiletest.SetAt(loc(1, "proxy", "tls", "caCertificate", "name")...), str("../../etc", ".", "..", "a/b")},
		{"config.servers[].locations[].proxy.tls.caCertificate.key", hostiletest.SetAt(loc(1, "proxy", "tls", "caCertificate", "key")...), str("..", ".", "../ca.crt", "a/b", "tls.crt")},
		{"config.servers[].locations[].proxy.tls.caCertificate.kind", hostiletest.SetAt(loc(1, "proxy", "tls", "caCertificate", "kind")...), shortStr("Secret", "secret", "Pod")},
		{"config.servers[].locations[].proxy.urlRewrite.hostname", hostiletest.SetAt(loc(1, "proxy", "urlRewrite", "hostname")...), str(serverNames...)},
		{"config.servers[].locations[].proxy.urlRewrite.path.replacePrefixMatch", hostiletest.SetAt(loc(1, "proxy", "urlRewrite", "path", "replacePrefixMatch")...), str(slashed...)},
		{"config.servers[].locations[].proxy.urlRewrite.path (full)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(1, "proxy", "urlRewrite", "path")...)(spec, map[string]any{"type": "ReplaceFullPath", "replaceFullPath": v})
		}, str(slashed...)},
		{"config.servers[].locations[].proxy.backends[].service", hostiletest.SetAt(loc(3, "proxy", "backends", 0, "service")...), str("next-canary", "API", "api.other-ns")},
		{"config.servers[].locations[].proxy.backends[].namespace", hostiletest.SetAt(loc(3, "proxy", "backends", 0, "namespace")...), str("other-ns", "kube-system", "Other", "a.b", "../x", "a;b", "-x", strings.Repeat("n", 64))},
		{"config.servers[].locations[].proxy.backends[].weight", hostiletest.SetAt(loc(3, "proxy", "backends", 0, "weight")...), nums(1000, 1001)},
		{"config.servers[].locations[].requestHeaders.set[].name", hostiletest.SetAt(loc(1, "requestHeaders", "set", 0, "name")...), str("Host", "x-via", "Connection", "X-A B", strings.Repeat("X", 129))},
		{"config.servers[].locations[].requestHeaders.set[].value", hostiletest.SetAt(loc(1, "requestHeaders", "set", 0, "value")...), str("a$b", "v\r\nX-Injected: 1", strings.Repeat("v", 1025))},
		{"config.servers[].locations[].requestHeaders.add[].name", hostiletest.SetAt(loc(1, "requestHeaders", "add", 0, "name")...), str("X_Via", "X.Via", "x-team", "Upgrade")},
		{"config.servers[].locations[].requestHeaders.add[].value", hostiletest.SetAt(loc(1, "requestHeaders", "add", 0, "value")...), str("a$b", "x\",y")},
		{"config.servers[].locations[].requestHeaders.remove[]", hostiletest.SetAt(loc(1, "requestHeaders", "remove", 0)...), str("Host", "X-Team", "content-length")},
		{"config.servers[].locations[].responseHeaders.set[].value", hostiletest.SetAt(loc(1, "responseHeaders", "set", 0, "value")...), str("a$b", "x always")},
		{"config.servers[].locations[].responseHeaders.remove[]", hostiletest.SetAt(loc(1, "responseHeaders", "remove", 0)...), str("Cache-Control", "Transfer-Encoding")},
		{"config.servers[].locations[].redirect.scheme", hostiletest.SetAt(loc(4, "redirect", "scheme")...), shortStr("http", "HTTPS", "ftp", "javascript")},
		{"config.servers[].locations[].redirect.hostname", hostiletest.SetAt(loc(4, "redirect", "hostname")...), str(serverNames...)},
		{"config.servers[].locations[].redirect.port", hostiletest.SetAt(loc(4, "redirect", "port")...), nums(443, 80)},
		{"config.servers[].locations[].redirect.path.replacePrefixMatch", hostiletest.SetAt(loc(4, "redirect", "path", "replacePrefixMatch")...), str(slashed...)},
		{"config.servers[].locations[].redirect.path (full)", func(spec map[string]any, v any) {
			hostiletest.SetAt(loc(4, "redirect", "path")...)(spec, map[string]any{"type": "ReplaceFullPath", "replaceFullPath": v})
		}, str(slashed...)},
		{"config.servers[].locations[].proxy.loadBalancingMethod", hostiletest.SetAt(loc(1, "proxy", "loadBalancingMethod")...),
			shortStr("hash", "least_conn", "least_time header", "hash consistent; include /etc/passwd", "sticky")},
		{"config.servers[].locations[].proxy.hashKey.name", hostiletest.SetAt(loc(1, "proxy", "hashKey", "name")...), str("X_User", "X-User-ID", "a.b", strings.Repeat("X", 129))},
		{"config.servers[].locations[].proxy.hashKey.source", hostiletest.SetAt(loc(1, "proxy", "hashKey", "source")...), shortStr("Cookie", "QueryParameter", "RequestURI", "ClientIP", "Variable")},
		{"config.servers[].locations[].proxy.backendProtocol", hostiletest.SetAt(loc(1, "proxy", "backendProtocol")...), shortStr("GRPCS", "HTTP", "GRPC", "grpc", "FCGI")},
		{"config.servers[].locations[].proxy.retry.conditions[]", hostiletest.SetAt(loc(1, "proxy", "retry", "conditions", 0)...), shortStr("http_429", "non_idempotent", "off", "updating", "http_501")},
		{"config.servers[].locations[].proxy.retry.tries", hostiletest.SetAt(loc(1, "proxy", "retry", "tries")...), nums(100, 101)},
		{"config.servers[].locations[].proxy.retry.timeoutSeconds", hostiletest.SetAt(loc(1, "proxy", "retry", "timeoutSeconds")...), nums(3600, 3601)},
		{"config.servers[].locations[].proxy.keepAlive.connections", hostiletest.SetAt(loc(1, "proxy", "keepAlive", "connections")...), nums(65535, 65536)},
		{"config.servers[].locations[].proxy.keepAlive.requests", hostiletest.SetAt(loc(1, "proxy", "keepAlive", "requests")...), nums(1000000, 1000001)},
		{"config.servers[].locations[].proxy.keepAlive.timeSeconds", hostiletest.SetAt(loc(1, "proxy", "keepAlive", "timeSeconds")...), nums(86400, 86401)},
		{"config.servers[].locations[].proxy.keepAlive.timeoutSeconds", hostiletest.SetAt(loc(1, "proxy", "keepAlive", "timeoutSeconds")...), nums(3600, 3601)},
		{"config.servers[].locations[].proxy.sessionAffinity.cookie.name", hostiletest.SetAt(loc(3, "proxy", "sessionAffinity", "cookie", "name")...), str("my-route", "Route_1", strings.Repeat("r", 65))},
		{"config.servers[].locations[].proxy.sessionAffinity.cookie.path", hostiletest.SetAt(loc(3, "proxy", "sessionAffinity", "cookie", "path")...), str(slashed...)},
		{"config.servers[].locations[].proxy.sessionAffinity.cookie.sameSite", hostiletest.SetAt(loc(3, "proxy", "sessionAffinity", "cookie", "sameSite")...), shortStr("None", "Strict", "lax")},
		{"config.servers[].locations[].proxy.sessionAffinity.cookie.maxAgeSeconds", hostiletest.SetAt(loc(3, "proxy", "sessionAffinity", "cookie", "maxAgeSeconds")...), nums(31536000, 31536001)},
		{"ports[].h2c", hostiletest.SetAt("ports", 1, "h2c"), anyOf([]any{true, false, "true", int64(1)})},
		{"ports[].protocol", hostiletest.SetAt("ports", 2, "protocol"), shortStr("UDP", "TCP", "SCTP", "tcp", "udp")},
		{"config.streams[].port", hostiletest.SetAt("config", "streams", 1, "port"), str("http", "https", "dns", "metrics", "DB", "db ")},
		{"config.streams[].serverNames[]", hostiletest.SetAt("config", "streams", 0, "serverNames", 0), str(append(serverNames, "www.example.com", "example.com", "default", "include", "hostnames", "volatile", "\\default")...)},
		{"config.streams[].tls.secretName", hostiletest.SetAt("config", "streams", 1, "tls", "secretName"), str("../../etc", ".", "..", "a/b", "web-tls")},
		{"config.streams[].backends[].service", hostiletest.SetAt("config", "streams", 1, "backends", 0, "service"), str("postgres-canary", "API", "api.other-ns")},
		{"config.streams[].backends[].namespace", hostiletest.SetAt("config", "streams", 1, "backends", 1, "namespace"), str("kube-system", "Other", "a.b", "../x")},
		{"config.streams[].backends[].port", hostiletest.SetAt("config", "streams", 2, "backends", 0, "port"), nums(53, 5353)},
		{"config.streams[].backends[].weight", hostiletest.SetAt("config", "streams", 1, "backends", 0, "weight"), nums(1000, 1001)},
		{"config.streams[].loadBalancingMethod", hostiletest.SetAt("config", "streams", 1, "loadBalancingMethod"),
			shortStr("hash", "ip_hash", "least_time connect", "random two least_conn", "hash consistent; include /etc/passwd")},
		{"config.streams[].proxyProtocol", hostiletest.SetAt("config", "streams", 1, "proxyProtocol"), anyOf([]any{true, false, "true", int64(1)})},
		{"config.streams[].connectTimeoutSeconds", hostiletest.SetAt("config", "streams", 1, "connectTimeoutSeconds"), nums(75, 76)},
		{"config.streams[].idleTimeoutSeconds", hostiletest.SetAt("config", "streams", 1, "idleTimeoutSeconds"), nums(86400, 86401)},
		{"config.streams[].expectedResponses", hostiletest.SetAt("config", "streams", 2, "expectedResponses"), nums(1000, 1001)},
		{"config.servers[].locations[].proxy.useClusterIP", hostiletest.SetAt(loc(1, "proxy", "useClusterIP")...), anyOf([]any{true, false, "true", int64(1)})},
		{"config.realIP.header", hostiletest.SetAt("config", "realIP", "header"), str("X-Forwarded-For", "proxy_protocol", "X Real IP", "X-Real-IP:", strings.Repeat("X", 65))},
		{"config.realIP (PROXY protocol and a header)", func(spec map[string]any, v any) {
			hostiletest.SetAt("config", "realIP")(spec, map[string]any{"proxyProtocol": true, "header": v})
		}, shortStr("X-Real-IP")},
		{"config.gzip.types[]", hostiletest.SetAt("config", "gzip", "types", 0), str("text/*", "*", "text/html", "image/svg+xml", "a/b c", "TEXT/CSS")},
		{"config.gzip.level", hostiletest.SetAt("config", "gzip", "level"), nums(9, 10)},
		{"config.gzip.minLengthBytes", hostiletest.SetAt("config", "gzip", "minLengthBytes"), nums(10485760, 10485761)},
		{"config.accessLog.format", hostiletest.SetAt("config", "accessLog", "format"), shortStr("JSON", "Combined", "json", "main", "combined")},
		{"config.tls.protocols[]", hostiletest.SetAt("config", "tls", "protocols", 0), shortStr("TLSv1.1", "SSLv3", "TLSv1", "TLSv1.3", "tlsv1.2")},
		{"config.tls.ciphers[]", hostiletest.SetAt("config", "tls", "ciphers", 0), str("HIGH:!aNULL", "ALL", "AES128-SHA", "NULL-SHA", "ECDHE-RSA-AES128-GCM-SHA256:ALL")},
		{"config.tls.sessionCacheMiB", hostiletest.SetAt("config", "tls", "sessionCacheMiB"), nums(512, 513)},
		{"config.tls.sessionTimeoutMinutes", hostiletest.SetAt("config", "tls", "sessionTimeoutMinutes"), nums(1440, 1441)},
		{"config.servers[].tls.hsts.maxAgeSeconds", hostiletest.SetAt("config", "servers", 1, "tls", "hsts", "maxAgeSeconds"), nums(63072000, 63072001)},
		{"config.servers[].tls.issuerRef.name", hostiletest.SetAt("config", "servers", 1, "tls", "issuerRef", "name"), str("letsencrypt", "Letsencrypt", "a..b")},
		{"config.servers[].tls.issuerRef.kind", issuerRef("kind"), shortStr("ClusterIssuer", "issuer", "Issuer ", "AWSPCAIssuer")},
		{"config.servers[].tls.issuerRef.group", issuerRef("group"), shortStr("cert-manager.io", "awspca.cert-manager.io", "Cert-Manager.io")},
		{"config.servers[].tls.issuerRef.duration", issuerRef("duration"), shortStr("2160h", "1h", "59m59s", "1h30m", "1d", "-1h", "90 days", "9999999h")},
		{"config.servers[].tls.issuerRef.renewBefore", issuerRef("renewBefore"), shortStr("720h", "5m", "4m59s", "2160h", "2159h", "1ms")},
		{"config.servers[].tls.clientCertificates.caCertificate.name", hostiletest.SetAt("config", "servers", 1, "tls", "clientCertificates", "caCertificate", "name"), str("../../etc", ".", "..", "a/b")},
		{"config.servers[].tls.clientCertificates.caCertificate.key", hostiletest.SetAt("config", "servers", 1, "tls", "clientCertificates", "caCertificate", "key"), str("..", ".", "../ca.crt", "a/b")},
		{"config.servers[].tls.clientCertificates.verifyDepth", hostiletest.SetAt("config", "servers", 1, "tls", "clientCertificates", "verifyDepth"), nums(8, 9)},
		{"config.servers[].ipAccess.allow[]", hostiletest.SetAt(append(srv0, "ipAccess", "allow", 0)...), str("all", "unix:", "10.0.0.1", "0.0.0.0/0", "::/0", "10.0.0.0/8 1")},
		{"config.servers[].ipAccess.deny[]", hostiletest.SetAt(append(srv0, "ipAccess", "deny", 0)...), str("all", "unix:", "10.0.0.1", "::/0")},
		{"config.servers[].basicAuth.secretName", hostiletest.SetAt(append(srv0, "basicAuth", "secretName")...), str("../../etc", ".", "..", "a/b", "Users")},
		{"config.servers[].basicAuth.key", hostiletest.SetAt(append(srv0, "basicAuth", "key")...), str("..", ".", "../auth", "a/b", ".htpasswd")},
		{"config.servers[].basicAuth.realm", hostiletest.SetAt(append(srv0, "basicAuth", "realm")...), str("off", "Off", "OFF", `Team "A"`, "Team A")},
		{"config.servers[].rateLimit.requestsPerSecond", hostiletest.SetAt(append(srv0, "rateLimit", "requestsPerSecond")...), nums(100000, 100001)},
		{"config.servers[].rateLimit.burst", hostiletest.SetAt(append(srv0, "rateLimit", "burst")...), nums(100000, 100001)},
		{"config.servers[].rateLimit.zoneSizeMiB", hostiletest.SetAt(append(srv0, "rateLimit", "zoneSizeMiB")...), nums(64, 65)},
		{"config.servers[].locations[].ipAccess.deny[]", hostiletest.SetAt(loc(0, "ipAccess", "deny", 0)...), str("all", "10.0.0.1")},
		{"config.servers[].locations[].basicAuth.realm", hostiletest.SetAt(loc(0, "basicAuth", "realm")...), str("off")},
		{"config.servers[].locations[].rateLimit.requestsPerMinute", hostiletest.SetAt(loc(0, "rateLimit", "requestsPerMinute")...), nums(100000, 100001)},
		{"config.clientBodyBufferKiB", hostiletest.SetAt("config", "clientBodyBufferKiB"), nums(65536, 65537)},
		{"config.clientHeaderBuffers.count", hostiletest.SetAt("config", "clientHeaderBuffers", "count"), nums(2, 64, 65)},
		{"config.clientHeaderBuffers.sizeKiB", hostiletest.SetAt("config", "clientHeaderBuffers", "sizeKiB"), nums(1024, 1025)},
		{"config.servers[].clientMaxBodySize", hostiletest.SetAt(append(srv0, "clientMaxBodySize")...), shortStr(sizes...)},
		{"config.servers[].clientBodyBufferKiB", hostiletest.SetAt(append(srv0, "clientBodyBufferKiB")...), nums(65536, 65537)},
		{"config.servers[].clientHeaderBuffers.sizeKiB", hostiletest.SetAt(append(srv0, "clientHeaderBuffers", "sizeKiB")...), nums(1024, 1025)},
		{"config.servers[].rateLimit.key.source", hostiletest.SetAt(append(srv0, "rateLimit", "key", "source")...), shortStr("ClientIP", "Cookie", "QueryParameter", "header")},
		{"config.servers[].rateLimit.key.name", hostiletest.SetAt(append(srv0, "rateLimit", "key", "name")...), str("X_API_Key", "X-API-Key", "a$b", "-", "http_x")},
		{"config.servers[].rateLimit.exempt.keys[]", hostiletest.SetAt(append(srv0, "rateLimit", "exempt", "keys", 0)...),
			str("~.*", "~*x", "default", "hostnames", "include", "volatile", `\default`, "$binary_remote_addr", "a b", "a;b", strings.Repeat("k", 257))},
		{"config.servers[].rateLimit.exempt.clients[]", hostiletest.SetAt(append(srv0, "rateLimit", "exempt", "clients", 0)...), str("all", "default", "10.0.0.1", "::/0", "10.0.0.0/8 1")},
		{"config.servers[].connectionLimit.connections", hostiletest.SetAt(append(srv0, "connectionLimit", "connections")...), nums(65535, 65536)},
		{"config.servers[].connectionLimit.zoneSizeMiB", hostiletest.SetAt(append(srv0, "connectionLimit", "zoneSizeMiB")...), nums(64, 65)},
		{"config.servers[].connectionLimit.key.source", hostiletest.SetAt(append(srv0, "connectionLimit", "key", "source")...), shortStr("ClientIP", "Header", "RequestURI")},
		{"config.servers[].connectionLimit.key.name", hostiletest.SetAt(append(srv0, "connectionLimit", "key", "name")...), str("session_id", "a-b-c", "$cookie_x", "a b")},
		{"config.servers[].connectionLimit.exempt.keys[]", hostiletest.SetAt(append(srv0, "connectionLimit", "exempt", "keys", 0)...), str("~^", "default", "$1")},
		{"config.servers[].connectionLimit.exempt.clients[]", hostiletest.SetAt(append(srv0, "connectionLimit", "exempt", "clients", 0)...), str("all", "10.0.0.1", "fd00::/8")},
		{"config.servers[].externalAuth.service", hostiletest.SetAt(append(srv0, "externalAuth", "service")...), str("auth.other-ns", "auth:80", "AUTH")},
		{"config.servers[].externalAuth.namespace", hostiletest.SetAt(append(srv0, "externalAuth", "namespace")...), str("other-ns", "kube-system", "Other", "a.b", "../x", "-x", strings.Repeat("n", 64))},
		{"config.servers[].externalAuth.port", hostiletest.SetAt(append(srv0, "externalAuth", "port")...), nums()},
		{"config.servers[].externalAuth.path", hostiletest.SetAt(append(srv0, "externalAuth", "path")...), str(slashed...)},
		{"config.servers[].externalAuth.responseHeaders[]", hostiletest.SetAt(append(srv0, "externalAuth", "responseHeaders", 0)...),
			str("X_User", "Host", "Content-Length", "X-User: a", "a$b")},
		{"config.servers[].externalAuth.signIn.url", hostiletest.SetAt(append(srv0, "externalAuth", "signIn", "url")...), str(urls...)},
		{"config.servers[].externalAuth.signIn.redirectParameter", hostiletest.SetAt(append(srv0, "externalAuth", "signIn", "redirectParameter")...),
			str("rd&x=1", "a=b", "$arg_rd", "r d")},
		{"config.servers[].externalAuth.cache.key[].name", hostiletest.SetAt(append(srv0, "externalAuth", "cache", "key", 0, "name")...), str("a b", "$x", "a;b", "-")},
		{"config.servers[].externalAuth.cache.key[].source", hostiletest.SetAt(append(srv0, "externalAuth", "cache", "key", 0, "source")...), shortStr("ClientIP", "Header", "QueryParameter")},
		{"config.servers[].externalAuth.cache.durationSeconds", hostiletest.SetAt(append(srv0, "externalAuth", "cache", "durationSeconds")...), nums(86400, 86401)},
		{"config.servers[].externalAuth.timeoutSeconds", hostiletest.SetAt(append(srv0, "externalAuth", "timeoutSeconds")...), nums(60, 61)},
		{"config.servers[].externalAuth.disabled", hostiletest.SetAt(append(srv0, "externalAuth", "disabled")...), []any{true, false, "true", int64(1)}},
		{"config.servers[].locations[].externalAuth.service", hostiletest.SetAt(loc(0, "externalAuth", "service")...), str("auth-tls.x", "Auth")},
		{"config.servers[].locations[].externalAuth.disabled (with a service)", hostiletest.SetAt(loc(0, "externalAuth", "disabled")...), []any{true}},
		{"config.servers[].locations[].externalAuth.tls.hostname", hostiletest.SetAt(loc(0, "externalAuth", "tls", "hostname")...), str("a..b", "*.example.com", "EXAMPLE.com")},
		{"config.servers[].locations[].clientBodyBufferKiB", hostiletest.SetAt(loc(0, "clientBodyBufferKiB")...), nums(65536, 65537)},
		{"config.servers[].locations[].connectionLimit.connections", hostiletest.SetAt(loc(0, "connectionLimit", "connections")...), nums(65535, 65536)},
		{"service.externalTrafficPolicy", hostiletest.SetAt("service", "externalTrafficPolicy"), shortStr("Local", "Cluster", "local")},
		{"service.loadBalancerSourceRanges[]", hostiletest.SetAt("service", "loadBalancerSourceRanges", 0), shortStr("203.0.113.9", "0.0.0.0/0", "::/0", "10.0.0.0/33")},
		{"service.loadBalancerClass", hostiletest.SetAt("service", "loadBalancerClass"), shortStr("example.com/lb", "a/b/c", "-x", "kubernetes.io/x")},
		{"service.sessionAffinity", hostiletest.SetAt("service", "sessionAffinity"), shortStr("ClientIP", "None", "Cookie")},
		{"service.ipFamilyPolicy", hostiletest.SetAt("service", "ipFamilyPolicy"), shortStr("SingleStack", "RequireDualStack", "dual")},
		{"service.ipFamilies[]", hostiletest.SetAt("service", "ipFamilies", 1), shortStr("IPv4", "IPv6", "ipv6")},
		{"content.configMaps[].name", func(spec map[string]any, v any) {
			spec["content"] = map[string]any{"configMaps": []any{map[string]any{"name": v}}}
			delete(spec, "restore")
		}, shortStr("../x", "Site", "a..b")},
		{"content.volumeClaimTemplate.size", hostiletest.SetAt("content", "volumeClaimTemplate", "size"), shortStr("1t", "-1", "0", "999999999g", "1Ei", "1Gi ", "abc")},
		{"content.volumeClaimTemplate.storageClassName", hostiletest.SetAt("content", "volumeClaimTemplate", "storageClassName"), shortStr("Standard", strings.Repeat("a", 254))},
		{"content.volumeClaimTemplate.accessModes[]", hostiletest.SetAt("content", "volumeClaimTemplate", "accessModes", 0), shortStr("ReadWriteMany", "ReadWriteOncePod", "RWO")},
		{"restore.backup", hostiletest.SetAt("restore", "backup"), shortStr("../x", "Nightly", "-x")},
		{"restore.id", hostiletest.SetAt("restore", "id"), shortStr("20261122T030000.000000000Z-1a2b3c4", "../../etc/passwd", "x; rm -rf /", "20261122T030000.000000000Z-1a2b3c4d\n")},
		{"service.type", hostiletest.SetAt("service", "type"), shortStr("ExternalName", "NodePort", "LoadBalancer", "clusterip")},
		{"service.annotations (value)", hostiletest.SetAt("service", "annotations", "lb.example.com/internal"), shortStr()},
		{"service.annotations (key)", setKey("service", "annotations"), shortStr("a/b/c", "kubernetes.io/x")},
		{"podDisruptionBudget.maxUnavailable", hostiletest.SetAt("podDisruptionBudget", "maxUnavailable"), nums()},
		{"podDisruptionBudget.minAvailable", func(spec map[string]any, v any) {
			spec["podDisruptionBudget"] = map[string]any{"minAvailable": v}
		}, shortStr("50%", "150%", "-1%", "1.5", "abc")},
		// NetworkPolicy peers are Kubernetes' own type, which the CRD
		// embeds without the API server's checks of a NetworkPolicy: a CIDR
		// it refuses must be refused before any child is written.
		{"networkPolicy.from[].ipBlock.cidr", hostiletest.SetAt("networkPolicy", "from", 0, "ipBlock", "cidr"),
			shortStr("10.0.0.0/33", "10.0.0.1/8", "10.0.0.0", "::/0", "0.0.0.0/0", "fd00::/129")},
		{"networkPolicy.from[].ipBlock.except[]", func(spec map[string]any, v any) {
			spec["networkPolicy"] = map[string]any{"from": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8", "except": []any{v}}}}}
		}, shortStr("11.0.0.0/16", "10.0.0.0/8", "10.1.0.0/16")},
		{"networkPolicy.from[].namespaceSelector.matchLabels (key)", setKey("networkPolicy", "from", 1, "namespaceSelector", "matchLabels"), shortStr("a/b/c", "-x")},
		{"networkPolicy.metricsFrom[].podSelector.matchLabels (value)", hostiletest.SetAt("networkPolicy", "metricsFrom", 0, "podSelector", "matchLabels", "app"), shortStr("-x", "a_b")},
		// worker_processes is the CPU limit in whole cores: 3e9 cores
		// overflows an int32 (-1294967296), 3e6 asks nginx for three million
		// workers. Either must be refused or rendered to a count nginx takes.
		{"resources.limits.cpu", hostiletest.SetAt("resources", "limits", "cpu"), anyOf([]string{"3000000000", "3000000"})},
		{"pod.labels (key)", setKey("pod", "labels"), shortStr("a/b/c", "kubernetes.io/x", "-x")},
		{"pod.labels (value)", hostiletest.SetAt("pod", "labels", "team"), shortStr("-x", "a_b")},
		{"pod.annotations (value)", hostiletest.SetAt("pod", "annotations", "example.com/owner"), shortStr()},
		{"pod.nodeSelector (value)", hostiletest.SetAt("pod", "nodeSelector", "kubernetes.io/os"), shortStr("-x")},
		{"childMetadata.labels (key)", setKey("childMetadata", "labels"), shortStr("a/b/c", "kubernetes.io/x", "-x", "nginx.operator.dev/x")},
		{"childMetadata.labels (value)", hostiletest.SetAt("childMetadata", "labels", "team"), shortStr("-x", "a_b")},
		{"childMetadata.annotations (key)", setKey("childMetadata", "annotations"), shortStr("a/b/c", "nginx.operator.dev/config-hash")},
		{"childMetadata.annotations (value)", hostiletest.SetAt("childMetadata", "annotations", "example.com/owner"), shortStr()},
		{"pod.priorityClassName", hostiletest.SetAt("pod", "priorityClassName"), shortStr("system-node-critical", "High")},
		// The pod settings are core types the CRD embeds with their
		// schema but not all their rules: what the API server refuses in
		// the StatefulSet must be refused before any child is written.
		{"pod.affinity.podAntiAffinity.required[].topologyKey", hostiletest.SetAt(antiAffinity("topologyKey")...), shortStr("kubernetes.io/hostname", "a/b/c", "-x")},
		{"pod.affinity.podAntiAffinity.required[].labelSelector.matchLabels (value)", hostiletest.SetAt(antiAffinity("labelSelector", "matchLabels", "app")...), shortStr("-x", "a_b")},
		{"pod.affinity.podAntiAffinity.required[].labelSelector.matchLabels (key)", setKey(antiAffinity("labelSelector", "matchLabels")...), shortStr("a/b/c", "-x")},
		{"pod.tolerations[].value", hostiletest.SetAt("pod", "tolerations", 0, "value"), shortStr("-x", "a_b")},
		{"pod.tolerations[].effect", hostiletest.SetAt("pod", "tolerations", 0, "effect"), shortStr("NoExecute", "Sometimes")},
		{"pod.topologySpreadConstraints[].topologyKey", hostiletest.SetAt("pod", "topologySpreadConstraints", 0, "topologyKey"), shortStr("a/b/c")},
		{"pod.topologySpreadConstraints[].whenUnsatisfiable", hostiletest.SetAt("pod", "topologySpreadConstraints", 0, "whenUnsatisfiable"), shortStr("DoNotSchedule", "Maybe")},
		{"resources.requests (key)", func(spec map[string]any, v any) {
			hostiletest.SetAt("resources", "requests")(spec, map[string]any{v.(string): "1"})
		}, shortStr("example.com/gpu", "hugepages-2Mi", "cpu ", "a/b/c")},
		{"resources.claims[].name", func(spec map[string]any, v any) {
			hostiletest.SetAt("resources", "claims")(spec, []any{map[string]any{"name": v}})
		}, shortStr("gpu", "-x")},
	}
}

// structures break the rules that span fields (CEL, list keys, item
// limits, and the renderer's own cross-field checks).
func structures() []struct {
	show string
	edit func(spec map[string]any)
} {
	srv := func(i int) []any { return []any{"config", "servers", i} }
	manyOf := func(n int, item func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = item(i)
		}
		return out
	}
	return []struct {
		show string
		edit func(spec map[string]any)
	}{
		{"ports[1].containerPort equal to ports[0]'s", func(s map[string]any) { hostiletest.SetAt("ports", 1, "containerPort")(s, int64(8080)) }},
		{"two ports named http", func(s map[string]any) { hostiletest.SetAt("ports", 1, "name")(s, "http") }},
		{"ports[1].servicePort equal to ports[0]'s", func(s map[string]any) {
			hostiletest.SetAt("ports", 0, "servicePort")(s, int64(80))
			hostiletest.SetAt("ports", 1, "servicePort")(s, int64(80))
		}},
		{"ports[1].servicePort on ports[0]'s containerPort", func(s map[string]any) { hostiletest.SetAt("ports", 1, "servicePort")(s, int64(8080)) }},
		{"two ports on one nodePort", func(s map[string]any) {
			hostiletest.SetAt("ports", 0, "nodePort")(s, int64(30080))
			hostiletest.SetAt("ports", 1, "nodePort")(s, int64(30080))
		}},
		{"a nodePort on a ClusterIP Service", func(s map[string]any) {
			hostiletest.SetAt("ports", 0, "nodePort")(s, int64(30080))
			hostiletest.SetAt("service", "type")(s, "ClusterIP")
		}},
		{"ports: []", func(s map[string]any) { s["ports"] = []any{} }},
		{"no ports (schema default) with servers on https", func(s map[string]any) { delete(s, "ports") }},
		{"17 ports", func(s map[string]any) {
			s["ports"] = manyOf(17, func(i int) any {
				return map[string]any{"name": fmt.Sprintf("p%d", i), "containerPort": int64(20000 + i), "protocol": "TCP"}
			})
			s["ports"].([]any)[0].(map[string]any)["name"] = "http"
			s["ports"].([]any)[1].(map[string]any)["name"] = "https"
		}},
		{"two default servers on http", func(s map[string]any) {
			hostiletest.SetAt(append(srv(1), "port")...)(s, "http")
			hostiletest.SetAt(append(srv(1), "defaultServer")...)(s, true)
			delete(getAt(s, srv(1)...).(map[string]any), "tls")
		}},
		{"port http used with and without TLS", func(s map[string]any) { hostiletest.SetAt(append(srv(1), "port")...)(s, "http") }},
		{"a location with static and proxy", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 0, "proxy")...)(s, map[string]any{"service": "api", "port": int64(80)})
		}},
		{"a location with no handler", func(s map[string]any) {
			delete(getAt(s, append(srv(0), "locations", 0)...).(map[string]any), "static")
		}},
		{"two locations with path /", func(s map[string]any) { hostiletest.SetAt(append(srv(0), "locations", 1, "path")...)(s, "/") }},
		{"two exact locations with path /old", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 1, "path")...)(s, "/old")
			hostiletest.SetAt(append(srv(0), "locations", 1, "exact")...)(s, true)
		}},
		{"metrics enabled and a port named metrics", func(s map[string]any) {
			hostiletest.SetAt("ports", 1, "name")(s, layout.MetricsPortName)
			hostiletest.SetAt(append(srv(1), "port")...)(s, layout.MetricsPortName)
		}},
		{"a server on a port name spec.ports lacks", func(s map[string]any) { hostiletest.SetAt(append(srv(1), "port")...)(s, "admin") }},
		{"restore without volumeClaimTemplate", func(s map[string]any) { delete(s, "content") }},
		{"configMaps and volumeClaimTemplate together", func(s map[string]any) {
			hostiletest.SetAt("content", "configMaps")(s, []any{map[string]any{"name": "site"}})
		}},
		{"podDisruptionBudget with minAvailable and maxUnavailable", func(s map[string]any) {
			hostiletest.SetAt("podDisruptionBudget", "minAvailable")(s, int64(1))
		}},
		{"podDisruptionBudget: {}", func(s map[string]any) { s["podDisruptionBudget"] = map[string]any{} }},
		{"33 servers", func(s map[string]any) {
			s["config"].(map[string]any)["servers"] = manyOf(33, func(i int) any {
				return map[string]any{"port": "http", "serverNames": []any{fmt.Sprintf("s%d.example.com", i)}}
			})
		}},
		{"33 serverNames", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "serverNames")...)(s, manyOf(33, func(i int) any { return fmt.Sprintf("n%d.example.com", i) }))
		}},
		{"serverNames with a duplicate", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "serverNames")...)(s, []any{"example.com", "example.com"})
		}},
		{"65 locations", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations")...)(s, manyOf(65, func(i int) any {
				return map[string]any{"path": fmt.Sprintf("/l%d", i), "static": map[string]any{}}
			}))
		}},
		{"33 headers", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 0, "headers")...)(s, manyOf(33, func(i int) any {
				return map[string]any{"name": fmt.Sprintf("X-H%d", i), "value": "v"}
			}))
		}},
		{"two headers named X-A", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 0, "headers")...)(s, []any{
				map[string]any{"name": "X-A", "value": "1"}, map[string]any{"name": "X-A", "value": "2"}})
		}},
		{"accessModes with a duplicate", func(s map[string]any) {
			hostiletest.SetAt("content", "volumeClaimTemplate", "accessModes")(s, []any{"ReadWriteOnce", "ReadWriteOnce"})
		}},
		{"two configMaps named site", func(s map[string]any) {
			s["content"] = map[string]any{"configMaps": []any{map[string]any{"name": "site"}, map[string]any{"name": "site"}}}
			delete(s, "restore")
		}},
		{"redirectToHTTPS on a server with locations", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "redirectToHTTPS")...)(s, map[string]any{})
		}},
		{"a proxy with a service and backends", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 3, "proxy", "service")...)(s, "api")
		}},
		{"ReplacePrefixMatch on an exact location", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 4, "exact")...)(s, true)
		}},
		{"one request header set and removed", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 1, "requestHeaders", "remove")...)(s, []any{"x-team"})
		}},
		{"requestHeaders on a static location", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 0, "requestHeaders")...)(s, map[string]any{"set": []any{map[string]any{"name": "X-A", "value": "b"}}})
		}},
		{"a hash method without a key", func(s map[string]any) {
			delete(getAt(s, append(srv(0), "locations", 1, "proxy")...).(map[string]any), "hashKey")
		}},
		{"session affinity with a balancing method", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 3, "proxy", "loadBalancingMethod")...)(s, "least_conn")
		}},
		{"backend TLS on a plain gRPC location", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 5, "proxy", "tls")...)(s, map[string]any{"hostname": "health.internal"})
		}},
		{"buffering on a gRPC location", func(s map[string]any) {
			hostiletest.SetAt(append(srv(0), "locations", 5, "proxy", "buffering")...)(s, map[string]any{"disabled": true})
		}},
		{"a stream without serverNames on the port of the TLS servers", func(s map[string]any) {
			delete(getAt(s, "config", "streams", 0).(map[string]any), "serverNames")
		}},
		{"a plain-text server on a stream's port", func(s map[string]any) { hostiletest.SetAt(append(srv(0), "port")...)(s, "db") }},
		{"a server on the UDP port", func(s map[string]any) { hostiletest.SetAt(append(srv(0), "port")...)(s, "dns") }},
		{"two streams without serverNames on one port", func(s map[string]any) { hostiletest.SetAt("config", "streams", 2, "port")(s, "db") }},
		{"a name of a stream and of a server on one port", func(s map[string]any) {
			hostiletest.SetAt("config", "streams", 0, "serverNames")(s, []any{"example.com"})
		}},
		{"a name of two streams on one port", func(s map[string]any) {
			hostiletest.SetAt("config", "streams", 1, "port")(s, "https")
			hostiletest.SetAt("config", "streams", 1, "serverNames")(s, []any{"vault.example.com"})
		}},
		{"TLS on a UDP stream", func(s map[string]any) {
			hostiletest.SetAt("config", "streams", 2, "tls")(s, map[string]any{"secretName": "dns-tls"})
		}},
		{"the PROXY protocol from TLS terminated behind the router", func(s map[string]any) {
			hostiletest.SetAt("config", "streams", 0, "tls")(s, map[string]any{"secretName": "vault-tls"})
		}},
		{"expectedResponses on a TCP stream", func(s map[string]any) { hostiletest.SetAt("config", "streams", 1, "expectedResponses")(s, int64(1)) }},
		{"a stream on a port name spec.ports lacks", func(s map[string]any) { hostiletest.SetAt("config", "streams", 1, "port")(s, "pg") }},
		{"a stream with every backend weighed 0", func(s map[string]any) {
			hostiletest.SetAt("config", "streams", 2, "backends", 0, "weight")(s, int64(0))
		}},
		{"33 streams", func(s map[string]any) {
			s["config"].(map[string]any)["streams"] = manyOf(33, func(i int) any {
				return map[string]any{"port": "https", "serverNames": []any{fmt.Sprintf("s%d.example.com", i)},
					"backends": []any{map[string]any{"service": "vault", "port": int64(8200)}}}
			})
		}},
		{"two UDP ports on one containerPort", func(s map[string]any) {
			hostiletest.SetAt("ports", 2, "protocol")(s, "UDP")
			hostiletest.SetAt("ports", 2, "containerPort")(s, int64(5353))
		}},
		{"9 imagePullSecrets", func(s map[string]any) {
			s["imagePullSecrets"] = manyOf(9, func(i int) any { return map[string]any{"name": fmt.Sprintf("r%d", i)} })
		}},
	}
}

// corpus is the baseline followed by every field × value and every
// structure, each case distinct.
func corpus(t *testing.T) []*specCase {
	t.Helper()
	spec := baseSpec()
	base, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		t.Fatal(err)
	}
	var out []*specCase
	seen := map[string]bool{}
	add := func(field, show string, s map[string]any) {
		key := field + "\x00" + show
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, &specCase{id: len(out), field: field, show: show, spec: s})
	}
	add(baselineField, "-", runtime.DeepCopyJSON(base))
	for _, f := range append(corpusFields(), childFields()...) {
		for _, v := range f.values {
			s := runtime.DeepCopyJSON(base)
			f.set(s, v)
			add(f.name, showValue(v), s)
		}
	}
	for _, st := range append(structures(), childStructures()...) {
		s := runtime.DeepCopyJSON(base)
		st.edit(s)
		add("(structure)", st.show, s)
	}
	return out
}

func showValue(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return strconv.Quote(v[:24]) + fmt.Sprintf("…(%d bytes)", len(v))
		}
		return strconv.Quote(v)
	default:
		return fmt.Sprint(v)
	}
}
