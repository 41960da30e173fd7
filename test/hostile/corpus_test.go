package hostile

// A corpus of hostile NginxOperator specs, each sent to the real apiserver as
// v1beta1 and as v1alpha1 (the hostile spec riding in the v1beta1-spec
// annotation, or in v1alpha1's own port, replicas and forceRedeploy), and
// followed as far as it gets: admission, the stored object, the renderer, the
// real `nginx -t`, and the directive tree nginx reads back.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

const (
	hostileMinCases     = 300
	hostileAPIWorkers   = 4 // concurrent create/get/dry-run sequences
	hostileNginxWorkers = 2 // concurrent `nginx -t`
	hostileBeta         = "v1beta1"
	hostileAlpha        = "v1alpha1"
)

// The ports the operator's own servers and sidecar use inside every pod.
var hostileReservedPorts = map[int]bool{v1beta1.HealthPort: true, v1beta1.StubStatusPort: true, v1beta1.ExporterPort: true}

// TestHostileSpecsAreRefusedOrRenderOnlyTheirIntendedDirectivesThroughBothVersions
// proves that no spec, whichever API version it is written through, gets a
// user value into nginx.conf as anything but the argument it was meant to be.
// Every send must end in one of:
//
//	a) refused by the apiserver (schema, CEL or the conversion webhook);
//	b) stored, and refused by the controller's validation or nginx.Render
//	   (the controller's InvalidConfig);
//	c) stored and rendered, and the real `nginx -t` (run as an unprivileged
//	   user, as in the pod) accepts the file, which parses back to exactly the
//	   tree nginx.Directives built, and means what the fields say: locations
//	   are plain URI prefixes or exact URIs, no user value expands nginx
//	   variables, redirects are redirects, servers listen on unprivileged
//	   ports the operator does not reserve.
//
// And a spec stored through v1alpha1 must be one the apiserver accepts as
// v1beta1 (a server-side dry-run create of the stored spec): otherwise the
// v1alpha1 endpoint bypassed the v1beta1 schema and CEL rules.
func TestHostileSpecsAreRefusedOrRenderOnlyTheirIntendedDirectivesThroughBothVersions(t *testing.T) {
	nginxBin := framework.RequireTool(t, "nginx", "apt-get install -y nginx")
	cfg := env.Cluster(t).Config
	inprocess.InstallCRDs(t, cfg)
	ns, _ := env.Namespace(t)
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e := inprocess.StartWebhook(t, cfg, ns, port, inprocess.Logger())
	start := time.Now()

	cases := hostileCorpus(t)
	if len(cases) < hostileMinCases {
		t.Fatalf("the corpus has %d distinct cases, want at least %d", len(cases), hostileMinCases)
	}
	env := newHostileEnv(t, e.Namespace)

	// 1. Admission, read-back, dry-run re-check and rendering.
	var sends []*hostileSend
	for _, c := range cases {
		sends = append(sends, &hostileSend{c: c, path: hostileBeta}, &hostileSend{c: c, path: hostileAlpha})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hostilePool(hostileAPIWorkers, len(sends), func(i int) { env.send(ctx, e.Admin, sends[i]) })
	apiDone := time.Now()

	// 2. The real nginx, once per distinct rendered file.
	byConfig := map[string][]*hostileSend{}
	var configs []string
	for _, s := range sends {
		if s.config == nil {
			continue
		}
		k := string(s.config)
		if _, ok := byConfig[k]; !ok {
			configs = append(configs, k)
		}
		byConfig[k] = append(byConfig[k], s)
	}
	hostilePool(hostileNginxWorkers, len(configs), func(i int) {
		said := env.nginxTest(nginxBin, []byte(configs[i]))
		for _, s := range byConfig[configs[i]] {
			s.nginxSaid, s.nginxRan = said, true
		}
	})
	t.Logf("%d cases, %d sends: apiserver and renderer %v; nginx -t on %d distinct files %v",
		len(cases), len(sends), apiDone.Sub(start).Round(time.Millisecond), len(configs), time.Since(apiDone).Round(time.Millisecond))

	// The corpus means something only if the unmodified spec goes all the way
	// through on both paths.
	for _, s := range sends[:2] {
		if s.c.field != hostileBaselineField || s.outcome() != outcomeRendered || len(s.problems()) > 0 {
			t.Fatalf("the baseline spec through %s: outcome %q, problems %q, refused %q, render error %v",
				s.path, s.outcome(), s.problems(), s.refused, s.renderErr)
		}
	}

	t.Logf("outcomes:\n%s", hostileSummary(sends))
	// Accepted through v1alpha1 though refused through v1beta1, yet stored
	// as a valid v1beta1 spec: the conversion normalised the value (an
	// omitted zero, say). Listed so that a reader can judge them.
	var normalised []string
	for i := 0; i < len(sends); i += 2 {
		beta, alpha := sends[i], sends[i+1]
		if beta.outcome() == outcomeRefused && alpha.outcome() != outcomeRefused && len(alpha.problems()) == 0 {
			normalised = append(normalised, fmt.Sprintf("  %d %s = %s: %s", alpha.c.id, alpha.c.field, alpha.c.show, alpha.outcome()))
		}
	}
	if len(normalised) > 0 {
		t.Logf("refused as v1beta1, accepted as v1alpha1 and stored valid (normalised by the conversion):\n%s", strings.Join(normalised, "\n"))
	}
	var failing []*hostileSend
	for _, s := range sends {
		if len(s.problems()) > 0 {
			failing = append(failing, s)
		}
	}
	if len(failing) > 0 {
		t.Errorf("%d of %d sends end neither refused (by the apiserver or the renderer) nor rendered intact, accepted by nginx and meaning what their fields say:\n%s",
			len(failing), len(sends), hostileFailureTable(failing))
	}
}

// ---------------------------------------------------------------- the corpus

const hostileBaselineField = "(baseline)"

// hostileCase is one complete v1beta1 spec, the base spec with one field set
// to one hostile value.
type hostileCase struct {
	id    int
	field string // where the value goes, in the spec's JSON names
	show  string // the value, for the report
	spec  map[string]any
}

// hostileField sets one field of a spec (as JSON) to each of its values.
type hostileField struct {
	name   string
	set    func(spec map[string]any, v any)
	values []any
}

// hostileBaseSpec touches every field the corpus varies; valid on both paths.
func hostileBaseSpec() v1beta1.NginxOperatorSpec {
	tcp := corev1.ProtocolTCP
	return v1beta1.NginxOperatorSpec{
		Replicas:         ptr.To[int32](2),
		Image:            "nginx:1.27",
		ImagePullPolicy:  corev1.PullIfNotPresent,
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}},
		Ports:            []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: tcp}, {Name: "https", ContainerPort: 8443, Protocol: tcp}},
		ForceRedeploy:    "2026-01-01",
		Config: v1beta1.NginxConfig{
			WorkerConnections: 1024, ClientMaxBodySize: "1m", KeepaliveTimeoutSeconds: 65,
			TrustedProxies: []string{"10.0.0.0/8"},
			RealIP:         &v1beta1.RealIP{Header: "X-Forwarded-For"},
			Gzip:           &v1beta1.Gzip{Types: []string{"text/css", "application/json"}, MinLengthBytes: 1024, Level: 5},
			AccessLog:      v1beta1.AccessLog{Format: "JSON"},
			TLS: v1beta1.TLSPolicy{Protocols: []string{"TLSv1.2", "TLSv1.3"}, Ciphers: []string{"ECDHE-RSA-AES128-GCM-SHA256"},
				SessionCacheMiB: 10, SessionTimeoutMinutes: 60},
			Servers: []v1beta1.Server{
				{Port: "http", ServerNames: []string{"example.com"}, DefaultServer: true,
					IPAccess:   &v1beta1.IPAccess{Allow: []string{"10.0.0.0/8"}, Deny: []string{"10.66.0.0/16"}},
					BasicAuth:  &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth", Realm: "Team A"},
					RateLimit:  &v1beta1.RateLimit{RequestsPerSecond: 10, Burst: 20, ZoneSizeMiB: 1},
					ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/errors/404.html"}},
					Locations: []v1beta1.Location{
						{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}, Expires: "1h", Headers: []v1beta1.Header{{Name: "X-Frame-Options", Value: "DENY"}},
							DisableAccessLog: true, IPAccess: &v1beta1.IPAccess{Deny: []string{"192.0.2.0/24"}}, BasicAuth: &v1beta1.HTTPBasicAuth{Disabled: true, Key: "auth", Realm: "x"},
							RateLimit: &v1beta1.RateLimit{RequestsPerMinute: 60, ZoneSizeMiB: 2}},
						{Path: "/api/", ClientMaxBodySize: "10m", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 8081, ReadTimeoutSeconds: 60,
							ConnectTimeoutSeconds: 5, SendTimeoutSeconds: 60,
							Buffering: &v1beta1.ProxyBuffering{HeaderBufferKiB: 8, Buffers: 8, BufferKiB: 4},
							TLS:       &v1beta1.BackendTLS{Hostname: "api.internal", CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "api-ca", Key: "ca.crt"}},
							URLRewrite: &v1beta1.URLRewrite{Hostname: "api.internal",
								Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/v2/")}}},
							RequestHeaders: &v1beta1.HeaderModifier{
								Set: []v1beta1.Header{{Name: "X-Team", Value: "a"}}, Add: []v1beta1.Header{{Name: "X-Via", Value: "edge"}}, Remove: []string{"X-Debug"},
							},
							ResponseHeaders: &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "Cache-Control", Value: "no-store"}}, Remove: []string{"X-Powered-By"}},
						},
						{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 301}},
						{Path: "/next/", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{
							{Service: "next", Port: 80, Weight: ptr.To[int32](9)}, {Service: "next-canary", Port: 80, Weight: ptr.To[int32](1)}}}},
						{Path: "/docs/", Redirect: &v1beta1.RedirectLocation{Scheme: "https", Hostname: "docs.example.com", Port: ptr.To[int32](8443), Code: 308,
							Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/guide/")}}},
					}},
				{Port: "https", ServerNames: []string{"example.com"}, TLS: &v1beta1.TLS{SecretName: "web-tls",
					HSTS:               &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](31536000), IncludeSubDomains: true},
					ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "clients-ca", Key: "ca.crt"}, VerifyDepth: 2}},
					Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}},
				{Port: "http", ServerNames: []string{"plain.example.com"}, RedirectToHTTPS: &v1beta1.HTTPSRedirect{Port: ptr.To[int32](8443), Code: 308}},
			},
		},
		Content: v1beta1.Content{VolumeClaimTemplate: &v1beta1.VolumeClaimTemplate{
			Size: resource.MustParse("1Gi"), StorageClassName: ptr.To("standard"),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		}},
		Restore: &v1beta1.RestoreSpec{Backup: "nightly", ID: "20261122T030000.000000000Z-1a2b3c4d"},
		Metrics: v1beta1.MetricsSpec{Enabled: true},
		Service: v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Annotations: map[string]string{"lb.example.com/internal": "true"},
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, LoadBalancerSourceRanges: []string{"203.0.113.0/24"},
			LoadBalancerClass: "example.com/lb", SessionAffinity: corev1.ServiceAffinityClientIP,
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		PodDisruptionBudget: &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		Pod: v1beta1.PodSettings{
			Labels:            map[string]string{"team": "a"},
			Annotations:       map[string]string{"example.com/owner": "web"},
			NodeSelector:      map[string]string{"kubernetes.io/os": "linux"},
			PriorityClassName: "high",
		},
	}
}

