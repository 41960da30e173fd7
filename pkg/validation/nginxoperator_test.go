package validation_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

func valid() *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](2),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{
				Port: "http",
				Locations: []v1beta1.Location{
					{Path: "/", Static: &v1beta1.StaticLocation{}},
					{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}},
				},
			}}},
		},
	}
}

// Each case breaks one rule that lives in the CRD (schema or CEL) or only in
// Go; the validator must refuse it and name the field.
func TestNginxOperatorRefusesWhatAdmissionOrTheChildrenWould(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		field  string
	}{
		{"schema pattern: regex location", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Locations[0].Path = "~^/(?<x>.*)$" }, "spec.config.servers[0].locations[0].path"},
		{"schema pattern: named location", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Locations[0].Path = "@internal" }, "spec.config.servers[0].locations[0].path"},
		{"schema pattern: CR/LF in a header", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Headers = []v1beta1.Header{{Name: "X", Value: "a\r\nb"}}
		}, "spec.config.servers[0].locations[0].headers[0].value"},
		{"schema pattern: variable in a header", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Headers = []v1beta1.Header{{Name: "X", Value: "$http_cookie"}}
		}, "spec.config.servers[0].locations[0].headers[0].value"},
		{"schema minimum: privileged port", func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].ContainerPort = 80 }, "spec.ports[0].containerPort"},
		{"CEL: reserved health port", func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].ContainerPort = 18080 }, "spec.ports[0]"},
		{"schema bound: replicas", func(o *v1beta1.NginxOperator) { o.Spec.Replicas = ptr.To[int32](-1) }, "spec.replicas"},
		{"schema bound: worker connections", func(o *v1beta1.NginxOperator) { o.Spec.Config.WorkerConnections = 1 }, "spec.config.workerConnections"},
		{"schema pattern: body size 1t", func(o *v1beta1.NginxOperator) { o.Spec.Config.ClientMaxBodySize = "1t" }, "spec.config.clientMaxBodySize"},
		{"schema bound: proxy port 0", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Locations[1].Proxy.Port = 65536 }, "spec.config.servers[0].locations[1].proxy.port"},
		{"schema enum: redirect code", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0] = v1beta1.Location{Path: "/", Redirect: &v1beta1.RedirectLocation{URL: "https://x.example/", Code: 1000}}
		}, "spec.config.servers[0].locations[0].redirect.code"},
		{"schema pattern: server name *", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].ServerNames = []string{"*"} }, "spec.config.servers[0].serverNames[0]"},
		{"CEL: server on an undeclared port", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Port = "https" }, "spec"},
		{"CEL: two default servers on one port", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers = []v1beta1.Server{{Port: "http", DefaultServer: true}, {Port: "http", DefaultServer: true, ServerNames: []string{"b"}}}
		}, "spec.config: Invalid value: a port can have only one server with defaultServer: true"},
		{"CEL: TLS and plain on one port", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers = []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "web-tls"}}, {Port: "http", ServerNames: []string{"b"}}}
		}, "spec.config: Invalid value: servers on one port must all use TLS or all not"},
		{"CEL: port named metrics with metrics on", func(o *v1beta1.NginxOperator) {
			o.Spec.Ports = []v1beta1.Port{{Name: "metrics", ContainerPort: 8080}}
			o.Spec.Config.Servers[0].Port = "metrics"
			o.Spec.Metrics.Enabled = true
		}, "the port name metrics is the exporter's"},
		{"schema bound: servicePort", func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].ServicePort = 65536 }, "spec.ports[0].servicePort"},
		{"schema bound: nodePort", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.Type, o.Spec.Ports[0].NodePort = corev1.ServiceTypeNodePort, -1
		}, "spec.ports[0].nodePort"},
		{"CEL: servicePort on a metrics port", func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].ServicePort = 9113 }, "servicePort 9113 and 18082 are the Service's metrics ports"},
		{"CEL: servicePort twice", func(o *v1beta1.NginxOperator) {
			o.Spec.Ports = []v1beta1.Port{{Name: "http", ContainerPort: 8080, ServicePort: 80}, {Name: "b", ContainerPort: 8081, ServicePort: 80}}
		}, "spec.ports: Invalid value: servicePort values must be unique"},
		{"CEL: servicePort on another port's containerPort", func(o *v1beta1.NginxOperator) {
			o.Spec.Ports = []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "b", ContainerPort: 8081, ServicePort: 8080}}
		}, "a servicePort may not be the containerPort of a port without servicePort"},
		{"CEL: nodePort twice", func(o *v1beta1.NginxOperator) {
			o.Spec.Service.Type = corev1.ServiceTypeNodePort
			o.Spec.Ports = []v1beta1.Port{{Name: "http", ContainerPort: 8080, NodePort: 30080}, {Name: "b", ContainerPort: 8081, NodePort: 30080}}
		}, "spec.ports: Invalid value: nodePort values must be unique"},
		{"CEL: nodePort on a ClusterIP Service", func(o *v1beta1.NginxOperator) { o.Spec.Ports[0].NodePort = 30080 },
			"ports[].nodePort needs service.type NodePort or LoadBalancer"},
		{"CEL: reserved pod annotation", func(o *v1beta1.NginxOperator) {
			o.Spec.Pod.Annotations = map[string]string{"nginx.operator.dev/config-hash": "x"}
		}, "spec.pod.annotations"},
		{"CEL: exact with another pathType", func(o *v1beta1.NginxOperator) {
			l := &o.Spec.Config.Servers[0].Locations[0]
			l.Exact, l.PathType = true, v1beta1.PathPrefixElements
		}, "exact: true is the older spelling of pathType: Exact"},
		{"CEL: ReplacePrefixMatch on a regular expression", func(o *v1beta1.NginxOperator) {
			l := &o.Spec.Config.Servers[0].Locations[1]
			l.PathType = v1beta1.PathRegularExpression
			l.Proxy.URLRewrite = &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/v2")}}
		}, "ReplacePrefixMatch needs a prefix location: with pathType Exact or RegularExpression"},
		{"schema pattern: header match name", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Match = &v1beta1.RequestMatch{Headers: []v1beta1.HeaderMatch{{Name: "X_Team", Value: "a"}}}
		}, "spec.config.servers[0].locations[0].match.headers[0].name"},
		{"schema enum: method", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Match = &v1beta1.RequestMatch{Method: "get"}
		}, "spec.config.servers[0].locations[0].match.method"},
		{"Go: a regular expression path that does not compile", func(o *v1beta1.NginxOperator) {
			l := &o.Spec.Config.Servers[0].Locations[0]
			l.Path, l.PathType = "/(a", v1beta1.PathRegularExpression
		}, "spec.config.servers[0].locations[0].path: Invalid value: \"/(a\": is not a regular expression"},
		{"Go: a query match regular expression that does not compile", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Match = &v1beta1.RequestMatch{QueryParams: []v1beta1.QueryParamMatch{
				{Type: v1beta1.MatchRegularExpression, Name: "id", Value: "[0-9"}}}
		}, "spec.config.servers[0].locations[0].match.queryParams[0].value"},
		{"Go: a header twice in a match", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers[0].Locations[0].Match = &v1beta1.RequestMatch{Headers: []v1beta1.HeaderMatch{{Name: "X-Team", Value: "a"}, {Name: "x-team", Value: "b"}}}
		}, "spec.config.servers[0].locations[0].match.headers[1].name"},
		{"Go: two locations of one path and match", func(o *v1beta1.NginxOperator) {
			ls := o.Spec.Config.Servers[0].Locations
			ls[1].Path = "/"
			ls[0].Match, ls[1].Match = &v1beta1.RequestMatch{Method: "GET"}, &v1beta1.RequestMatch{Method: "GET"}
		}, "appears twice in this server with the same pathType and match"},
		{"Go: invalid pod label value", func(o *v1beta1.NginxOperator) { o.Spec.Pod.Labels = map[string]string{"team": "a b"} }, "spec.pod.labels"},
		{"schema enum: toleration operator", func(o *v1beta1.NginxOperator) {
			o.Spec.Pod.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Sometimes"}}
		}, "spec.pod.tolerations[0].operator"},
	}
	ctx := context.Background()
	if _, errs := validation.NginxOperator(ctx, valid()); len(errs) != 0 {
		t.Fatalf("the valid object is refused: %v", errs)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.field) })
	}
}

