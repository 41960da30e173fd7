package nginx_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
)

func TestCertificatesAreOnePerSecretForTheNamesOfItsServers(t *testing.T) {
	letsencrypt := &v1beta1.IssuerRef{Name: "letsencrypt", Kind: "ClusterIssuer", Group: "cert-manager.io", Duration: "2160h"}
	server := func(secret string, ref *v1beta1.IssuerRef, names ...string) v1beta1.Server {
		return v1beta1.Server{Port: "https", ServerNames: names, TLS: &v1beta1.TLS{SecretName: secret, IssuerRef: ref}}
	}
	spec := func(secret string, names ...string) certmanager.CertificateSpec {
		return certmanager.CertificateSpec{SecretName: secret, DNSNames: names, Duration: "2160h",
			IssuerRef: certmanager.IssuerRef{Name: "letsencrypt", Kind: "ClusterIssuer", Group: "cert-manager.io"}}
	}
	for _, tc := range []struct {
		name    string
		servers []v1beta1.Server
		want    []certmanager.CertificateSpec
		err     string
	}{
		{"no issuerRef asks for nothing", []v1beta1.Server{server("own-tls", nil, "a.example.com"), {Port: "http"}}, nil, ""},
		{"one per Secret, names merged and sorted, _ left out",
			[]v1beta1.Server{server("b-tls", letsencrypt, "www.b.example", "_"), server("a-tls", letsencrypt, "a.example"),
				server("b-tls", letsencrypt, "b.example", "www.b.example"), server("b-tls", nil, "c.example")},
			[]certmanager.CertificateSpec{spec("a-tls", "a.example"), spec("b-tls", "b.example", "www.b.example")}, ""},
		{"a Secret from two issuers is refused",
			[]v1beta1.Server{server("a-tls", letsencrypt, "a.example"), server("a-tls", &v1beta1.IssuerRef{Name: "other", Kind: "Issuer", Group: "cert-manager.io"}, "b.example")},
			nil, `spec.config.servers[1].tls: Secret "a-tls" is named by another server with another issuerRef`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
				Spec: v1beta1.NginxOperatorSpec{Config: v1beta1.NginxConfig{Servers: tc.servers}}}
			certs, err := nginx.Certificates(web)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []certmanager.CertificateSpec
			for _, c := range certs {
				if c.Name != c.Spec.SecretName || c.Namespace != "team-a" || c.Labels["app.kubernetes.io/instance"] != "web" {
					t.Errorf("Certificate %s/%s with labels %v: want it named after its Secret, in the instance's namespace, with its labels", c.Namespace, c.Name, c.Labels)
				}
				got = append(got, c.Spec)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Certificates (-want +got):\n%s", diff)
			}
		})
	}
}