// Strings that are syntax to nginx, to the shell or to a terminal, or that
// stretch a parser: for every string field that reaches nginx.conf.
func hostileStrings() []string {
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
func hostileShortStrings() []string {
	return []string{
		"", " ", ";", "a;b", "}", "#", `"`, `\`, "$host", "a\nb", "a\x00b", "\x7f",
		"include /etc/passwd;", "ünï", strings.Repeat("a", 300), strings.Repeat("a", 5000),
	}
}

var hostileNumbers = []int64{
	-2147483648, -1, 0, 1, 15, 1023, 1024, 9113, 18080, 18081, 65535, 65536,
	2147483647, 2147483648, 9223372036854775807,
}

func hostileAny[T any](lists ...[]T) []any {
	var out []any
	for _, l := range lists {
		for _, v := range l {
			out = append(out, v)
		}
	}
	return out
}

// hostileAt is a setter of the value at path (map keys and list indexes).
func hostileAt(path ...any) func(spec map[string]any, v any) {
	return func(spec map[string]any, v any) {
		var cur any = spec
		for i, p := range path {
			last := i == len(path)-1
			switch k := p.(type) {
			case string:
				m := cur.(map[string]any)
				if last {
					m[k] = v
					return
				}
				if m[k] == nil {
					m[k] = map[string]any{}
				}
				cur = m[k]
			case int:
				l := cur.([]any)
				if last {
					l[k] = v
					return
				}
				cur = l[k]
			}
		}
	}
}

// hostileKey sets a map at path to {v: "x"}: the hostile value is a key.
func hostileKey(path ...any) func(spec map[string]any, v any) {
	return func(spec map[string]any, v any) { hostileAt(path...)(spec, map[string]any{v.(string): "x"}) }
}

func hostileGet(spec map[string]any, path ...any) any {
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

func hostileFields() []hostileField {
	srv0 := []any{"config", "servers", 0}
	loc := func(j int, rest ...any) []any {
		return append(append(append([]any{}, srv0...), "locations", j), rest...)
	}
	full := hostileStrings()
	short := hostileShortStrings()
	str := func(extra ...string) []any { return hostileAny(full, extra) }
	shortStr := func(extra ...string) []any { return hostileAny(short, extra) }
	nums := func(extra ...int64) []any { return hostileAny(hostileNumbers, extra) }
	slashed := []string{"/a b", "/a;b", "/a{b}", "/a#b", "/$host", "/a\nb", "/a\x00b", "/../etc/passwd", "/%00", "//", "/", "/" + strings.Repeat("a", 600), "x", "*"}
	urls := []string{
		"https://example.com/$http_cookie", "https://example.com/a b", "https://example.com/a;b",
		`https://example.com/";return 200 x;#`, "javascript:alert(1)", "//evil.example", "http://x/\r\nSet-Cookie: a=b",
		"https://例え.jp/", "ftp://example.com/", "https://example.com/" + strings.Repeat("a", 3000),
	}
	sizes := []string{"1t", "-1", "0", "999999999g", "1T", "1 m", "1mm", "0x10", "1e3", "9999999999", "1k;", "1.5m", "1G", "10M"}
	serverNames := []string{"*", "_", "*.x.com", "a..b", ".x.com", "x.*", "*.*.x.com", "EXAMPLE.com", "bücher.de",
		`~^(?<x>.+)\.example\.com$`, "example.com:80", "localhost", strings.Repeat("a", 254)}

	return []hostileField{
		{"image", hostileAt("image"), str("-nginx", "nginx:1.27 --foo", "nginx:1.27@sha256:abc", "evil.example.com/nginx:latest")},
		{"imagePullPolicy", hostileAt("imagePullPolicy"), shortStr("Always", "Sometimes", "always")},
		{"imagePullSecrets[].name", hostileAt("imagePullSecrets", 0, "name"), shortStr("../x", "Regcred")},
		{"ports[].name (and servers[].port)", func(spec map[string]any, v any) {
			hostileAt("ports", 0, "name")(spec, v)
			hostileAt(append(srv0, "port")...)(spec, v)
		}, shortStr("metrics", "HTTP", "a-", "abcdefghijklmnop")},
		{"ports[0].containerPort (v1alpha1 port)", hostileAt("ports", 0, "containerPort"), nums(8443)},
		{"ports[1].containerPort", hostileAt("ports", 1, "containerPort"), nums(8080)},
		{"ports[].protocol", hostileAt("ports", 0, "protocol"), shortStr("UDP", "SCTP", "tcp")},
		{"replicas (v1alpha1 replicas)", hostileAt("replicas"), nums(1000, 1001)},
		{"forceRedeploy (v1alpha1 forceRedeploy)", hostileAt("forceRedeploy"), str(strings.Repeat("a", 253), strings.Repeat("a", 254))},
		{"config.workerConnections", hostileAt("config", "workerConnections"), nums(16)},
		{"config.clientMaxBodySize", hostileAt("config", "clientMaxBodySize"), str(sizes...)},
		{"config.keepaliveTimeoutSeconds", hostileAt("config", "keepaliveTimeoutSeconds"), nums(3600, 3601)},
		{"config.servers[].port", hostileAt(append(srv0, "port")...), shortStr("https", "nope", "HTTP")},
		{"config.servers[].serverNames[]", hostileAt(append(srv0, "serverNames", 0)...), str(serverNames...)},
		{"config.servers[].defaultServer (on servers[1], same port)", func(spec map[string]any, v any) {
			hostileAt("config", "servers", 1, "defaultServer")(spec, true)
			hostileAt("config", "servers", 1, "port")(spec, v)
		}, hostileAny([]string{"http", "https"})},
		{"config.servers[].tls.secretName", hostileAt("config", "servers", 1, "tls", "secretName"), str("../../etc", ".", "..", "a/b", "web-tls/../x")},
		{"config.servers[].locations[].path", hostileAt(loc(0, "path")...), str(slashed...)},
		{"config.servers[].locations[].exact (with path)", func(spec map[string]any, v any) {
			hostileAt(loc(1, "exact")...)(spec, true)
			hostileAt(loc(1, "path")...)(spec, v)
		}, hostileAny([]string{"/x", "= /x", "~^/x", "@internal", "", "/a b", "/old"})},
		{"config.servers[].locations[].static (with path)", func(spec map[string]any, v any) {
			hostileAt(loc(0, "static", "autoindex")...)(spec, true)
			hostileAt(loc(0, "path")...)(spec, v)
		}, hostileAny([]string{"/files/", "~ /", "@static"})},
		{"config.servers[].locations[].proxy.service", hostileAt(loc(1, "proxy", "service")...), str("api.other-ns", "api:8080", "127.0.0.1", "API")},
		{"config.servers[].locations[].proxy.port", hostileAt(loc(1, "proxy", "port")...), nums(80)},
		{"config.servers[].locations[].proxy.readTimeoutSeconds", hostileAt(loc(1, "proxy", "readTimeoutSeconds")...), nums(3600, 3601)},
		{"config.servers[].locations[].redirect.url", hostileAt(loc(2, "redirect", "url")...), str(urls...)},
		{"config.servers[].locations[].redirect.code", hostileAt(loc(2, "redirect", "code")...), nums(200, 301, 302, 303, 304, 307, 308, 399, 444, 999, 1000)},
		{"config.servers[].locations[].headers[].name", hostileAt(loc(0, "headers", 0, "name")...), str("X-A B", "X-A:B", "Set-Cookie", strings.Repeat("X", 129))},
		{"config.servers[].locations[].headers[].value", hostileAt(loc(0, "headers", 0, "value")...), str("a$b", "v\r\nX-Injected: 1", "x always", `"always`, strings.Repeat("v", 1025))},
		{"config.trustedProxies[]", hostileAt("config", "trustedProxies", 0), str("10.0.0.1", "10.0.0.0/33", "::/0", "0.0.0.0/0", "fd00::/8", "10.0.0.0/8 1", "10.0.0.0/8;", "default")},
		{"config.servers[].redirectToHTTPS.port", hostileAt("config", "servers", 2, "redirectToHTTPS", "port"), nums(443)},
		{"config.servers[].redirectToHTTPS.code", hostileAt("config", "servers", 2, "redirectToHTTPS", "code"), nums(301, 200, 404)},
		{"config.servers[].errorPages[].path", hostileAt(append(srv0, "errorPages", 0, "path")...), str(slashed...)},
		{"config.servers[].errorPages[].codes[]", hostileAt(append(srv0, "errorPages", 0, "codes", 0)...), nums(400, 499, 599, 600, 200)},
		{"config.servers[].locations[].static.fallback", hostileAt(loc(0, "static", "fallback")...), str(slashed...)},
		{"config.servers[].locations[].expires", hostileAt(loc(0, "expires")...), str("max", "epoch", "off", "-1", "1x", "1h 2m", "@15h", "modified 1h", "99999999y")},
		{"config.servers[].locations[].clientMaxBodySize", hostileAt(loc(1, "clientMaxBodySize")...), str(sizes...)},
		{"config.servers[].locations[].proxy.connectTimeoutSeconds", hostileAt(loc(1, "proxy", "connectTimeoutSeconds")...), nums(75, 76)},
		{"config.servers[].locations[].proxy.sendTimeoutSeconds", hostileAt(loc(1, "proxy", "sendTimeoutSeconds")...), nums(3600, 3601)},
		{"config.servers[].locations[].proxy.buffering.headerBufferKiB", hostileAt(loc(1, "proxy", "buffering", "headerBufferKiB")...), nums(28, 29, 1024, 1025)},
		{"config.servers[].locations[].proxy.buffering.buffers", hostileAt(loc(1, "proxy", "buffering", "buffers")...), nums(2, 3, 256, 257)},
		{"config.servers[].locations[].proxy.tls.hostname", hostileAt(loc(1, "proxy", "tls", "hostname")...), str(serverNames...)},
		{"config.servers[].locations[].proxy.tls.caCertificate.name", hostileAt(loc(1, "proxy", "tls", "caCertificate", "name")...), str("../../etc", ".", "..", "a/b")},
		{"config.servers[].locations[].proxy.tls.caCertificate.key", hostileAt(loc(1, "proxy", "tls", "caCertificate", "key")...), str("..", ".", "../ca.crt", "a/b", "tls.crt")},
		{"config.servers[].locations[].proxy.tls.caCertificate.kind", hostileAt(loc(1, "proxy", "tls", "caCertificate", "kind")...), shortStr("Secret", "secret", "Pod")},
		{"config.servers[].locations[].proxy.urlRewrite.hostname", hostileAt(loc(1, "proxy", "urlRewrite", "hostname")...), str(serverNames...)},
		{"config.servers[].locations[].proxy.urlRewrite.path.replacePrefixMatch", hostileAt(loc(1, "proxy", "urlRewrite", "path", "replacePrefixMatch")...), str(slashed...)},
		{"config.servers[].locations[].proxy.urlRewrite.path (full)", func(spec map[string]any, v any) {
			hostileAt(loc(1, "proxy", "urlRewrite", "path")...)(spec, map[string]any{"type": "ReplaceFullPath", "replaceFullPath": v})
		}, str(slashed...)},
		{"config.servers[].locations[].proxy.backends[].service", hostileAt(loc(3, "proxy", "backends", 0, "service")...), str("next-canary", "API", "api.other-ns")},
		{"config.servers[].locations[].proxy.backends[].weight", hostileAt(loc(3, "proxy", "backends", 0, "weight")...), nums(1000, 1001)},
		{"config.servers[].locations[].requestHeaders.set[].name", hostileAt(loc(1, "requestHeaders", "set", 0, "name")...), str("Host", "x-via", "Connection", "X-A B", strings.Repeat("X", 129))},
		{"config.servers[].locations[].requestHeaders.set[].value", hostileAt(loc(1, "requestHeaders", "set", 0, "value")...), str("a$b", "v\r\nX-Injected: 1", strings.Repeat("v", 1025))},
		{"config.servers[].locations[].requestHeaders.add[].name", hostileAt(loc(1, "requestHeaders", "add", 0, "name")...), str("X_Via", "X.Via", "x-team", "Upgrade")},
		{"config.servers[].locations[].requestHeaders.add[].value", hostileAt(loc(1, "requestHeaders", "add", 0, "value")...), str("a$b", "x\",y")},
		{"config.servers[].locations[].requestHeaders.remove[]", hostileAt(loc(1, "requestHeaders", "remove", 0)...), str("Host", "X-Team", "content-length")},
		{"config.servers[].locations[].responseHeaders.set[].value", hostileAt(loc(1, "responseHeaders", "set", 0, "value")...), str("a$b", "x always")},
		{"config.servers[].locations[].responseHeaders.remove[]", hostileAt(loc(1, "responseHeaders", "remove", 0)...), str("Cache-Control", "Transfer-Encoding")},
		{"config.servers[].locations[].redirect.scheme", hostileAt(loc(4, "redirect", "scheme")...), shortStr("http", "HTTPS", "ftp", "javascript")},
		{"config.servers[].locations[].redirect.hostname", hostileAt(loc(4, "redirect", "hostname")...), str(serverNames...)},
		{"config.servers[].locations[].redirect.port", hostileAt(loc(4, "redirect", "port")...), nums(443, 80)},
		{"config.servers[].locations[].redirect.path.replacePrefixMatch", hostileAt(loc(4, "redirect", "path", "replacePrefixMatch")...), str(slashed...)},
		{"config.servers[].locations[].redirect.path (full)", func(spec map[string]any, v any) {
			hostileAt(loc(4, "redirect", "path")...)(spec, map[string]any{"type": "ReplaceFullPath", "replaceFullPath": v})
		}, str(slashed...)},
		{"config.realIP.header", hostileAt("config", "realIP", "header"), str("X-Forwarded-For", "proxy_protocol", "X Real IP", "X-Real-IP:", strings.Repeat("X", 65))},
		{"config.realIP (PROXY protocol and a header)", func(spec map[string]any, v any) {
			hostileAt("config", "realIP")(spec, map[string]any{"proxyProtocol": true, "header": v})
		}, shortStr("X-Real-IP")},
		{"config.gzip.types[]", hostileAt("config", "gzip", "types", 0), str("text/*", "*", "text/html", "image/svg+xml", "a/b c", "TEXT/CSS")},
		{"config.gzip.level", hostileAt("config", "gzip", "level"), nums(9, 10)},
		{"config.gzip.minLengthBytes", hostileAt("config", "gzip", "minLengthBytes"), nums(10485760, 10485761)},
		{"config.accessLog.format", hostileAt("config", "accessLog", "format"), shortStr("JSON", "Combined", "json", "main", "combined")},
		{"config.tls.protocols[]", hostileAt("config", "tls", "protocols", 0), shortStr("TLSv1.1", "SSLv3", "TLSv1", "TLSv1.3", "tlsv1.2")},
		{"config.tls.ciphers[]", hostileAt("config", "tls", "ciphers", 0), str("HIGH:!aNULL", "ALL", "AES128-SHA", "NULL-SHA", "ECDHE-RSA-AES128-GCM-SHA256:ALL")},
		{"config.tls.sessionCacheMiB", hostileAt("config", "tls", "sessionCacheMiB"), nums(512, 513)},
		{"config.tls.sessionTimeoutMinutes", hostileAt("config", "tls", "sessionTimeoutMinutes"), nums(1440, 1441)},
		{"config.servers[].tls.hsts.maxAgeSeconds", hostileAt("config", "servers", 1, "tls", "hsts", "maxAgeSeconds"), nums(63072000, 63072001)},
		{"config.servers[].tls.clientCertificates.caCertificate.name", hostileAt("config", "servers", 1, "tls", "clientCertificates", "caCertificate", "name"), str("../../etc", ".", "..", "a/b")},
		{"config.servers[].tls.clientCertificates.caCertificate.key", hostileAt("config", "servers", 1, "tls", "clientCertificates", "caCertificate", "key"), str("..", ".", "../ca.crt", "a/b")},
		{"config.servers[].tls.clientCertificates.verifyDepth", hostileAt("config", "servers", 1, "tls", "clientCertificates", "verifyDepth"), nums(8, 9)},
		{"config.servers[].ipAccess.allow[]", hostileAt(append(srv0, "ipAccess", "allow", 0)...), str("all", "unix:", "10.0.0.1", "0.0.0.0/0", "::/0", "10.0.0.0/8 1")},
		{"config.servers[].ipAccess.deny[]", hostileAt(append(srv0, "ipAccess", "deny", 0)...), str("all", "unix:", "10.0.0.1", "::/0")},
		{"config.servers[].basicAuth.secretName", hostileAt(append(srv0, "basicAuth", "secretName")...), str("../../etc", ".", "..", "a/b", "Users")},
		{"config.servers[].basicAuth.key", hostileAt(append(srv0, "basicAuth", "key")...), str("..", ".", "../auth", "a/b", ".htpasswd")},
		{"config.servers[].basicAuth.realm", hostileAt(append(srv0, "basicAuth", "realm")...), str("off", "Off", "OFF", `Team "A"`, "Team A")},
		{"config.servers[].rateLimit.requestsPerSecond", hostileAt(append(srv0, "rateLimit", "requestsPerSecond")...), nums(100000, 100001)},
		{"config.servers[].rateLimit.burst", hostileAt(append(srv0, "rateLimit", "burst")...), nums(100000, 100001)},
		{"config.servers[].rateLimit.zoneSizeMiB", hostileAt(append(srv0, "rateLimit", "zoneSizeMiB")...), nums(64, 65)},
		{"config.servers[].locations[].ipAccess.deny[]", hostileAt(loc(0, "ipAccess", "deny", 0)...), str("all", "10.0.0.1")},
		{"config.servers[].locations[].basicAuth.realm", hostileAt(loc(0, "basicAuth", "realm")...), str("off")},
		{"config.servers[].locations[].rateLimit.requestsPerMinute", hostileAt(loc(0, "rateLimit", "requestsPerMinute")...), nums(100000, 100001)},
		{"service.externalTrafficPolicy", hostileAt("service", "externalTrafficPolicy"), shortStr("Local", "Cluster", "local")},
		{"service.loadBalancerSourceRanges[]", hostileAt("service", "loadBalancerSourceRanges", 0), shortStr("203.0.113.9", "0.0.0.0/0", "::/0", "10.0.0.0/33")},
		{"service.loadBalancerClass", hostileAt("service", "loadBalancerClass"), shortStr("example.com/lb", "a/b/c", "-x", "kubernetes.io/x")},
		{"service.sessionAffinity", hostileAt("service", "sessionAffinity"), shortStr("ClientIP", "None", "Cookie")},
		{"service.ipFamilyPolicy", hostileAt("service", "ipFamilyPolicy"), shortStr("SingleStack", "RequireDualStack", "dual")},
		{"service.ipFamilies[]", hostileAt("service", "ipFamilies", 1), shortStr("IPv4", "IPv6", "ipv6")},
		{"content.configMaps[].name", func(spec map[string]any, v any) {
			spec["content"] = map[string]any{"configMaps": []any{map[string]any{"name": v}}}
			delete(spec, "restore")
		}, shortStr("../x", "Site", "a..b")},
		{"content.volumeClaimTemplate.size", hostileAt("content", "volumeClaimTemplate", "size"), shortStr("1t", "-1", "0", "999999999g", "1Ei", "1Gi ", "abc")},
		{"content.volumeClaimTemplate.storageClassName", hostileAt("content", "volumeClaimTemplate", "storageClassName"), shortStr("Standard", strings.Repeat("a", 254))},
		{"content.volumeClaimTemplate.accessModes[]", hostileAt("content", "volumeClaimTemplate", "accessModes", 0), shortStr("ReadWriteMany", "ReadWriteOncePod", "RWO")},
		{"restore.backup", hostileAt("restore", "backup"), shortStr("../x", "Nightly", "-x")},
		{"restore.id", hostileAt("restore", "id"), shortStr("20261122T030000.000000000Z-1a2b3c4", "../../etc/passwd", "x; rm -rf /", "20261122T030000.000000000Z-1a2b3c4d\n")},
		{"service.type", hostileAt("service", "type"), shortStr("ExternalName", "NodePort", "LoadBalancer", "clusterip")},
		{"service.annotations (value)", hostileAt("service", "annotations", "lb.example.com/internal"), shortStr()},
		{"service.annotations (key)", hostileKey("service", "annotations"), shortStr("a/b/c", "kubernetes.io/x")},
		{"podDisruptionBudget.maxUnavailable", hostileAt("podDisruptionBudget", "maxUnavailable"), nums()},
		{"podDisruptionBudget.minAvailable", func(spec map[string]any, v any) {
			spec["podDisruptionBudget"] = map[string]any{"minAvailable": v}
		}, shortStr("50%", "150%", "-1%", "1.5", "abc")},
		{"pod.labels (key)", hostileKey("pod", "labels"), shortStr("a/b/c", "kubernetes.io/x", "-x")},
		{"pod.labels (value)", hostileAt("pod", "labels", "team"), shortStr("-x", "a_b")},
		{"pod.annotations (value)", hostileAt("pod", "annotations", "example.com/owner"), shortStr()},
		{"pod.nodeSelector (value)", hostileAt("pod", "nodeSelector", "kubernetes.io/os"), shortStr("-x")},
		{"pod.priorityClassName", hostileAt("pod", "priorityClassName"), shortStr("system-node-critical", "High")},
	}
}

// hostileStructures break the rules that span fields (CEL, list keys, item
// limits, and the renderer's own cross-field checks).
func hostileStructures() []struct {
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
		{"ports[1].containerPort equal to ports[0]'s", func(s map[string]any) { hostileAt("ports", 1, "containerPort")(s, int64(8080)) }},
		{"two ports named http", func(s map[string]any) { hostileAt("ports", 1, "name")(s, "http") }},
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
			hostileAt(append(srv(1), "port")...)(s, "http")
			hostileAt(append(srv(1), "defaultServer")...)(s, true)
			delete(hostileGet(s, srv(1)...).(map[string]any), "tls")
		}},
		{"port http used with and without TLS", func(s map[string]any) { hostileAt(append(srv(1), "port")...)(s, "http") }},
		{"a location with static and proxy", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 0, "proxy")...)(s, map[string]any{"service": "api", "port": int64(80)})
		}},
		{"a location with no handler", func(s map[string]any) {
			delete(hostileGet(s, append(srv(0), "locations", 0)...).(map[string]any), "static")
		}},
		{"two locations with path /", func(s map[string]any) { hostileAt(append(srv(0), "locations", 1, "path")...)(s, "/") }},
		{"two exact locations with path /old", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 1, "path")...)(s, "/old")
			hostileAt(append(srv(0), "locations", 1, "exact")...)(s, true)
		}},
		{"metrics enabled and a port named metrics", func(s map[string]any) {
			hostileAt("ports", 1, "name")(s, nginx.MetricsPortName)
			hostileAt(append(srv(1), "port")...)(s, nginx.MetricsPortName)
		}},
		{"a server on a port name spec.ports lacks", func(s map[string]any) { hostileAt(append(srv(1), "port")...)(s, "admin") }},
		{"restore without volumeClaimTemplate", func(s map[string]any) { delete(s, "content") }},
		{"configMaps and volumeClaimTemplate together", func(s map[string]any) {
			hostileAt("content", "configMaps")(s, []any{map[string]any{"name": "site"}})
		}},
		{"podDisruptionBudget with minAvailable and maxUnavailable", func(s map[string]any) {
			hostileAt("podDisruptionBudget", "minAvailable")(s, int64(1))
		}},
		{"podDisruptionBudget: {}", func(s map[string]any) { s["podDisruptionBudget"] = map[string]any{} }},
		{"33 servers", func(s map[string]any) {
			s["config"].(map[string]any)["servers"] = manyOf(33, func(i int) any {
				return map[string]any{"port": "http", "serverNames": []any{fmt.Sprintf("s%d.example.com", i)}}
			})
		}},
		{"33 serverNames", func(s map[string]any) {
			hostileAt(append(srv(0), "serverNames")...)(s, manyOf(33, func(i int) any { return fmt.Sprintf("n%d.example.com", i) }))
		}},
		{"serverNames with a duplicate", func(s map[string]any) {
			hostileAt(append(srv(0), "serverNames")...)(s, []any{"example.com", "example.com"})
		}},
		{"65 locations", func(s map[string]any) {
			hostileAt(append(srv(0), "locations")...)(s, manyOf(65, func(i int) any {
				return map[string]any{"path": fmt.Sprintf("/l%d", i), "static": map[string]any{}}
			}))
		}},
		{"33 headers", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 0, "headers")...)(s, manyOf(33, func(i int) any {
				return map[string]any{"name": fmt.Sprintf("X-H%d", i), "value": "v"}
			}))
		}},
		{"two headers named X-A", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 0, "headers")...)(s, []any{
				map[string]any{"name": "X-A", "value": "1"}, map[string]any{"name": "X-A", "value": "2"}})
		}},
		{"accessModes with a duplicate", func(s map[string]any) {
			hostileAt("content", "volumeClaimTemplate", "accessModes")(s, []any{"ReadWriteOnce", "ReadWriteOnce"})
		}},
		{"two configMaps named site", func(s map[string]any) {
			s["content"] = map[string]any{"configMaps": []any{map[string]any{"name": "site"}, map[string]any{"name": "site"}}}
			delete(s, "restore")
		}},
		{"redirectToHTTPS on a server with locations", func(s map[string]any) {
			hostileAt(append(srv(0), "redirectToHTTPS")...)(s, map[string]any{})
		}},
		{"a proxy with a service and backends", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 3, "proxy", "service")...)(s, "api")
		}},
		{"ReplacePrefixMatch on an exact location", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 4, "exact")...)(s, true)
		}},
		{"one request header set and removed", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 1, "requestHeaders", "remove")...)(s, []any{"x-team"})
		}},
		{"requestHeaders on a static location", func(s map[string]any) {
			hostileAt(append(srv(0), "locations", 0, "requestHeaders")...)(s, map[string]any{"set": []any{map[string]any{"name": "X-A", "value": "b"}}})
		}},
		{"9 imagePullSecrets", func(s map[string]any) {
			s["imagePullSecrets"] = manyOf(9, func(i int) any { return map[string]any{"name": fmt.Sprintf("r%d", i)} })
		}},
	}
}