// wantRefused expects the validator to refuse valid() changed by mutate,
// with errors that contain each of want.
// The CEL rules inside the Kubernetes types the spec embeds refuse a spec
// at admission and in the conversion webhook (NginxOperatorSchema); the
// controller leaves them to the children's APIs, which it asks by a dry run
// before a write, and does not hold them compiled (NginxOperator).
func TestTheControllerLeavesTheEmbeddedTypesRulesToTheChildrensAPIs(t *testing.T) {
	obj := valid()
	obj.Spec.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}
	errs := validation.NginxOperatorSchema(context.Background(), obj)
	if got := errs.ToAggregate(); got == nil || !strings.Contains(got.Error(), "spec.resources: Invalid value: a request may not exceed its limit") {
		t.Errorf("admission's check of a request above its limit: %v", got)
	}
	if _, errs := validation.NginxOperator(context.Background(), obj); len(errs) != 0 {
		t.Errorf("the controller's check refuses what the StatefulSet's API judges: %v", errs)
	}
	// Rules on the spec's own fields stay in the controller's check.
	obj = valid()
	obj.Spec.Pod.PriorityClassName = "Not_A_Name"
	if _, errs := validation.NginxOperator(context.Background(), obj); len(errs) == 0 {
		t.Error("the controller's check accepts an invalid priorityClassName, a rule of the spec's own field")
	}
}

