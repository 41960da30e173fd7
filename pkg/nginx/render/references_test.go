package render

import (
	"strings"
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
	// Each file nginx reads has a name of its own in the one files
	// directory: a ConfigMap and a Secret of one name too.
	paths := PodPaths()
	files := map[string]string{}
	for _, ref := range refs {
		for _, key := range ref.FileKeys() {
			files[paths.File(ref, key)] = ref.Use.String() + " " + ref.Kind + " " + ref.Name + " " + key
		}
	}
	wantFiles := map[string]string{
		"/etc/nginx/files/tls_web-tls_tls.crt":      "TLS Secret web-tls tls.crt",
		"/etc/nginx/files/tls_web-tls_tls.key":      "TLS Secret web-tls tls.key",
		"/etc/nginx/files/auth_users_auth":          "basic auth Secret users auth",
		"/etc/nginx/files/auth_admins_htpasswd":     "basic auth Secret admins htpasswd",
		"/etc/nginx/files/auth_admins_auth":         "basic auth Secret admins auth",
		"/etc/nginx/files/ca-configmap_a_ca.crt":    "CA certificate ConfigMap a ca.crt",
		"/etc/nginx/files/ca-configmap_a_other.crt": "CA certificate ConfigMap a other.crt",
		"/etc/nginx/files/ca-secret_a_ca.crt":       "CA certificate Secret a ca.crt",
		"/etc/nginx/files/ca-secret_clients_ca.crt": "CA certificate Secret clients ca.crt",
	}
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if cert, key := paths.TLSFiles("web-tls"); cert != "/etc/nginx/files/tls_web-tls_tls.crt" || key != "/etc/nginx/files/tls_web-tls_tls.key" {
		t.Errorf("TLSFiles(web-tls) = %s, %s", cert, key)
	}
}

// A file's name is a Secret's key (at most 253 characters of
// [-._a-zA-Z0-9]), whatever the object's name and key: the longest are
// cut and end with a hash of the whole, so two of them still differ.
func TestFileNamesAreSecretKeysAndDistinct(t *testing.T) {
	long := strings.Repeat("n", 253)
	seen := map[string]Reference{}
	for _, ref := range []Reference{
		{Use: UseTLS, Kind: "Secret", Name: long},
		{Use: UseBasicAuth, Kind: "Secret", Name: long, Keys: []string{"auth"}},
		{Use: UseCA, Kind: "Secret", Name: long, Keys: []string{strings.Repeat("k", 253)}},
		{Use: UseCA, Kind: "Secret", Name: long, Keys: []string{strings.Repeat("k", 252) + "l"}},
		{Use: UseCA, Kind: "ConfigMap", Name: long, Keys: []string{strings.Repeat("k", 253)}},
	} {
		for _, key := range ref.FileKeys() {
			name := FileName(ref, key)
			if len(name) > 253 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != "" {
				t.Errorf("FileName(%s %s, %s) = %q: not a Secret's key", ref.Use, ref.Kind, key, name)
			}
			if prev, ok := seen[name]; ok {
				t.Errorf("FileName %q for both %+v and %+v", name, prev, ref)
			}
			seen[name] = ref
		}
	}
}