// hostileCorpus is the baseline followed by every field × value and every
// structure, each case distinct.
func hostileCorpus(t *testing.T) []*hostileCase {
	t.Helper()
	spec := hostileBaseSpec()
	base, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		t.Fatal(err)
	}
	var out []*hostileCase
	seen := map[string]bool{}
	add := func(field, show string, s map[string]any) {
		key := field + "\x00" + show
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, &hostileCase{id: len(out), field: field, show: show, spec: s})
	}
	add(hostileBaselineField, "-", runtime.DeepCopyJSON(base))
	for _, f := range hostileFields() {
		for _, v := range f.values {
			s := runtime.DeepCopyJSON(base)
			f.set(s, v)
			add(f.name, hostileShow(v), s)
		}
	}
	for _, st := range hostileStructures() {
		s := runtime.DeepCopyJSON(base)
		st.edit(s)
		add("(structure)", st.show, s)
	}
	return out
}

func hostileShow(v any) string {
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

// ------------------------------------------------------------ one send

const (
	outcomeRefused        = "a refused by the apiserver"
	outcomeRenderConfig   = "b refused by the controller (*nginx.ConfigError)"
	outcomeRenderOther    = "b refused by the controller (other error: retried, not terminal)"
	outcomeRendered       = "c rendered"
	outcomeInfrastructure = "request failed"
	outcomeUndecodable    = "stored, but the operator cannot decode it"
)

type hostileSend struct {
	c    *hostileCase
	path string // hostileBeta or hostileAlpha

	err         string // the test could not complete the send
	undecodable string // stored, but the operator's Go types cannot hold it
	refused     string // outcome a: what the apiserver said
	bypass      string // the stored spec, re-sent as v1beta1, is refused: what the apiserver said
	renderErr   error
	renderPanic string
	config      []byte
	treeDiff    string
	meaning     []string
	nginxRan    bool
	nginxSaid   string // "" when `nginx -t` accepted the file
}

func (s *hostileSend) outcome() string {
	var cfgErr *nginx.ConfigError
	switch {
	case s.err != "":
		return outcomeInfrastructure
	case s.refused != "":
		return outcomeRefused
	case s.undecodable != "":
		return outcomeUndecodable
	case s.renderPanic != "":
		return "renderer panicked"
	case errors.As(s.renderErr, &cfgErr):
		return outcomeRenderConfig
	case s.renderErr != nil:
		return outcomeRenderOther
	default:
		return outcomeRendered
	}
}

// problems are why this send is a failure; none for a, b and a clean c.
func (s *hostileSend) problems() []string {
	var p []string
	if s.err != "" {
		p = append(p, "request failed: "+s.err)
	}
	if s.undecodable != "" {
		p = append(p, "undecodable: stored, and the operator's types cannot decode it: "+s.undecodable)
	}
	if s.bypass != "" {
		p = append(p, "schema bypass: stored, yet refused as v1beta1: "+s.bypass)
	}
	if s.renderPanic != "" {
		p = append(p, "renderer panicked: "+s.renderPanic)
	}
	if s.config != nil {
		if !s.nginxRan {
			p = append(p, "nginx -t did not run")
		} else if s.nginxSaid != "" {
			p = append(p, "nginx -t refused (see the nginx column)")
		}
		if s.treeDiff != "" {
			p = append(p, "parsed tree differs from nginx.Directives: "+s.treeDiff)
		}
		for _, m := range s.meaning {
			p = append(p, "meaning changed: "+m)
		}
	}
	return p
}

// nginxVerdict is how far the stored spec got past the apiserver.
func (s *hostileSend) nginxVerdict() string {
	switch {
	case s.renderPanic != "":
		return "renderer panicked"
	case s.renderErr != nil:
		return "renderer refused: " + s.renderErr.Error()
	case s.config == nil:
		return "-"
	case !s.nginxRan:
		return "rendered; nginx -t did not run"
	case s.nginxSaid != "":
		return "rendered; nginx -t: " + s.nginxSaid
	default:
		return "rendered; nginx -t: ok"
	}
}

// hostileEnv holds what rendering and `nginx -t` need: one directory that
// plays the pod's paths for every file, readable by nginx's unprivileged user.
type hostileEnv struct {
	t     *testing.T
	ns    string
	dir   string
	paths nginx.Paths
	cert  []byte
	key   []byte

	mu      sync.Mutex
	secrets map[string]bool
}

func newHostileEnv(t *testing.T, ns string) *hostileEnv {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := &hostileEnv{t: t, ns: ns, dir: dir, secrets: map[string]bool{}, paths: nginx.Paths{
		Temp: filepath.Join(dir, "tmp"), Content: filepath.Join(dir, "html"),
		TLS: filepath.Join(dir, "tls"), CA: filepath.Join(dir, "ca"), Auth: filepath.Join(dir, "auth"), MimeTypes: filepath.Join(dir, "mime.types"),
	}}
	for _, d := range []string{h.paths.Temp, h.paths.Content, h.paths.TLS, filepath.Join(dir, "conf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// nginx -t creates its temp directories as the unprivileged user.
	if err := os.Chmod(h.paths.Temp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.paths.MimeTypes, []byte("types {\n  text/html html;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if _, h.cert, h.key, err = tools.ServingCert("hostile.example.com"); err != nil {
		t.Fatal(err)
	}
	return h
}

// mountSecret writes tls.crt and tls.key where the pod would mount the
// Secret, for names the kubelet could mount: one path element. For any other
// name nothing is written, and nginx -t reports the missing files.
func (h *hostileEnv) mountSecret(name string) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.secrets[name] {
		return
	}
	h.secrets[name] = true
	d := filepath.Join(h.paths.TLS, name)
	if os.MkdirAll(d, 0o755) != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(d, "tls.crt"), h.cert, 0o644)
	_ = os.WriteFile(filepath.Join(d, "tls.key"), h.key, 0o644)
}

// mountCA writes a CA certificate where the pod would mount ref's key, for
// names and keys the kubelet could mount: one path element each.
func (h *hostileEnv) mountCA(ref v1beta1.CACertificateRef) {
	for _, part := range []string{ref.Name, ref.Key} {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "/\x00") {
			return
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	file := h.paths.CAFile(ref)
	if os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	_ = os.WriteFile(file, h.cert, 0o644)
}

func (h *hostileEnv) renderOptions() nginx.RenderOptions {
	return nginx.RenderOptions{Paths: h.paths, Namespace: h.ns,
		UpstreamHost: func(service, namespace string) string { return "127.0.0.1" }}
}

var hostileBetaGVK = v1beta1.GroupVersion.WithKind("NginxOperator")

// send creates the case through its path, reads the stored object back as
// v1beta1, re-checks a v1alpha1-stored spec against v1beta1 admission, and
// renders it.
func (h *hostileEnv) send(ctx context.Context, c client.Client, s *hostileSend) {
	name := fmt.Sprintf("hostile-%04d-%s", s.c.id, s.path)
	var obj *unstructured.Unstructured
	if s.path == hostileBeta {
		obj = hostileV1beta1Object(name, h.ns, runtime.DeepCopyJSON(s.c.spec))
	} else {
		var err error
		if obj, err = hostileV1alpha1Object(name, h.ns, runtime.DeepCopyJSON(s.c.spec)); err != nil {
			s.err = err.Error()
			return
		}
	}
	if err := c.Create(ctx, obj); err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			s.refused = err.Error()
		} else {
			s.err = "create: " + err.Error()
		}
		return
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(hostileBetaGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: name}, stored); err != nil {
		s.err = "reading back as v1beta1: " + err.Error()
		return
	}
	storedSpec, _ := stored.Object["spec"].(map[string]any)
	if storedSpec == nil {
		storedSpec = map[string]any{}
	}
	if s.path == hostileAlpha {
		recheck := hostileV1beta1Object(name+"-recheck", h.ns, runtime.DeepCopyJSON(storedSpec))
		if err := c.Create(ctx, recheck, client.DryRunAll); err != nil {
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				s.err = "dry-run re-check: " + err.Error()
				return
			}
			s.bypass = err.Error()
		}
	}
	var spec v1beta1.NginxOperatorSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(storedSpec, &spec); err != nil {
		// The operator's informer decodes into these types: one such
		// object stalls the controller's list and watch.
		s.undecodable = err.Error()
		return
	}
	h.render(s, &spec)
}

