package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// An instance whose server asks for its certificate with tls.issuerRef
// says that cert-manager is not installed, then, once it is, gets a
// Certificate for its server names that the real cert-manager (its
// controllers, hack/certmanager) issues into the Secret it serves; a changed
// issuerRef reaches the Certificate, a renewal reaches the instance (its TLS
// digest changes), and without issuerRef the Certificate is deleted. The
// operator runs as the bundle's ServiceAccount: the test uses each of its
// permissions on Certificates. It needs cert-manager's CRDs absent at its
// start, and installs them: no other test of the package asks for them.
func TestCertManagerIssuesTheCertificateTLSIssuerRefAsksFor(t *testing.T) {
	t.Parallel()
	ctx, ns, _ := withOperator(t)
	c := inprocess.Client(t, cluster.Config)
	web := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](1),
			Ports:    []v1beta1.Port{{Name: "https", ContainerPort: 8443}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "https", ServerNames: []string{"www.example.com", "example.com"},
				TLS:       &v1beta1.TLS{SecretName: "web-tls", IssuerRef: &v1beta1.IssuerRef{Name: "selfsigned"}},
				Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}}}},
		},
	}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	waitCertificatesReady(ctx, t, c, ns, metav1.ConditionFalse, nginx.ReasonCertManagerNotInstalled)

	framework.RunCertManager(t, cluster, false)
	lookAgain(ctx, t, c, ns)
	// The Issuer does not exist yet: cert-manager says why it cannot issue.
	waitCertificatesReady(ctx, t, c, ns, metav1.ConditionFalse, nginx.ReasonCertificateNotReady)
	var cert certmanager.Certificate
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-tls"}, &cert); err != nil {
		t.Fatal(err)
	}
	want := certmanager.CertificateSpec{SecretName: "web-tls", DNSNames: []string{"example.com", "www.example.com"},
		IssuerRef: certmanager.IssuerRef{Name: "selfsigned", Kind: "Issuer", Group: "cert-manager.io"}}
	if !equalSpecs(cert.Spec, want) || !metav1.IsControlledBy(&cert, webOf(ctx, t, c, ns)) {
		t.Fatalf("the Certificate is %+v, owned by %v; want %+v, controlled by the instance", cert.Spec, cert.OwnerReferences, want)
	}

	issuer := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": "selfsigned", "namespace": ns},
		"spec":     map[string]any{"selfSigned": map[string]any{}},
	}}
	if err := c.Create(ctx, issuer); err != nil {
		t.Fatal(err)
	}
	waitCertificatesReady(ctx, t, c, ns, metav1.ConditionTrue, nginx.ReasonCertificatesIssued)
	first := issuedCertificate(ctx, t, c, ns)
	if !slices.Equal(first.DNSNames, want.DNSNames) {
		t.Errorf("the issued certificate is for %v, want %v", first.DNSNames, want.DNSNames)
	}
	firstDigest := waitTLSDigest(ctx, t, c, ns, "")

	// A change of the issuerRef reaches the Certificate.
	setIssuerRef(ctx, t, c, ns, &v1beta1.IssuerRef{Name: "selfsigned", Duration: "2h", RenewBefore: "30m"})
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-tls"}, &cert)
		return err == nil && cert.Spec.Duration == "2h" && cert.Spec.RenewBefore == "30m"
	}) {
		t.Fatalf("the Certificate's duration and renewBefore are %q and %q, want 2h and 30m", cert.Spec.Duration, cert.Spec.RenewBefore)
	}
	// A renewal (asked for as cmctl renew does) changes the Secret, and
	// the instance takes it.
	framework.RenewCertificate(ctx, t, c, ns, "web-tls")
	if !framework.WaitFor(ctx, time.Minute, func(context.Context) bool {
		return issuedCertificate(ctx, t, c, ns).SerialNumber.Cmp(first.SerialNumber) != 0
	}) {
		t.Fatal("cert-manager did not renew the certificate")
	}
	if renewed := issuedCertificate(ctx, t, c, ns); renewed.NotAfter.Sub(renewed.NotBefore) != 2*time.Hour {
		t.Errorf("the renewed certificate lasts %s, want the 2h of its issuerRef", renewed.NotAfter.Sub(renewed.NotBefore))
	}
	waitTLSDigest(ctx, t, c, ns, firstDigest)
	waitCertificatesReady(ctx, t, c, ns, metav1.ConditionTrue, nginx.ReasonCertificatesIssued)

	// Two issuers for one Secret: the condition says why, and the
	// Certificate stays as it was.
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	framework.UpdateInstance(ctx, t, c, key, func(web *v1beta1.NginxOperator) {
		other := *web.Spec.Config.Servers[0].DeepCopy()
		other.ServerNames, other.TLS.IssuerRef = []string{"other.example.com"}, &v1beta1.IssuerRef{Name: "other"}
		web.Spec.Config.Servers = append(web.Spec.Config.Servers, other)
	})
	waitCertificatesReady(ctx, t, c, ns, metav1.ConditionFalse, nginx.ReasonInvalidConfig)
	framework.UpdateInstance(ctx, t, c, key, func(web *v1beta1.NginxOperator) { web.Spec.Config.Servers = web.Spec.Config.Servers[:1] })
	waitCertificatesReady(ctx, t, c, ns, metav1.ConditionTrue, nginx.ReasonCertificatesIssued)

	setIssuerRef(ctx, t, c, ns, nil)
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-tls"}, &certmanager.Certificate{})
		return apierrors.IsNotFound(err) && framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionCertificatesReady) == nil
	}) {
		t.Fatal("without tls.issuerRef, the Certificate or condition CertificatesReady is still there")
	}
}

