package validation_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// ruleRemoval names one rule of the shipped v1beta1 CRD by where it sits in
// the schema and what it is, and a spec only that rule refuses (or, for a
// default, a spec that leaves the field out).
type ruleRemoval struct {
	name string
	// path from the root schema: property names, and "items" for a list's
	// element schema.
	path   []string
	remove func(*apiextensionsv1.JSONSchemaProps)
	// breaks makes the valid base object break only the rule.
	breaks func(*v1beta1.NginxOperator)
	// rendered is what the configuration (or, for annotations, the pod
	// template or the Service; see built) holds once the rule is gone: the
	// value itself, passed through as the user wrote it.
	rendered string
}

func pattern(p *apiextensionsv1.JSONSchemaProps)   { p.Pattern = "" }
func minimum(p *apiextensionsv1.JSONSchemaProps)   { p.Minimum = nil }
func maximum(p *apiextensionsv1.JSONSchemaProps)   { p.Maximum = nil }
func enum(p *apiextensionsv1.JSONSchemaProps)      { p.Enum = nil }
func maxLength(p *apiextensionsv1.JSONSchemaProps) { p.MaxLength = nil }
func noDefault(p *apiextensionsv1.JSONSchemaProps) { p.Default = nil }

// celRule removes the CEL rules whose message contains message.
func celRule(message string) func(*apiextensionsv1.JSONSchemaProps) {
	return func(p *apiextensionsv1.JSONSchemaProps) {
		var kept apiextensionsv1.ValidationRules
		for _, r := range p.XValidations {
			if !strings.Contains(r.Message, message) {
				kept = append(kept, r)
			}
		}
		p.XValidations = kept
	}
}

var (
	specPath     = []string{"properties", "spec"}
	configPath   = at(specPath, "config")
	serverPath   = at(configPath, "servers", "items")
	locationPath = at(serverPath, "locations", "items")
)

func at(base []string, more ...string) []string {
	return append(append([]string{}, base...), more...)
}

func location(o *v1beta1.NginxOperator) *v1beta1.Location {
	return &o.Spec.Config.Servers[0].Locations[0]
}

