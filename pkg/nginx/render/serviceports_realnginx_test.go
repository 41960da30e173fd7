package render

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A redirect that keeps the client's port names the Service port the client
// used, not the container port nginx listens on: with servicePort 80 the
// URL has no port (Gateway API's RequestRedirect: the listener's port,
// left out when it is the scheme's), with servicePort 8000 it has :8000.
func TestRealNginxRedirectsNameTheServicePortTheClientUsed(t *testing.T) {
	nginxBin := tools.Nginx(t)
	for servicePort, want := range map[int32]string{80: "http://example.org/x?y=1", 8000: "http://example.org:8000/x?y=1"} {
		t.Run(fmt.Sprint(servicePort), func(t *testing.T) {
			port := int32(tools.Port(t))
			spec := validationtest.Spec(t, v1beta1.NginxOperatorSpec{
				Ports: []v1beta1.Port{{Name: "http", ContainerPort: port, ServicePort: servicePort}},
				Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
					{Path: "/", Redirect: &v1beta1.RedirectLocation{Hostname: "example.org"}}}}}},
			})
			proc := startRendered(t, nginxBin, spec, int32(tools.Port(t)), nil, nil)
			req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/x?y=1", port), nil)
			tools.Must(t, err)
			req.Host = "shop.test"
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, _ := fetch(t, proc, client, req)
			if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || got != want {
				t.Errorf("%s Location %q, want 302 %s", resp.Status, got, want)
			}
		})
	}
}
