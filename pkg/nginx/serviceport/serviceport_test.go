package serviceport_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
)

func TestRuleOfAServiceIsItsAnnotationAndLegacyWithout(t *testing.T) {
	annotated := func(a map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	for _, tc := range []struct {
		name     string
		existing *corev1.Service
		want     serviceport.Rule
	}{
		{"no Service yet: a new instance", nil, serviceport.Standard},
		{"created by this operator", annotated(map[string]string{layout.ServicePortsAnnotation: "standard"}), serviceport.Standard},
		{"kept as it was", annotated(map[string]string{layout.ServicePortsAnnotation: "container"}), serviceport.Container},
		{"created by an operator of 0.3.0 or earlier", annotated(nil), serviceport.Container},
		{"with other annotations only", annotated(map[string]string{"cloud.example/lb": "internal"}), serviceport.Container},
		{"a value this operator never writes", annotated(map[string]string{layout.ServicePortsAnnotation: "Standard"}), serviceport.Container},
	} {
		if got := serviceport.RuleOf(tc.existing); got != tc.want {
			t.Errorf("%s: rule %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestResolveGivesClientsTheWellKnownPortsAndKeepsLegacyOnes(t *testing.T) {
	tls := &v1beta1.TLS{SecretName: "web-tls"}
	httpAndHTTPS := []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}}
	edge := []v1beta1.Server{{Port: "http", RedirectToHTTPS: &v1beta1.HTTPSRedirect{}}, {Port: "https", TLS: tls}}
	with := func(ports []v1beta1.Port, set func([]v1beta1.Port)) []v1beta1.Port {
		out := append([]v1beta1.Port(nil), ports...)
		set(out)
		return out
	}
	for _, tc := range []struct {
		name     string
		spec     v1beta1.NginxOperatorSpec
		rule     serviceport.Rule
		ports    []int32
		redirect int32
	}{
		{"no servers: the default server's port is plain HTTP",
			v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "admin", ContainerPort: 9090}}},
			serviceport.Standard, []int32{80, 9090}, 443},
		{"http and https", v1beta1.NginxOperatorSpec{Ports: httpAndHTTPS, Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Standard, []int32{80, 443}, 443},
		{"the same, legacy", v1beta1.NginxOperatorSpec{Ports: httpAndHTTPS, Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Container, []int32{8080, 8443}, 443},
		{"a port no server uses keeps its containerPort",
			v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "spare", ContainerPort: 7000}, {Name: "https", ContainerPort: 8443}},
				Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "https", TLS: tls}}}},
			serviceport.Standard, []int32{7000, 443}, 443},
		{"two TLS ports: the first gets 443, the redirect keeps 443",
			v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "a", ContainerPort: 8443}, {Name: "b", ContainerPort: 9443}},
				Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "b", TLS: tls}, {Port: "a", TLS: tls}}}},
			serviceport.Standard, []int32{443, 9443}, 443},
		{"two plain ports: the first gets 80",
			v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "a", ContainerPort: 8080}, {Name: "b", ContainerPort: 8081}},
				Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "b"}, {Port: "a"}}}},
			serviceport.Standard, []int32{80, 8081}, 443},
		{"an explicit servicePort wins over an earlier port's default",
			v1beta1.NginxOperatorSpec{Ports: with(httpAndHTTPS, func(p []v1beta1.Port) { p[1].ServicePort = 80 }), Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Standard, []int32{8080, 80}, 80},
		{"an explicit https servicePort is where the redirect goes",
			v1beta1.NginxOperatorSpec{Ports: with(httpAndHTTPS, func(p []v1beta1.Port) { p[1].ServicePort = 9443 }), Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Standard, []int32{80, 9443}, 9443},
		{"legacy: an explicit servicePort is used, the rest keep their containerPorts, the redirect follows it",
			v1beta1.NginxOperatorSpec{Ports: with(httpAndHTTPS, func(p []v1beta1.Port) { p[1].ServicePort = 9443 }), Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Container, []int32{8080, 9443}, 9443},
		{"legacy with an explicit http servicePort: the redirect keeps 443",
			v1beta1.NginxOperatorSpec{Ports: with(httpAndHTTPS, func(p []v1beta1.Port) { p[0].ServicePort = 80 }), Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Container, []int32{80, 8443}, 443},
		{"TLS on a port whose default is taken: its containerPort, and the redirect names it",
			v1beta1.NginxOperatorSpec{Ports: with(httpAndHTTPS, func(p []v1beta1.Port) { p[0].ServicePort = 443 }), Config: v1beta1.NginxConfig{Servers: edge}},
			serviceport.Standard, []int32{443, 8443}, 8443},
	} {
		got := serviceport.Resolve(&tc.spec, tc.rule)
		want := serviceport.Ports{Rule: tc.rule, Service: tc.ports, HTTPSRedirect: tc.redirect}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