// The CRD is the one source of every value rule and default of the
// NginxOperator spec: removed from the CRD, a rule is enforced nowhere else
// (not by the controller's validation, not by the renderer), and a default
// is restated nowhere. Each case first shows that the shipped CRD holds the
// rule, then removes only that rule and renders what it used to refuse.
func TestARuleRemovedFromTheCRDIsEnforcedNowhereElse(t *testing.T) {
	proxy := func(o *v1beta1.NginxOperator) *v1beta1.ProxyLocation {
		location(o).Static, location(o).Proxy = nil, &v1beta1.ProxyLocation{Service: "api", Port: 80}
		return location(o).Proxy
	}
	redirect := func(o *v1beta1.NginxOperator) *v1beta1.RedirectLocation {
		location(o).Static, location(o).Redirect = nil, &v1beta1.RedirectLocation{URL: "https://example.com/"}
		return location(o).Redirect
	}
	cases := []ruleRemoval{
		{"containerPort minimum", at(specPath, "ports", "items", "containerPort"), minimum,
			func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].ContainerPort = 80 }, "listen 80;"},
		{"reserved ports", at(specPath, "ports", "items"), celRule("reserved by the operator"),
			func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].ContainerPort = layout.StubStatusPort }, "listen 18081;"},
		{"servers on declared ports", specPath, celRule("must be the name of one of spec.ports"),
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Port = "other" }, "listen 0;"},
		{"port named metrics", specPath, celRule("the port name metrics"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Metrics.Enabled = true
				o.Spec.Ports[0].Name, o.Spec.Config.Servers[0].Port = "metrics", "metrics"
			}, "stub_status"},
		{"one TLS mode per port", configPath, celRule("must all use TLS or all not"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Config.Servers = append(o.Spec.Config.Servers, v1beta1.Server{Port: "http", ServerNames: []string{"b.example"}, TLS: &v1beta1.TLS{SecretName: "b-tls"}})
			}, "listen 8080 ssl http2;"},
		{"one default server per port", configPath, celRule("only one server with defaultServer"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Config.Servers[0].DefaultServer = true
				o.Spec.Config.Servers = append(o.Spec.Config.Servers, v1beta1.Server{Port: "http", ServerNames: []string{"b.example"}, DefaultServer: true})
			}, "server_name b.example;"},
		{"workerConnections minimum", at(configPath, "workerConnections"), minimum,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.WorkerConnections = 1 }, "worker_connections 1;"},
		{"workerConnections default", at(configPath, "workerConnections"), noDefault,
			func(*v1beta1.NginxOperator) {}, "worker_connections 0;"},
		{"clientMaxBodySize pattern", at(configPath, "clientMaxBodySize"), pattern,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.ClientMaxBodySize = "1t" }, "client_max_body_size 1t;"},
		{"clientMaxBodySize default", at(configPath, "clientMaxBodySize"), noDefault,
			func(*v1beta1.NginxOperator) {}, "client_max_body_size \"\";"},
		{"keepaliveTimeoutSeconds maximum", at(configPath, "keepaliveTimeoutSeconds"), maximum,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.KeepaliveTimeoutSeconds = 5000 }, "keepalive_timeout 5000;"},
		{"keepaliveTimeoutSeconds default", at(configPath, "keepaliveTimeoutSeconds"), noDefault,
			func(*v1beta1.NginxOperator) {}, "keepalive_timeout 0;"},
		{"serverNames pattern", at(serverPath, "serverNames", "items"), pattern,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].ServerNames = []string{"Example.COM"} }, "server_name Example.COM;"},
		{"TLS Secret name pattern", at(serverPath, "tls", "secretName"), pattern,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].TLS = &v1beta1.TLS{SecretName: "Web_TLS"} }, "/tls_Web_TLS_tls.crt;"},
		{"location path rule", locationPath, celRule("path must start with '/'"),
			func(o *v1beta1.NginxOperator) { location(o).Path = "@internal" }, "location @internal {"},
		{"one handler per location", locationPath, celRule("exactly one of static, proxy, redirect or respond"),
			func(o *v1beta1.NginxOperator) { location(o).Static = nil }, "location / {}"},
		{"proxy Service pattern", at(locationPath, "proxy", "service"), pattern,
			func(o *v1beta1.NginxOperator) { proxy(o).Service = "API" }, "server API.team-a.svc:80;"},
		{"proxy port maximum", at(locationPath, "proxy", "port"), maximum,
			func(o *v1beta1.NginxOperator) { proxy(o).Port = 65536 }, "server api.team-a.svc:65536;"},
		{"proxy read timeout default", at(locationPath, "proxy", "readTimeoutSeconds"), noDefault,
			func(o *v1beta1.NginxOperator) { proxy(o) }, "proxy_read_timeout 0s;"},
		{"proxy read timeout minimum", at(locationPath, "proxy", "readTimeoutSeconds"), minimum,
			func(o *v1beta1.NginxOperator) { proxy(o).ReadTimeoutSeconds = -1 }, "proxy_read_timeout -1s;"},
		{"proxy connect timeout default", at(locationPath, "proxy", "connectTimeoutSeconds"), noDefault,
			func(o *v1beta1.NginxOperator) { proxy(o) }, "proxy_connect_timeout 0s;"},
		{"proxy connect timeout maximum", at(locationPath, "proxy", "connectTimeoutSeconds"), maximum,
			func(o *v1beta1.NginxOperator) { proxy(o).ConnectTimeoutSeconds = 600 }, "proxy_connect_timeout 600s;"},
		{"proxy send timeout default", at(locationPath, "proxy", "sendTimeoutSeconds"), noDefault,
			func(o *v1beta1.NginxOperator) { proxy(o) }, "proxy_send_timeout 0s;"},
		{"backend weight default", at(locationPath, "proxy", "backends", "items", "weight"), noDefault,
			func(o *v1beta1.NginxOperator) {
				p := proxy(o)
				p.Service, p.Port = "", 0
				p.Backends = []v1beta1.Backend{{Service: "a", Port: 80, Weight: ptr.To[int32](2)}, {Service: "b", Port: 80}}
			}, "server a.team-a.svc:80 weight=2;\n        keepalive"},
		{"header buffer maximum", at(locationPath, "proxy", "buffering", "headerBufferKiB"), maximum,
			func(o *v1beta1.NginxOperator) {
				proxy(o).Buffering = &v1beta1.ProxyBuffering{HeaderBufferKiB: 2048, Buffers: 256, BufferKiB: 1024}
			}, "proxy_buffer_size 2048k;"},
		{"buffers fit nginx's busy rule", at(locationPath, "proxy", "buffering"), celRule("must be less than (buffers - 1) * bufferKiB"),
			func(o *v1beta1.NginxOperator) {
				proxy(o).Buffering = &v1beta1.ProxyBuffering{HeaderBufferKiB: 64, Buffers: 2, BufferKiB: 4}
			}, "proxy_buffers 2 4k;"},
		{"backend CA key default", at(locationPath, "proxy", "tls", "caCertificate", "key"), noDefault,
			func(o *v1beta1.NginxOperator) {
				proxy(o).TLS = &v1beta1.BackendTLS{CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "ca"}}
			}, "proxy_ssl_trusted_certificate /etc/nginx/files/ca-secret_ca_;"},
		{"rewrite path pattern", at(locationPath, "proxy", "urlRewrite", "path", "replaceFullPath"), pattern,
			func(o *v1beta1.NginxOperator) {
				proxy(o).URLRewrite = &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/a?b")}}
			}, "rewrite ^ /a?b break;"},
		{"request header add names", locationPath, celRule("requestHeaders.add names"),
			func(o *v1beta1.NginxOperator) {
				proxy(o)
				location(o).RequestHeaders = &v1beta1.HeaderModifier{Add: []v1beta1.Header{{Name: "X_Y", Value: "v"}}}
			}, "map $http_x_y $request_header_s0_l0_0"},
		{"headers nginx manages", at(locationPath, "requestHeaders"), celRule("are nginx's to manage"),
			func(o *v1beta1.NginxOperator) {
				proxy(o)
				location(o).RequestHeaders = &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "Host", Value: "evil.example"}}}
			}, "proxy_set_header Host evil.example;"},
		{"static fallback pattern", at(locationPath, "static", "fallback"), pattern,
			func(o *v1beta1.NginxOperator) { location(o).Static.Fallback = "@named" }, "try_files $uri $uri/ @named;"},
		{"expires pattern", at(locationPath, "expires"), pattern,
			func(o *v1beta1.NginxOperator) { location(o).Expires = "-1" }, "expires -1;"},
		{"https redirect code default", at(serverPath, "redirectToHTTPS", "code"), noDefault,
			func(o *v1beta1.NginxOperator) {
				o.Spec.Config.Servers[0].Locations = nil
				o.Spec.Config.Servers[0].RedirectToHTTPS = &v1beta1.HTTPSRedirect{}
			}, "return 0 https://$host$request_uri;"},
		{"error page codes", at(serverPath, "errorPages", "items", "codes"), celRule("codes must be from 400 to 599"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Config.Servers[0].ErrorPages = []v1beta1.ErrorPage{{Codes: []int32{200}, Path: "/ok.html"}}
			}, "error_page 200 @error_page_0_0;"},
		{"trusted proxies are CIDRs", at(configPath, "trustedProxies"), celRule("must be a CIDR"),
			func(o *v1beta1.NginxOperator) { o.Spec.Config.TrustedProxies = []string{"0.0.0.0"} }, "0.0.0.0 1;"},
		{"redirect URL pattern", at(locationPath, "redirect", "url"), pattern,
			func(o *v1beta1.NginxOperator) { redirect(o).URL = "ftp://example.com/" }, "return 302 ftp://example.com/;"},
		{"redirect code enum", at(locationPath, "redirect", "code"), enum,
			func(o *v1beta1.NginxOperator) { redirect(o).Code = 200 }, "return 200 https://example.com/;"},
		{"redirect code default", at(locationPath, "redirect", "code"), noDefault,
			func(o *v1beta1.NginxOperator) { redirect(o) }, "return 0 https://example.com/;"},
		{"header name pattern", at(locationPath, "headers", "items", "name"), pattern,
			func(o *v1beta1.NginxOperator) { location(o).Headers = []v1beta1.Header{{Name: "X(Y)", Value: "v"}} }, "add_header X(Y) v always;"},
		{"header value length", at(locationPath, "headers", "items", "value"), maxLength,
			func(o *v1beta1.NginxOperator) {
				location(o).Headers = []v1beta1.Header{{Name: "X", Value: strings.Repeat("v", 2000)}}
			}, "add_header X " + strings.Repeat("v", 2000) + " always;"},
	}
	cases = append(cases,
		ruleRemoval{"reserved pod annotation keys", at(specPath, "pod", "annotations"), celRule("reserved for the operator"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Pod.Annotations = map[string]string{"nginx.operator.dev/mine": "x"}
			}, "pod annotation nginx.operator.dev/mine=x"},
		ruleRemoval{"reserved Service annotation keys", at(specPath, "service", "annotations"), celRule("reserved for the operator"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Service.Annotations = map[string]string{"nginx.operator.dev/mine": "x"}
			}, "service annotation nginx.operator.dev/mine=x"},
	)
	cases = append(cases, protocolRules()...)
	cases = append(cases, embeddedRules()...)
	ctx := context.Background()
	base := func() *v1beta1.NginxOperator {
		return &v1beta1.NginxOperator{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
			Spec: v1beta1.NginxOperatorSpec{
				Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
				Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http",
					Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}}}},
			},
		}
	}
	shipped := compileShipped(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case compiles a schema of its own
			obj := base()
			tc.breaks(obj)
			admitted, errs := validation.NginxOperatorBy(ctx, shipped, obj)
			if len(errs) == 0 && strings.Contains(built(t, admitted), tc.rendered) {
				t.Fatalf("the shipped CRD neither refuses the object nor changes what is rendered: the case does not test %s", tc.name)
			}
			admitted, errs = validation.NginxOperatorBy(ctx, compileWithout(t, shipped, tc.path, tc.remove), obj)
			if len(errs) > 0 {
				t.Fatalf("without the rule in the CRD, validation still refuses: %v", errs.ToAggregate())
			}
			if got := built(t, admitted); !strings.Contains(got, tc.rendered) {
				t.Errorf("without the rule in the CRD, the configuration lacks %q:\n%s", tc.rendered, got)
			}
		})
	}
}

