package rollout

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// The certificate cert-manager issues for a server's tls.issuerRef (from a
// CA Issuer of cert-manager's own, whose CA a self-signed Issuer made) is
// what clients get through the instance's Service, and each renewal
// reaches new connections on both pods in place: a steady HTTPS client
// that verifies every handshake against the CA loses no request, and no
// pod is replaced or restarted. cert-manager runs as its real controllers
// (hack/certmanager) against the cluster.
func TestACertManagerCertificateIsServedAndRenewedWithoutAFailedRequest(t *testing.T) {
	t.Parallel()
	ctx, c, ns, cs, cl := realcluster.Setup(t, env, 5*time.Minute)
	n := realcluster.NodeOf(c)
	framework.RunCertManager(t, c, false)
	site(ctx, t, cl, ns)
	roots := certManagerCA(ctx, t, cl, ns)

	host := "web." + ns + ".svc"
	web := webInstance(ns)
	web.Spec.Ports = append(web.Spec.Ports, v1beta1.Port{Name: "https", ContainerPort: 8443})
	web.Spec.Config.Servers = append(web.Spec.Config.Servers, v1beta1.Server{Port: "https", ServerNames: []string{host},
		TLS:       &v1beta1.TLS{SecretName: "web-tls", IssuerRef: &v1beta1.IssuerRef{Name: "ca"}},
		Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}})
	key := createRolledOut(ctx, t, cl, web)
	if ready := framework.InstanceCondition(ctx, cl, ns, "web", v1beta1.ConditionCertificatesReady); ready == nil || ready.Reason != nginx.ReasonCertificatesIssued {
		t.Errorf("CertificatesReady is %+v, want Issued", ready)
	}
	pods := podStates(ctx, t, cs, ns)
	addr := framework.ServiceAddr(ctx, t, cs, key, "https")
	l := realcluster.StartHTTPSLoad(ctx, t, n, addr, &tls.Config{RootCAs: roots, ServerName: host}, 4)
	defer l.Finish(t)
	l.WaitServed(ctx, t, 20)

	var lastErr error
	served := func() string {
		serial, err := servedSerial(ctx, n, addr, roots, host)
		if err != nil {
			lastErr = err
		}
		return serial
	}
	var took []time.Duration
	for renewal := 1; renewal <= 3; renewal++ {
		before := issuedSerial(ctx, t, cl, ns)
		began := time.Now()
		framework.RenewCertificate(ctx, t, cl, ns, "web-tls")
		var issued string
		if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
			issued = issuedSerial(ctx, t, cl, ns)
			return issued != before
		}) {
			t.Fatalf("renewal %d: cert-manager did not issue a new certificate", renewal)
		}
		// New connections land on either pod: 20 in a row get the new one.
		inARow := 0
		if !framework.WaitFor(ctx, 45*time.Second, func(context.Context) bool {
			if served() != issued {
				inARow = 0
				return false
			}
			inARow++
			return inARow >= 20
		}) {
			t.Fatalf("renewal %d: the renewed certificate %s is not served (last error: %v)", renewal, issued, lastErr)
		}
		took = append(took, time.Since(began))
		l.WaitServed(ctx, t, 20)
	}
	t.Logf("3 renewals by cert-manager, each served by both pods after: %v", took)
	noPodReplacedOrRestarted(ctx, t, cs, ns, pods)
}

// certManagerCA makes a CA Issuer named ca, whose CA certificate
// cert-manager issues from a self-signed Issuer, and returns the CA.
func certManagerCA(ctx context.Context, t *testing.T, cl client.Client, ns string) *x509.CertPool {
	t.Helper()
	objects := []map[string]any{
		{"kind": "Issuer", "metadata": map[string]any{"name": "selfsigned"}, "spec": map[string]any{"selfSigned": map[string]any{}}},
		{"kind": "Certificate", "metadata": map[string]any{"name": "root-ca"}, "spec": map[string]any{
			"isCA": true, "commonName": "nginx-operator test CA", "secretName": "root-ca",
			"privateKey": map[string]any{"algorithm": "ECDSA", "size": int64(256)},
			"issuerRef":  map[string]any{"name": "selfsigned", "kind": "Issuer", "group": "cert-manager.io"}}},
		{"kind": "Issuer", "metadata": map[string]any{"name": "ca"}, "spec": map[string]any{"ca": map[string]any{"secretName": "root-ca"}}},
	}
	for _, o := range objects {
		o["apiVersion"] = "cert-manager.io/v1"
		o["metadata"].(map[string]any)["namespace"] = ns
		if err := cl.Create(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			t.Fatal(err)
		}
	}
	var ca corev1.Secret
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		return cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "root-ca"}, &ca) == nil && len(ca.Data[corev1.TLSCertKey]) > 0
	}) {
		t.Fatal("cert-manager did not issue the CA certificate")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca.Data[corev1.TLSCertKey]) {
		t.Fatal("the CA Secret holds no PEM certificate")
	}
	return roots
}

// issuedSerial is the serial number of the certificate in the Secret
// web-tls, "" while there is none.
func issuedSerial(ctx context.Context, t *testing.T, cl client.Client, ns string) string {
	t.Helper()
	var secret corev1.Secret
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-tls"}, &secret); err != nil {
		return ""
	}
	block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	if block == nil {
		return ""
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber.String()
}

// servedSerial is the serial number of the certificate a new connection to
// addr gets, verified against roots for name.
func servedSerial(ctx context.Context, n *node.Node, addr string, roots *x509.CertPool, name string) (string, error) {
	cert, err := servedCertificate(ctx, n, addr, roots, name)
	if err != nil {
		return "", err
	}
	return cert.SerialNumber.String(), nil
}
