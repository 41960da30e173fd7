package validation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// tls.issuerRef refuses, at admission, what cert-manager would refuse or
// what could not name a certificate, with a message naming the fix.
func TestIssuerRefRefusesWhatCertManagerWouldWithMessagesUsersUnderstand(t *testing.T) {
	ref := func(o *v1beta1.NginxOperator, r v1beta1.IssuerRef) {
		o.Spec.Config.Servers[0].ServerNames = []string{"www.example.com"}
		o.Spec.Config.Servers[0].TLS = &v1beta1.TLS{SecretName: "web-tls", IssuerRef: &r}
	}
	const at = "spec.config.servers[0].tls.issuerRef"
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"no server names", func(o *v1beta1.NginxOperator) {
			ref(o, v1beta1.IssuerRef{Name: "letsencrypt"})
			o.Spec.Config.Servers[0].ServerNames = []string{"_"}
		}, []string{"spec.config.servers[0]", "tls.issuerRef needs serverNames"}},
		{"a duration under an hour", func(o *v1beta1.NginxOperator) { ref(o, v1beta1.IssuerRef{Name: "letsencrypt", Duration: "59m"}) },
			[]string{at, "duration must be at least 1h"}},
		{"a duration in days", func(o *v1beta1.NginxOperator) { ref(o, v1beta1.IssuerRef{Name: "letsencrypt", Duration: "90d"}) },
			[]string{at + ".duration", "should match"}},
		{"renewBefore under five minutes", func(o *v1beta1.NginxOperator) { ref(o, v1beta1.IssuerRef{Name: "letsencrypt", RenewBefore: "4m"}) },
			[]string{at, "renewBefore must be at least 5m"}},
		{"renewBefore past the duration", func(o *v1beta1.NginxOperator) {
			ref(o, v1beta1.IssuerRef{Name: "letsencrypt", Duration: "2h", RenewBefore: "2h"})
		}, []string{at, "renewBefore must be shorter than duration"}},
		{"renewBefore past the default duration", func(o *v1beta1.NginxOperator) {
			ref(o, v1beta1.IssuerRef{Name: "letsencrypt", RenewBefore: "2160h"})
		}, []string{at, "cert-manager's default duration is 2160h"}},
		{"a kind that is no kind", func(o *v1beta1.NginxOperator) { ref(o, v1beta1.IssuerRef{Name: "letsencrypt", Kind: "clusterissuer"}) },
			[]string{at + ".kind", "should match"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.want...) })
	}
}

// What issuerRef leaves unset names cert-manager's own Issuer.
func TestIssuerRefDefaultsToAnIssuerOfCertManager(t *testing.T) {
	obj := valid()
	obj.Spec.Config.Servers[0].ServerNames = []string{"www.example.com"}
	obj.Spec.Config.Servers[0].TLS = &v1beta1.TLS{SecretName: "web-tls", IssuerRef: &v1beta1.IssuerRef{Name: "letsencrypt"}}
	out, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := &v1beta1.IssuerRef{Name: "letsencrypt", Kind: "Issuer", Group: "cert-manager.io"}
	if diff := cmp.Diff(want, out.Spec.Config.Servers[0].TLS.IssuerRef); diff != "" {
		t.Errorf("defaulted issuerRef (-want +got):\n%s", diff)
	}
}