// The endpoint defaults of NginxMonitor live in the CRD only: without the
// interval's default, the scrape configuration has no interval of its own.
func TestAMonitorDefaultRemovedFromTheCRDIsRestatedNowhere(t *testing.T) {
	ctx := context.Background()
	obj := &v1beta1.NginxMonitor{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "team-a"}}
	sel := monitor.NewSelection([]monitor.Instance{{Namespace: "team-a", Name: "www", MetricsEnabled: true}})
	build := func(s *validation.Schema) string {
		t.Helper()
		admitted, errs := validation.Admit(ctx, s, "NginxMonitor", obj)
		if len(errs) > 0 {
			t.Fatal(errs.ToAggregate())
		}
		out, err := monitor.Build(admitted, sel, monitor.Credentials{}, monitor.Options{})
		if err != nil {
			return err.Error()
		}
		return string(out)
	}
	props, err := validation.ShippedSchema("NginxMonitor", "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := validation.Compile(props)
	if err != nil {
		t.Fatal(err)
	}
	if got := build(shipped); !strings.Contains(got, "scrape_interval: 30s") {
		t.Fatalf("with the shipped CRD, the scrape configuration lacks the default interval:\n%s", got)
	}
	editSchema(t, props, []string{"properties", "spec", "properties", "endpoint", "properties", "interval"}, noDefault)
	modified, err := validation.Compile(props)
	if err != nil {
		t.Fatal(err)
	}
	if got := build(modified); strings.Contains(got, "30s") {
		t.Errorf("without the CRD's default, the scrape configuration still has a 30s interval:\n%s", got)
	}
}

