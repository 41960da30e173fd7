package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// One walk finds every object nginx resolves, mounts or reads, each once,
// with the keys it reads (the ports it sends to), and nothing else: a backend with weight 0 (or
// none, which the CRD would have defaulted) and a disabled basicAuth name
// nothing that must exist.
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
		{Locations: []v1beta1.Location{{Path: "/again/", Proxy: &v1beta1.ProxyLocation{Service: "one", Port: 80, TLS: &v1beta1.BackendTLS{CACertificate: &v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "a", Key: "other.crt"}}}}}},
		{
			TLS:       &v1beta1.TLS{SecretName: "web-tls", ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: "clients", Key: "ca.crt"}}},
			BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth"},
			Locations: []v1beta1.Location{
				{Path: "/open", BasicAuth: &v1beta1.HTTPBasicAuth{Disabled: true, SecretName: "ignored", Key: "auth"}},
				{Path: "/admins/", BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "admins", Key: "htpasswd"}},
				{Path: "/more-admins/", BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "admins", Key: "auth"}},
			},
		},
		{TLS: &v1beta1.TLS{SecretName: "web-tls"}},
	}}, Content: v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: "site"}}}}
	want := References{
		{Use: UseTLS, Kind: "Secret", Name: "web-tls"},
		{Use: UseProxy, Kind: "Service", Name: "one", Ports: []int32{80, 8080}},
		{Use: UseProxy, Kind: "Service", Name: "stable", Ports: []int32{80}},
		{Use: UseBasicAuth, Kind: "Secret", Name: "users", Keys: []string{"auth"}},
		{Use: UseBasicAuth, Kind: "Secret", Name: "admins", Keys: []string{"htpasswd", "auth"}},
		{Use: UseCA, Kind: "ConfigMap", Name: "a", Keys: []string{"ca.crt", "other.crt"}},
		{Use: UseCA, Kind: "Secret", Name: "a", Keys: []string{"ca.crt"}},
		{Use: UseCA, Kind: "Secret", Name: "clients", Keys: []string{"ca.crt"}},
		{Use: UseContent, Kind: "ConfigMap", Name: "site"},
	}
	refs := ReferencesOf(spec)
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
	// A ConfigMap and a Secret of one name get directories of their own.
	paths := PodPaths()
	for i, dir := range map[int]string{0: "/etc/nginx/tls/web-tls", 3: "/etc/nginx/auth/users",
		5: "/etc/nginx/ca/configmap/a", 6: "/etc/nginx/ca/secret/a", 1: ""} {
		if got := paths.Dir(refs[i]); got != dir {
			t.Errorf("Dir(%s %s %s) = %q, want %q", refs[i].Use, refs[i].Kind, refs[i].Name, got, dir)
		}
	}
}
