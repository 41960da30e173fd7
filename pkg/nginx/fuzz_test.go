package nginx

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// FuzzRenderedConfigHasExactlyTheDirectivesAsked puts arbitrary strings in
// every free-text field of a spec (bypassing the schema, as a compromised or
// buggy client would) and checks that the rendered nginx.conf parses back to
// exactly the directive tree the renderer built: no string can add, remove or
// reshape a directive or a block. Render may refuse a string; it may not
// misrender one.
func FuzzRenderedConfigHasExactlyTheDirectivesAsked(f *testing.F) {
	f.Add("example.com", "/", "max-age=60", "https://example.com/", "web-tls", "api", "1m")
	f.Add("a; } server { listen 80", "/x { return 200 pwned; }", "v\" always; add_header X-Evil \"1", "https://a/#;", "t\nls", "svc;", "1m; include /etc/passwd")
	f.Add("", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, serverName, path, headerValue, url, secret, service, bodySize string) {
		spec := v1beta1.NginxOperatorSpec{
			Ports:   []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
			Metrics: v1beta1.MetricsSpec{Enabled: true},
			Config: v1beta1.NginxConfig{
				ClientMaxBodySize: bodySize,
				Servers: []v1beta1.Server{
					{Port: "http", ServerNames: []string{serverName}, Locations: []v1beta1.Location{
						{Path: path, Static: &v1beta1.StaticLocation{}, Headers: []v1beta1.Header{{Name: "X-Test", Value: headerValue}}},
						{Path: "/r", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: url, Code: 301}},
						{Path: "/p/", Proxy: &v1beta1.ProxyLocation{Service: service, Port: 80}},
					}},
					{Port: "https", TLS: &v1beta1.TLS{SecretName: secret}},
				},
			},
		}
		opts := RenderOptions{Paths: PodPaths(), Namespace: "team-a"}
		want, err := Directives(&spec, opts)
		if err != nil {
			return
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
