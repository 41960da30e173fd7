package render

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A redirect that keeps the client's port names the port the client used,
// not the container port nginx listens on: through the Service, whose
// port a Host without a port does not name, the Service port (Gateway
// API's RequestRedirect: the listener's port, left out when it is the
// scheme's): with servicePort 80 the URL has no port, with servicePort
// 8000 it has :8000. A client that came another way (a node port, the
// pod's address) names its port in Host, and is sent back to it; so is
// X-Forwarded-Port.
func TestRealNginxRedirectsNameThePortTheClientUsed(t *testing.T) {
	nginxBin := tools.Nginx(t)
	for _, tc := range []struct {
		servicePort int32
		host, want  string
	}{
		{80, "shop.test", "http://example.org/x?y=1"},
		{8000, "shop.test", "http://example.org:8000/x?y=1"},
		{80, "shop.test:30080", "http://example.org:30080/x?y=1"},
		{8000, "shop.test:80", "http://example.org/x?y=1"},
		{80, "[::1]:8443", "http://example.org:8443/x?y=1"},
		{8000, "[::1]", "http://example.org:8000/x?y=1"},
	} {
		t.Run(fmt.Sprint(tc.servicePort, " ", tc.host), func(t *testing.T) {
			servicePort, want := tc.servicePort, tc.want
			port := int32(tools.Port(t))
			spec := validationtest.Spec(t, v1beta1.NginxOperatorSpec{
				Ports: []v1beta1.Port{{Name: "http", ContainerPort: port, ServicePort: servicePort}},
				Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
					{Path: "/", Redirect: &v1beta1.RedirectLocation{Hostname: "example.org"}}}}}},
			})
			proc := startRendered(t, nginxBin, spec, int32(tools.Port(t)), nil, nil)
			req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/x?y=1", port), nil)
			tools.Must(t, err)
			req.Host = tc.host
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, _ := fetch(t, proc, client, req)
			if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || got != want {
				t.Errorf("%s Location %q, want 302 %s", resp.Status, got, want)
			}
		})
	}
}