func (h *hostileEnv) render(s *hostileSend, spec *v1beta1.NginxOperatorSpec) {
	defer func() {
		if r := recover(); r != nil {
			s.renderPanic = fmt.Sprint(r)
			s.config = nil
		}
	}()
	// The controller renders the object as validation.NginxOperator returns
	// it, and degrades it (InvalidConfig) when that refuses it.
	obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "hostile", Namespace: h.ns}, Spec: *spec}
	admitted, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		s.renderErr = k8sutil.InvalidSpec(nginx.ReasonInvalidConfig, "%v", errs.ToAggregate())
		return
	}
	spec = &admitted.Spec
	opts := h.renderOptions()
	opts.IPv6 = slices.Contains(spec.Service.IPFamilies, corev1.IPv6Protocol)
	config, err := nginx.Render(spec, opts)
	if err != nil {
		s.renderErr = err
		return
	}
	s.config = config
	for _, name := range nginx.TLSSecrets(spec) {
		h.mountSecret(name)
	}
	for _, ref := range nginx.CACertificates(spec) {
		h.mountCA(ref)
	}
	want, err := nginx.Directives(spec, opts)
	if err != nil {
		s.treeDiff = "nginx.Directives failed after Render succeeded: " + err.Error()
		return
	}
	got, err := conf.Parse(config)
	if err != nil {
		s.treeDiff = "the rendered file does not parse: " + err.Error()
		return
	}
	argsOnly := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Args" }, cmpopts.EquateEmpty())
	if diff := cmp.Diff(want, got, argsOnly); diff != "" {
		s.treeDiff = "(-directives +parsed)\n" + diff
	}
	s.meaning = hostileMeaning(got)
}