// shippedProps is the shipped NginxOperator v1beta1 schema, decoded once:
// each case edits a copy of its own.
var shippedProps = sync.OnceValues(func() (*apiextensionsv1.JSONSchemaProps, error) {
	return validation.ShippedSchema("NginxOperator", "v1beta1")
})

// compileShipped compiles the shipped NginxOperator schema.
func compileShipped(t *testing.T) *validation.Schema {
	t.Helper()
	props, err := shippedProps()
	if err != nil {
		t.Fatal(err)
	}
	s, err := validation.Compile(props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// compileWithout compiles the shipped NginxOperator schema with remove
// applied to the node at path. A removal that leaves the node's CEL rules as
// they were keeps those of shipped, compiled once, rather than compiling
// every rule again.
func compileWithout(t *testing.T, shipped *validation.Schema, path []string, remove func(*apiextensionsv1.JSONSchemaProps)) *validation.Schema {
	t.Helper()
	decoded, err := shippedProps()
	if err != nil {
		t.Fatal(err)
	}
	props := decoded.DeepCopy()
	var schemaPath []string
	for _, p := range path {
		if p == "items" || p == "properties" {
			schemaPath = append(schemaPath, p)
			continue
		}
		if n := len(schemaPath); n == 0 || schemaPath[n-1] != "properties" {
			schemaPath = append(schemaPath, "properties")
		}
		schemaPath = append(schemaPath, p)
	}
	rulesRemoved := false
	editSchema(t, props, schemaPath, func(p *apiextensionsv1.JSONSchemaProps) {
		before := len(p.XValidations)
		remove(p)
		rulesRemoved = len(p.XValidations) != before
	})
	compile := validation.Compile
	if !rulesRemoved {
		compile = func(props *apiextensionsv1.JSONSchemaProps) (*validation.Schema, error) {
			return validation.CompileKeepingRulesOf(shipped, props)
		}
	}
	s, err := compile(props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// editSchema applies edit to the schema node at path ("properties", name,
// "items", ...), failing when the path leads nowhere.
func editSchema(t *testing.T, props *apiextensionsv1.JSONSchemaProps, path []string, edit func(*apiextensionsv1.JSONSchemaProps)) {
	t.Helper()
	switch {
	case len(path) == 0:
		edit(props)
	case path[0] == "items":
		if props.Items == nil || props.Items.Schema == nil {
			t.Fatalf("no list items at %v", path)
		}
		editSchema(t, props.Items.Schema, path[1:], edit)
	case path[0] == "properties" && len(path) > 1:
		child, ok := props.Properties[path[1]]
		if !ok {
			t.Fatalf("no property %q in the schema", path[1])
		}
		editSchema(t, &child, path[2:], edit)
		props.Properties[path[1]] = child
	default:
		t.Fatalf("bad schema path %v", path)
	}
}

// built is what obj becomes: its nginx.conf, then the annotations of its
// pod template and of its Service, one "pod annotation k=v" or "service
// annotation k=v" line each.
func built(t *testing.T, obj *v1beta1.NginxOperator) string {
	t.Helper()
	out := renderConfig(t, obj)
	for k, v := range nginx.StatefulSet(obj, nginx.Materials{}).Spec.Template.Annotations {
		out += "\npod annotation " + k + "=" + v
	}
	for k, v := range nginx.Service(obj, serviceport.Resolve(&obj.Spec, serviceport.Standard)).Annotations {
		out += "\nservice annotation " + k + "=" + v
	}
	return out + "\n" + children(t, obj)
}

// children is what the StatefulSet and the NetworkPolicy take from the
// embedded Kubernetes types of obj, as JSON: "pod {...}" and
// "networkPolicy [...]".
func children(t *testing.T, obj *v1beta1.NginxOperator) string {
	t.Helper()
	sts := nginx.StatefulSet(obj, nginx.Materials{})
	pod := sts.Spec.Template.Spec
	var resources []corev1.ResourceRequirements
	for _, c := range pod.Containers {
		resources = append(resources, c.Resources)
	}
	b, err := json.Marshal(map[string]any{"tolerations": pod.Tolerations, "affinity": pod.Affinity,
		"topologySpreadConstraints": pod.TopologySpreadConstraints, "resources": resources,
		"volumeClaimTemplates": sts.Spec.VolumeClaimTemplates})
	if err != nil {
		t.Fatal(err)
	}
	out := "pod " + string(b)
	if np := nginx.NetworkPolicy(obj, nginx.OperatorPods{}); np != nil {
		if b, err = json.Marshal(np.Spec.Ingress); err != nil {
			t.Fatal(err)
		}
		out += "\nnetworkPolicy " + string(b)
	}
	return out
}

// embeddedRules are rules of the Kubernetes types the spec embeds
// (hack/crdembedded): removed from the CRD, the value reaches the
// StatefulSet or the NetworkPolicy as it is.
func embeddedRules() []ruleRemoval {
	pod := at(specPath, "pod")
	from := at(specPath, "networkPolicy", "from", "items")
	ipBlock := func(o *v1beta1.NginxOperator, b networkingv1.IPBlock) {
		o.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &b}}}
	}
	return []ruleRemoval{
		{"toleration value pattern", at(pod, "tolerations", "items", "value"), pattern,
			func(o *v1beta1.NginxOperator) { o.Spec.Pod.Tolerations = []corev1.Toleration{{Key: "k", Value: "-x"}} }, `"value":"-x"`},
		{"toleration of every taint needs Exists", at(pod, "tolerations", "items"), celRule("operator must be Exists when key is empty"),
			func(o *v1beta1.NginxOperator) { o.Spec.Pod.Tolerations = []corev1.Toleration{{Value: "x"}} }, `"tolerations":[{"value":"x"}]`},
		{"affinity topologyKey pattern", at(pod, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "items", "topologyKey"), pattern,
			func(o *v1beta1.NginxOperator) {
				o.Spec.Pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "a/b/c"}}}}
			}, `"topologyKey":"a/b/c"`},
		{"spread constraints one per key", at(pod, "topologySpreadConstraints"), celRule("same topologyKey and whenUnsatisfiable"),
			func(o *v1beta1.NginxOperator) {
				c := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway}
				o.Spec.Pod.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c, c}
			}, `"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"},{"maxSkew":1`},
		{"ipBlock CIDR", at(from, "ipBlock", "cidr"), celRule("must be a CIDR"),
			func(o *v1beta1.NginxOperator) { ipBlock(o, networkingv1.IPBlock{CIDR: "10.0.0.0/33"}) }, `"cidr":"10.0.0.0/33"`},
		{"except inside cidr", at(from, "ipBlock"), celRule("strictly inside cidr"),
			func(o *v1beta1.NginxOperator) {
				ipBlock(o, networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"11.0.0.0/8"}})
			}, `"except":["11.0.0.0/8"]`},
		{"a peer is not empty", from, celRule("a peer needs"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{From: []networkingv1.NetworkPolicyPeer{{}}}
			}, `"from":[{}]`},
		{"no resource claims", at(specPath, "resources"), celRule("leave claims empty"),
			func(o *v1beta1.NginxOperator) { o.Spec.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}} }, `"claims":[{"name":"gpu"}]`},
		{"requests within limits", at(specPath, "resources"), celRule("may not exceed its limit"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
				o.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			}, `"requests":{"cpu":"2"}`},
		{"volume size more than zero", at(specPath, "content", "volumeClaimTemplate", "size"), celRule("more than zero"),
			func(o *v1beta1.NginxOperator) {
				o.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("0")}
			}, `"storage":"0"`},
	}
}