func wantRefused(t *testing.T, mutate func(*v1beta1.NginxOperator), want ...string) {
	t.Helper()
	obj := valid()
	mutate(obj)
	_, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) == 0 {
		t.Fatal("accepted")
	}
	got := errs.ToAggregate().Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("the errors lack %q:\n%s", w, got)
		}
	}
}

// The defaults of the schema are applied before validation, as the apiserver
// does when it reads an object written through v1alpha1: an object without
// ports gets the default port and its server refers to it.
func TestNginxOperatorSchemaAppliesDefaultsFirst(t *testing.T) {
	obj := valid()
	obj.Spec.Ports = nil
	if errs := validation.NginxOperatorSchema(context.Background(), obj); len(errs) != 0 {
		t.Fatalf("refused: %v", errs)
	}
	if obj.Spec.Ports != nil {
		t.Error("the caller's object was defaulted in place")
	}
}

// Create-only rules (the name) run at admission; the validator treats every
// object as existing, so an instance created before the rule keeps working.
func TestNginxOperatorSchemaLeavesCreateOnlyNameRuleToAdmission(t *testing.T) {
	obj := valid()
	obj.Name = strings.Repeat("a", 60) + "-pods"
	if errs := validation.NginxOperatorSchema(context.Background(), obj); len(errs) != 0 {
		t.Fatalf("refused: %v", errs)
	}
}

// Uniqueness in set and map lists is the apiserver's own check, apart from
// the OpenAPI schema; the validator makes it too.
func TestNginxOperatorSchemaRefusesDuplicatesInSetsAndMaps(t *testing.T) {
	obj := valid()
	obj.Spec.Config.Servers[0].ServerNames = []string{"example.com", "example.com"}
	errs := validation.NginxOperatorSchema(context.Background(), obj)
	if !strings.Contains(errs.ToAggregate().Error(), `spec.config.servers[0].serverNames[1]: Duplicate value`) {
		t.Errorf("errors %v, want the duplicate server name", errs)
	}
}

// A PodDisruptionBudget bound beyond int32 would be stored and then be
// undecodable for the operator; the schema bounds it.
func TestNginxOperatorSchemaBoundsDisruptionBudgets(t *testing.T) {
	for _, v := range []intstr.IntOrString{intstr.FromInt32(-1), intstr.FromString("150%"), intstr.FromString("two")} {
		obj := valid()
		obj.Spec.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: &v}
		if errs := validation.NginxOperatorSchema(context.Background(), obj); len(errs) == 0 {
			t.Errorf("maxUnavailable %s accepted", v.String())
		}
	}
	obj := valid()
	obj.Spec.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("25%"))}
	if errs := validation.NginxOperatorSchema(context.Background(), obj); len(errs) != 0 {
		t.Errorf("maxUnavailable 25%% refused: %v", errs)
	}
}

// BenchmarkNginxOperator is the cost the controller pays per reconcile.
func BenchmarkNginxOperator(b *testing.B) {
	ctx := context.Background()
	obj := valid()
	for b.Loop() {
		if _, errs := validation.NginxOperator(ctx, obj); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
