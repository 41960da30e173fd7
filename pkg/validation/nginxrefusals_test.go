package validation_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// What nginx would reject never reaches a pod: the controller validates
// the spec (validation.NginxOperator: the CRD's rules, then the cross-field
// rules beyond CEL's budget) before it renders, and every case is refused
// there with a field error.
func TestValidationRefusesWhatNginxWouldReject(t *testing.T) {
	http := []v1beta1.Port{{Name: "http", ContainerPort: 8080}}
	static := &v1beta1.StaticLocation{}
	for _, tc := range []struct {
		name string
		spec v1beta1.NginxOperatorSpec
	}{
		{"server on an undeclared port", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "https"}}}}},
		{"two default servers on one port", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", DefaultServer: true}, {Port: "http", DefaultServer: true}}}}},
		{"duplicate location", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/a", Static: static}, {Path: "/a", Static: static}}}}}}},
		{"TLS and plain on one port", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "x"}}, {Port: "http", ServerNames: []string{"b"}}}}}},
		{"a header both set and removed", withLocation(http, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80},
			RequestHeaders: &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-A", Value: "1"}}, Remove: []string{"x-a"}}})},
		{"a response header set twice", withLocation(http, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80},
			ResponseHeaders: &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-A", Value: "1"}, {Name: "x-A", Value: "2"}}}})},
		{"location without a handler", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/"}}}}}}},
		// Values the hostile review found past earlier checks.
		{"client_max_body_size 1t", withConfig(http, v1beta1.NginxConfig{NginxSettings: v1beta1.NginxSettings{ClientMaxBodySize: "1t"}})},
		{"client_max_body_size -1", withConfig(http, v1beta1.NginxConfig{NginxSettings: v1beta1.NginxSettings{ClientMaxBodySize: "-1"}})},
		{"worker_connections 1", withConfig(http, v1beta1.NginxConfig{NginxSettings: v1beta1.NginxSettings{WorkerConnections: 1}})},
		{"negative keepalive", withConfig(http, v1beta1.NginxConfig{NginxSettings: v1beta1.NginxSettings{KeepaliveTimeoutSeconds: -5}})},
		{"listen 80", v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 80}}}},
		{"a server on the health port", v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: layout.HealthPort}}}},
		{"proxy port 0", withLocation(http, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 0}})},
		{"proxy port 65536", withLocation(http, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 65536}})},
		{"negative proxy timeout", withLocation(http, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80, ReadTimeoutSeconds: -1}})},
		{"redirect code 1000", withLocation(http, v1beta1.Location{Path: "/", Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/", Code: 1000}})},
		{"redirect to a variable", withLocation(http, v1beta1.Location{Path: "/", Redirect: &v1beta1.RedirectLocation{URL: "https://$http_cookie"}})},
		{"regex location", withLocation(http, v1beta1.Location{Path: "~^/(?<x>.*)$", Static: static})},
		{"named location", withLocation(http, v1beta1.Location{Path: "@internal", Static: static})},
		{"CR/LF in a header", withLocation(http, v1beta1.Location{Path: "/", Static: static, Headers: []v1beta1.Header{{Name: "X", Value: "a\r\nSet-Cookie: x"}}})},
		{"cookie variable in a header", withLocation(http, v1beta1.Location{Path: "/", Static: static, Headers: []v1beta1.Header{{Name: "X", Value: "$http_authorization"}}})},
		{"server name *", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", ServerNames: []string{"*"}}}}}},
		{"TLS Secret name with a path", v1beta1.NginxOperatorSpec{Ports: http, Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "../../etc"}}}}}},
	} {
		obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}, Spec: tc.spec}
		if _, errs := validation.NginxOperator(context.Background(), obj); len(errs) == 0 {
			t.Errorf("%s: admitted; nginx would refuse it", tc.name)
		}
	}
}

func withConfig(ports []v1beta1.Port, cfg v1beta1.NginxConfig) v1beta1.NginxOperatorSpec {
	return v1beta1.NginxOperatorSpec{Ports: ports, Config: cfg}
}

func withLocation(ports []v1beta1.Port, l v1beta1.Location) v1beta1.NginxOperatorSpec {
	return withConfig(ports, v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: ports[0].Name, Locations: []v1beta1.Location{l}}}})
}
