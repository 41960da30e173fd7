package nginx

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The controller waits for every Service nginx will resolve and every CA it
// will mount, and for nothing else.
func TestReferencesAreWhatNginxResolvesAndMounts(t *testing.T) {
	caA := &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "a", Key: "ca.crt"}
	spec := &v1beta1.NginxOperatorSpec{Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
		{Locations: []v1beta1.Location{
			{Path: "/", Static: &v1beta1.StaticLocation{}},
			{Path: "/one/", Proxy: &v1beta1.ProxyLocation{Service: "one", Port: 80, TLS: &v1beta1.BackendTLS{CACertificate: caA}}},
			{Path: "/split/", Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{
				{Service: "stable", Port: 80, Weight: ptr.To[int32](9)},
				{Service: "unset-weight", Port: 80},
				{Service: "drained", Port: 80, Weight: ptr.To[int32](0)},
				{Service: "one", Port: 8080, Weight: ptr.To[int32](1)},
			}, TLS: &v1beta1.BackendTLS{Hostname: "x", CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "a", Key: "ca.crt"}}}},
		}},
		{Locations: []v1beta1.Location{{Path: "/again/", Proxy: &v1beta1.ProxyLocation{Service: "one", Port: 80, TLS: &v1beta1.BackendTLS{CACertificate: caA}}}}},
	}}}
	if diff := cmp.Diff([]string{"one", "stable", "unset-weight"}, proxiedServices(spec)); diff != "" {
		t.Errorf("proxied Services (-want +got):\n%s", diff)
	}
	wantCAs := []v1beta1.CACertificateRef{*caA, {Kind: "Secret", Name: "a", Key: "ca.crt"}}
	if diff := cmp.Diff(wantCAs, CACertificates(spec)); diff != "" {
		t.Errorf("backend CAs (-want +got):\n%s", diff)
	}
}
