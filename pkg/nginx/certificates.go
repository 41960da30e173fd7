package nginx

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
)

// Certificates are the cert-manager Certificates the servers of nginx ask
// for (tls.issuerRef): one per Secret, named after it as cert-manager's own
// ingress-shim names them, for the server names of every server that names
// that Secret with an issuer. Servers naming one Secret with two issuers
// are an error: one Secret holds one certificate.
func Certificates(nginx *v1beta1.NginxOperator) ([]*certmanager.Certificate, error) {
	bySecret := map[string]*certmanager.Certificate{}
	for i, s := range nginx.Spec.Config.Servers {
		if s.TLS == nil || s.TLS.IssuerRef == nil {
			continue
		}
		ref := s.TLS.IssuerRef
		spec := certmanager.CertificateSpec{SecretName: s.TLS.SecretName, Duration: ref.Duration, RenewBefore: ref.RenewBefore,
			IssuerRef: certmanager.IssuerRef{Name: ref.Name, Kind: ref.Kind, Group: ref.Group}}
		cert, ok := bySecret[s.TLS.SecretName]
		if !ok {
			cert = &certmanager.Certificate{
				TypeMeta:   metav1.TypeMeta{APIVersion: certmanager.GroupVersion.String(), Kind: "Certificate"},
				ObjectMeta: objectMeta(nginx, s.TLS.SecretName),
				Spec:       spec,
			}
			bySecret[s.TLS.SecretName] = cert
		} else if cert.Spec.IssuerRef != spec.IssuerRef || cert.Spec.Duration != spec.Duration || cert.Spec.RenewBefore != spec.RenewBefore {
			return nil, configErrorf("spec.config.servers[%d].tls: Secret %q is named by another server with another issuerRef: one Secret holds one certificate, from one issuer",
				i, s.TLS.SecretName)
		}
		for _, name := range s.ServerNames {
			if name != "_" && !slices.Contains(cert.Spec.DNSNames, name) {
				cert.Spec.DNSNames = append(cert.Spec.DNSNames, name)
			}
		}
	}
	var out []*certmanager.Certificate
	for _, secret := range slices.Sorted(maps.Keys(bySecret)) {
		cert := bySecret[secret]
		slices.Sort(cert.Spec.DNSNames)
		out = append(out, cert)
	}
	return out, nil
}

// asksForCertificates tells whether a server of nginx has tls.issuerRef.
func asksForCertificates(nginx *v1beta1.NginxOperator) bool {
	return slices.ContainsFunc(nginx.Spec.Config.Servers, func(s v1beta1.Server) bool { return s.TLS != nil && s.TLS.IssuerRef != nil })
}

// certificatesVerdict is the CertificatesReady condition of an instance
// whose Certificates are certs as the cache shows them (nil for one not
// applied yet): True when cert-manager says each is Ready, else False with
// the first that is not and cert-manager's own reason and message.
func certificatesVerdict(certs []*certmanager.Certificate) (metav1.ConditionStatus, string, string) {
	var names []string
	for _, c := range certs {
		ready := c.Ready()
		switch {
		case ready == nil:
			return metav1.ConditionFalse, ReasonCertificateNotReady,
				fmt.Sprintf("cert-manager has not yet reported on Certificate %s (is its controller running?)", c.Name)
		case ready.Status != metav1.ConditionTrue || ready.ObservedGeneration < c.Generation:
			return metav1.ConditionFalse, ReasonCertificateNotReady,
				fmt.Sprintf("Certificate %s is not Ready: %s: %s", c.Name, ready.Reason, ready.Message)
		}
		names = append(names, c.Name)
	}
	return metav1.ConditionTrue, ReasonCertificatesIssued, "cert-manager issued Certificate " + strings.Join(names, ", ") + " and keeps it renewed"
}