// webOf is the instance web of namespace ns.
func webOf(ctx context.Context, t *testing.T, c client.Client, ns string) *v1beta1.NginxOperator {
	t.Helper()
	var web v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &web); err != nil {
		t.Fatal(err)
	}
	return &web
}

func equalSpecs(a, b certmanager.CertificateSpec) bool {
	return a.SecretName == b.SecretName && slices.Equal(a.DNSNames, b.DNSNames) && a.IssuerRef == b.IssuerRef &&
		a.Duration == b.Duration && a.RenewBefore == b.RenewBefore
}

// lookAgain asks the operator for a fresh look at the instance, as a user
// does with kubectl annotate, rather than waiting the minute after which it
// looks for cert-manager's API again.
func lookAgain(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"example.com/look-again":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`)
	if err := c.Patch(ctx, webOf(ctx, t, c, ns), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

func setIssuerRef(ctx context.Context, t *testing.T, c client.Client, ns string, ref *v1beta1.IssuerRef) {
	t.Helper()
	framework.UpdateInstance(ctx, t, c, client.ObjectKey{Namespace: ns, Name: "web"}, func(web *v1beta1.NginxOperator) {
		web.Spec.Config.Servers[0].TLS.IssuerRef = ref
	})
}

func waitCertificatesReady(ctx context.Context, t *testing.T, c client.Client, ns string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	var last *metav1.Condition
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		last = framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionCertificatesReady)
		return last != nil && last.Status == status && last.Reason == reason
	}) {
		t.Fatalf("CertificatesReady is %+v, want %s %s", last, status, reason)
	}
	t.Logf("CertificatesReady %s %s: %s", status, reason, last.Message)
}

// issuedCertificate is the certificate in the Secret the server serves.
func issuedCertificate(ctx context.Context, t *testing.T, c client.Client, ns string) *x509.Certificate {
	t.Helper()
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-tls"}, &secret); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	if block == nil {
		t.Fatal("the Secret web-tls holds no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// waitTLSDigest waits until the instance's config Secret carries a TLS
// digest other than before, and returns it.
func waitTLSDigest(ctx context.Context, t *testing.T, c client.Client, ns, before string) string {
	t.Helper()
	var digest string
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var config corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("web").ConfigSecret}, &config); err != nil {
			return false
		}
		digest = config.Annotations[layout.FilesHashAnnotation]
		return digest != "" && digest != before
	}) {
		t.Fatalf("the digest of the instance's files stayed %q", before)
	}
	return digest
}