func renderConfig(t *testing.T, obj *v1beta1.NginxOperator) string {
	t.Helper()
	out, err := render.Config(&obj.Spec, render.Options{Paths: render.PodPaths(), Namespace: obj.Namespace})
	if err != nil {
		t.Fatalf("Render refused what the CRD let through: %v", err)
	}
	return string(out)
}

// protocolRules are the rules and defaults of the protocol, client address,
// access control and log fields.
func protocolRules() []ruleRemoval {
	tlsServer := func(o *v1beta1.NginxOperator) *v1beta1.TLS {
		o.Spec.Config.Servers[0].TLS = &v1beta1.TLS{SecretName: "web-tls"}
		return o.Spec.Config.Servers[0].TLS
	}
	server := func(o *v1beta1.NginxOperator) *v1beta1.Server { return &o.Spec.Config.Servers[0] }
	return []ruleRemoval{
		{"TLS protocols default", at(configPath, "tls", "protocols"), noDefault,
			func(o *v1beta1.NginxOperator) { tlsServer(o) }, "ssl_protocols;"},
		{"TLS ciphers default", at(configPath, "tls", "ciphers"), noDefault,
			func(o *v1beta1.NginxOperator) { tlsServer(o) }, `ssl_ciphers "";`},
		{"TLS protocols enum", at(configPath, "tls", "protocols", "items"), enum,
			func(o *v1beta1.NginxOperator) {
				tlsServer(o)
				o.Spec.Config.TLS.Protocols = []string{"TLSv1.1"}
			}, "ssl_protocols TLSv1.1;"},
		{"TLS session cache default", at(configPath, "tls", "sessionCacheMiB"), noDefault,
			func(o *v1beta1.NginxOperator) { tlsServer(o) }, "ssl_session_cache shared:TLS:0m;"},
		{"TLS session timeout default", at(configPath, "tls", "sessionTimeoutMinutes"), noDefault,
			func(o *v1beta1.NginxOperator) { tlsServer(o) }, "ssl_session_timeout 0m;"},
		{"HSTS max-age default", at(serverPath, "tls", "hsts", "maxAgeSeconds"), noDefault,
			func(o *v1beta1.NginxOperator) { tlsServer(o).HSTS = &v1beta1.HSTS{} }, "Strict-Transport-Security max-age=0 always;"},
		{"HSTS preload rule", at(serverPath, "tls", "hsts"), celRule("preload needs includeSubDomains"),
			func(o *v1beta1.NginxOperator) {
				tlsServer(o).HSTS = &v1beta1.HSTS{MaxAgeSeconds: ptr.To[int32](60), Preload: true}
			}, `"max-age=60; preload"`},
		{"client certificate depth default", at(serverPath, "tls", "clientCertificates", "verifyDepth"), noDefault,
			func(o *v1beta1.NginxOperator) {
				tlsServer(o).ClientCertificates = &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "ca", Key: "ca.crt"}}
			}, "ssl_verify_depth 0;"},
		{"gzip level default", at(configPath, "gzip", "level"), noDefault,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{} }, "gzip_comp_level 0;"},
		{"gzip level maximum", at(configPath, "gzip", "level"), maximum,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{Level: 10} }, "gzip_comp_level 10;"},
		{"gzip minimum length default", at(configPath, "gzip", "minLengthBytes"), noDefault,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{} }, "gzip_min_length 0;"},
		{"gzip types default", at(configPath, "gzip", "types"), noDefault,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{} }, "gzip_proxied any;\n    geo"},
		{"gzip types pattern", at(configPath, "gzip", "types", "items"), pattern,
			func(o *v1beta1.NginxOperator) { o.Spec.Config.Gzip = &v1beta1.Gzip{Types: []string{"*"}} }, "gzip_types *;"},
		{"access log format default", at(configPath, "accessLog", "format"), noDefault,
			func(*v1beta1.NginxOperator) {}, `access_log /dev/stdout "";`},
		{"realIP needs trusted proxies", configPath, celRule("realIP needs trustedProxies"),
			func(o *v1beta1.NginxOperator) { o.Spec.Config.RealIP = &v1beta1.RealIP{Header: "X-Real-IP"} }, "real_ip_header X-Real-IP;"},
		{"ipAccess CIDRs", at(serverPath, "ipAccess", "allow"), celRule("must be a CIDR"),
			func(o *v1beta1.NginxOperator) { server(o).IPAccess = &v1beta1.IPAccess{Allow: []string{"all"}} }, "allow all;"},
		{"basic auth realm off", at(serverPath, "basicAuth", "realm"), celRule("realm cannot be off"),
			func(o *v1beta1.NginxOperator) {
				server(o).BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users", Realm: "off"}
			}, "auth_basic off;"},
		{"basic auth key default", at(serverPath, "basicAuth", "key"), noDefault,
			func(o *v1beta1.NginxOperator) { server(o).BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users"} }, "auth_basic_user_file /etc/nginx/files/auth_users_;"},
		{"basic auth realm default", at(serverPath, "basicAuth", "realm"), noDefault,
			func(o *v1beta1.NginxOperator) { server(o).BasicAuth = &v1beta1.HTTPBasicAuth{SecretName: "users"} }, `auth_basic "";`},
		{"rate limit needs a rate", at(serverPath, "rateLimit"), celRule("set requestsPerSecond or requestsPerMinute"),
			func(o *v1beta1.NginxOperator) { server(o).RateLimit = &v1beta1.RateLimit{ZoneSizeMiB: 1} }, "rate=0r/s"},
		{"rate limit zone default", at(serverPath, "rateLimit", "zoneSizeMiB"), noDefault,
			func(o *v1beta1.NginxOperator) { server(o).RateLimit = &v1beta1.RateLimit{RequestsPerSecond: 5} }, "zone=rate_s0:0m rate=5r/s;"},
	}
}
