package nginx

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The controller waits for every Service nginx will resolve and every CA and
// htpasswd file it will mount, and for nothing else.
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
		{
			TLS:       &v1beta1.TLS{SecretName: "web-tls", ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "clients", Key: "ca.crt"}}},
			BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth"},
			Locations: []v1beta1.Location{
				{Path: "/open", BasicAuth: &v1beta1.HTTPBasicAuth{Disabled: true, SecretName: "ignored", Key: "auth"}},
				{Path: "/admins/", BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "admins", Key: "htpasswd"}},
				{Path: "/more-admins/", BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "admins", Key: "auth"}},
			},
		},
	}}}
	if diff := cmp.Diff([]string{"one", "stable", "unset-weight"}, proxiedServices(spec)); diff != "" {
		t.Errorf("proxied Services (-want +got):\n%s", diff)
	}
	wantCAs := []v1beta1.CACertificateRef{*caA, {Kind: "Secret", Name: "a", Key: "ca.crt"}, {Kind: "Secret", Name: "clients", Key: "ca.crt"}}
	if diff := cmp.Diff(wantCAs, CACertificates(spec)); diff != "" {
		t.Errorf("CA certificates (-want +got):\n%s", diff)
	}
	// Each key is checked; each Secret is mounted once; a disabled
	// basicAuth names nothing that must exist.
	if diff := cmp.Diff([]string{"users", "admins"}, AuthSecrets(spec)); diff != "" {
		t.Errorf("basic auth Secrets (-want +got):\n%s", diff)
	}
	if n := len(BasicAuths(spec)); n != 3 {
		t.Errorf("%d basic auths to check, want 3", n)
	}
}