func hostileV1beta1Object(name, ns string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(), "kind": "NginxOperator",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// hostileV1alpha1Object is spec as a v1alpha1 client would send it: port,
// replicas and forceRedeploy in v1alpha1's fields, everything else in the
// v1beta1-spec annotation (the format conversion.ToV1alpha1 writes).
func hostileV1alpha1Object(name, ns string, spec map[string]any) (*unstructured.Unstructured, error) {
	alpha := map[string]any{}
	if r, ok := spec["replicas"]; ok {
		alpha["replicas"] = r
		delete(spec, "replicas")
	}
	if f, ok := spec["forceRedeploy"]; ok {
		if f != "" {
			alpha["forceRedeploy"] = f
		}
		delete(spec, "forceRedeploy")
	}
	if ports, ok := spec["ports"].([]any); ok && len(ports) > 0 {
		if first, ok := ports[0].(map[string]any); ok {
			if p, ok := first["containerPort"]; ok {
				alpha["port"] = p
				delete(first, "containerPort")
			}
		}
	}
	meta := map[string]any{"name": name, "namespace": ns}
	if len(spec) > 0 {
		b, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		meta["annotations"] = map[string]any{conversion.AnnotationSpec: string(b)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "NginxOperator",
		"metadata": meta, "spec": alpha,
	}}, nil
}

// hostileMeaning checks, on the tree nginx reads, that the user's servers
// mean what the spec's fields say. `nginx -t` and the tree comparison cannot
// see these: a location "~^/x" or a header "$http_cookie" is one valid
// argument, and nginx gives it another meaning (a regex, a variable).
func hostileMeaning(dirs []conf.Directive) []string {
	var out []string
	for _, top := range dirs {
		if top.Name != "http" {
			continue
		}
		for _, srv := range top.Block {
			if srv.Name != "server" || hostileOperatorServer(srv) {
				continue
			}
			out = append(out, hostileServerMeaning(srv)...)
		}
	}
	return out
}

// hostileOperatorServer reports the operator's own servers: health and
// stub_status.
func hostileOperatorServer(srv conf.Directive) bool {
	for _, d := range srv.Block {
		if d.Name == "listen" && len(d.Args) > 0 &&
			(d.Args[0] == strconv.Itoa(v1beta1.HealthPort) || d.Args[0] == "127.0.0.1:"+strconv.Itoa(v1beta1.StubStatusPort)) {
			return true
		}
	}
	return false
}

func hostileServerMeaning(srv conf.Directive) []string {
	out := hostileAuthMeaning(srv)
	for _, d := range srv.Block {
		switch d.Name {
		case "listen":
			port, err := strconv.Atoi(strings.TrimPrefix(d.Args[0], "[::]:"))
			switch {
			case err != nil:
				out = append(out, fmt.Sprintf("listen %q is not a port", d.Args[0]))
			case port < 1024 || port > 65535:
				out = append(out, fmt.Sprintf("listen %d: not a port an unprivileged nginx can use", port))
			case hostileReservedPorts[port]:
				out = append(out, fmt.Sprintf("listen %d: a port the operator reserves", port))
			}
		case "server_name":
			for _, n := range d.Args {
				if strings.HasPrefix(n, "~") || strings.Contains(n, "$") {
					out = append(out, fmt.Sprintf("server_name %q is a regex or a variable", n))
				}
			}
		case "return":
			out = append(out, hostileReturnMeaning(d)...)
		case "location":
			out = append(out, hostileLocationMeaning(d)...)
		case "allow", "deny":
			out = append(out, hostileAccessMeaning(d)...)
		default:
			// auth_basic's realm and the file paths are complex values:
			// nginx would expand a variable in them.
			for _, a := range d.Args {
				for _, v := range hostileForeignVariables(a) {
					out = append(out, fmt.Sprintf("%s argument %q expands %s, a variable the renderer does not write", d.Name, a, v))
				}
			}
		}
	}
	return out
}

// hostileAuthMeaning: the renderer writes "auth_basic off" only to turn a
// server's authentication off, never with a password file; a realm nginx
// reads as "off" would leave one behind, unused.
func hostileAuthMeaning(block conf.Directive) []string {
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

// hostileAccessMeaning: allow and deny take one CIDR (or the renderer's
// "deny all"); nginx also reads a bare address, "all" and "unix:".
func hostileAccessMeaning(d conf.Directive) []string {
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

var hostileRedirectCodes = map[string]bool{"301": true, "302": true, "303": true, "307": true, "308": true}

var (
	// hostileVariable finds nginx variable references, $name and ${name}.
	hostileVariable = regexp.MustCompile(`\$(\{[^}]*\}?|[A-Za-z0-9_]+)`)
	// hostileOperatorVariables are the variables the renderer itself
	// writes into arguments; a user value may expand none.
	hostileOperatorVariables = regexp.MustCompile(`^\$(host|uri|request_uri|is_args|args|remote_addr|http_upgrade|` +
		`connection_upgrade|host_with_port|forwarded_(for|proto|host|port|port_suffix)|` +
		`redirect_path_s[0-9]+_l[0-9]+|request_header_s[0-9]+_l[0-9]+_[0-9]+|1)$`)
	// hostileErrorPageLocation is the renderer's named location of an error page.
	hostileErrorPageLocation = regexp.MustCompile(`^@error_page_[0-9]+_[0-9]+$`)
	// hostileRewrite is the shape of every rewrite regex the renderer
	// writes: anything, or a literal prefix quoted by \Q...\E (which only a
	// backslash in the prefix could end early) and maybe the rest of the path.
	hostileRewrite = regexp.MustCompile(`^\^(\\Q[^\\]*\\E)?(\(/\.\*\))?\$?$`)
)

// hostileForeignVariables are the variables in arg the renderer does not write.
func hostileForeignVariables(arg string) []string {
	var out []string
	for _, v := range hostileVariable.FindAllString(arg, -1) {
		if !hostileOperatorVariables.MatchString(v) {
			out = append(out, v)
		}
	}
	return out
}

func hostileReturnMeaning(d conf.Directive) []string {
	var out []string
	if len(d.Args) > 0 && !hostileRedirectCodes[d.Args[0]] {
		out = append(out, fmt.Sprintf("return %q is not a redirect", d.Args[0]))
	}
	if len(d.Args) > 1 && !strings.HasPrefix(d.Args[1], "http://") && !strings.HasPrefix(d.Args[1], "https://") && !strings.HasPrefix(d.Args[1], "$forwarded_proto://") {
		out = append(out, fmt.Sprintf("return %q is not an absolute http(s) URL", d.Args[1]))
	}
	return out
}

func hostileLocationMeaning(loc conf.Directive) []string {
	out := hostileAuthMeaning(loc)
	args := loc.Args
	plain := len(args) == 1 && strings.HasPrefix(args[0], "/") ||
		len(args) == 2 && args[0] == "=" && strings.HasPrefix(args[1], "/") ||
		len(args) == 1 && hostileErrorPageLocation.MatchString(args[0])
	if !plain {
		out = append(out, fmt.Sprintf("location %q is not a URI prefix or an exact URI (nginx reads a modifier, regex or name)", args))
	}
	for _, d := range loc.Block {
		switch d.Name {
		case "add_header":
			// Values are literal: not even the renderer's variables.
			for _, a := range d.Args {
				if strings.Contains(a, "$") {
					out = append(out, fmt.Sprintf("add_header argument %q expands nginx variables", a))
				}
			}
			continue
		case "return":
			out = append(out, hostileReturnMeaning(d)...)
		case "rewrite":
			if len(d.Args) != 3 || !hostileRewrite.MatchString(d.Args[0]) || d.Args[2] != "break" {
				out = append(out, fmt.Sprintf("rewrite %q is not a literal prefix or full-path rewrite", d.Args))
			}
		case "allow", "deny":
			out = append(out, hostileAccessMeaning(d)...)
		case "try_files":
			if n := len(d.Args); n > 0 && !strings.HasPrefix(d.Args[n-1], "/") && d.Args[n-1] != "=404" {
				out = append(out, fmt.Sprintf("try_files falls back to %q, not a file of the content", d.Args[n-1]))
			}
		}
		for _, a := range d.Args {
			for _, v := range hostileForeignVariables(a) {
				out = append(out, fmt.Sprintf("%s argument %q expands %s, a variable the renderer does not write", d.Name, a, v))
			}
		}
	}
	return out
}

// nginxTest runs the real `nginx -t` on config and returns what nginx said
// when it refused the file ("" when it accepted it). As root it runs as
// nobody, as in the pod: an unprivileged user cannot bind ports below 1024.
func (h *hostileEnv) nginxTest(bin string, config []byte) string {
	sum := sha256.Sum256(config)
	file := filepath.Join(h.dir, "conf", hex.EncodeToString(sum[:8])+".conf")
	if err := os.WriteFile(file, config, 0o644); err != nil {
		return "writing the file: " + err.Error()
	}
	cmd := exec.Command(bin, tools.NginxArgs(h.dir, file, "-t", "-q")...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	// The rendered access_log is /dev/stdout, which nginx opens by name: as
	// nobody it can open /dev/null, not a pipe the test owns. What nginx says
	// goes to stderr.
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err.Error()
	}
	defer devNull.Close()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	if err = cmd.Run(); err == nil {
		return ""
	}
	var said []string
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.Contains(line, "test failed") {
			line = hostileNginxPreamble.ReplaceAllString(strings.TrimPrefix(line, "nginx: "), "$1 ")
			line = strings.ReplaceAll(line, " in "+file+":", " at line ")
			said = append(said, strings.ReplaceAll(line, h.dir, "<dir>"))
		}
	}
	if len(said) == 0 {
		return err.Error()
	}
	return strings.Join(said, " | ")
}

// ------------------------------------------------------------ reporting

func hostilePool(workers, n int, work func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				work(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

func hostileSummary(sends []*hostileSend) string {
	counts := map[string]map[string]int{}
	failing := map[string]int{}
	kinds := map[string]map[string]int{}
	var outcomes []string
	for _, s := range sends {
		o := s.outcome()
		if counts[o] == nil {
			counts[o] = map[string]int{}
			outcomes = append(outcomes, o)
		}
		counts[o][s.path]++
		if p := s.problems(); len(p) > 0 {
			failing[s.path]++
			for _, k := range p {
				k, _, _ = strings.Cut(k, ":")
				if kinds[k] == nil {
					kinds[k] = map[string]int{}
				}
				kinds[k][s.path]++
			}
		}
	}
	sort.Strings(outcomes)
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "outcome\t%s\t%s\n", hostileBeta, hostileAlpha)
	for _, o := range outcomes {
		fmt.Fprintf(w, "%s\t%d\t%d\n", o, counts[o][hostileBeta], counts[o][hostileAlpha])
	}
	fmt.Fprintf(w, "FAILING (any outcome)\t%d\t%d\n", failing[hostileBeta], failing[hostileAlpha])
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Fprintf(w, "  of which %s\t%d\t%d\n", k, kinds[k][hostileBeta], kinds[k][hostileAlpha])
	}
	_ = w.Flush()
	return b.String()
}

// hostileSeverity orders the failure table: what reached nginx wrongly
// first, then what breaks the operator, then bypasses nginx did not mind.
func hostileSeverity(s *hostileSend) int {
	switch {
	case s.treeDiff != "":
		return 0
	case s.config != nil && s.nginxSaid != "":
		return 1
	case len(s.meaning) > 0:
		return 2
	case s.undecodable != "" || s.renderPanic != "" || s.err != "":
		return 3
	default:
		return 4
	}
}

// hostileFailureTable is one line per failing send: the case, the path, what
// the renderer and nginx made of the stored spec, and the problems.
func hostileFailureTable(failing []*hostileSend) string {
	sort.SliceStable(failing, func(i, j int) bool {
		a, b := failing[i], failing[j]
		if a.path != b.path {
			return a.path == hostileBeta // the v1beta1 path's failures first: they are renderer gaps
		}
		if sa, sb := hostileSeverity(a), hostileSeverity(b); sa != sb {
			return sa < sb
		}
		return a.c.id < b.c.id
	})
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tpath\tfield\tvalue\tnginx\tproblems")
	for _, s := range failing {
		var short []string
		for _, p := range s.problems() {
			short = append(short, hostileOneLine(p, 200))
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", s.c.id, s.path, s.c.field, s.c.show,
			hostileOneLine(s.nginxVerdict(), 130), strings.Join(short, " ; "))
	}
	_ = w.Flush()
	return b.String()
}

// nginx's "2026/11/23 15:37:04 [emerg] 13250#13250: " before each message.
var hostileNginxPreamble = regexp.MustCompile(`^[0-9/]+ [0-9:]+ (\[[a-z]+\]) [0-9]+#[0-9]+: `)

var hostileInvalidPreamble = regexp.MustCompile(`NginxOperator\.nginx\.operator\.dev "[^"]*" is invalid: `)

// hostileOneLine fits a message on one table line: the apiserver's preamble
// dropped, newlines and tabs shown as escapes, long messages cut.
func hostileOneLine(s string, limit int) string {
	s = hostileInvalidPreamble.ReplaceAllString(s, "")
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}
