package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ExampleTLSSecrets are the certificates example/ leaves to the user:
// namespace to Secret name.
var ExampleTLSSecrets = map[string]string{"team-a": "gateway-tls", "team-b": "shop-tls"}

// ReadyCondition is the condition that says an object of kind is ready:
// Available for an NginxOperator, Ready for an NginxMonitor or NginxBackup,
// and "" for any other kind.
func ReadyCondition(kind string) string {
	switch kind {
	case "NginxOperator":
		return "Available"
	case "NginxMonitor", "NginxBackup":
		return "Ready"
	}
	return ""
}

// NotReady describes each object of objs, of our kinds, whose ready condition
// is not True; an empty result means all are ready.
func NotReady(ctx context.Context, c client.Reader, objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		want := ReadyCondition(o.GetKind())
		if want == "" {
			continue
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		key := client.ObjectKeyFromObject(o)
		if cond := Condition(ctx, c, key, live, want); cond == nil || cond.Status != "True" {
			out = append(out, fmt.Sprintf("%s %s: %s is not True: %+v", o.GetKind(), key, want, cond))
		}
	}
	return out
}

// ServingCert issues a serving certificate for host (a DNS name or an IP)
// from a new CA: the pool trusting the CA, the certificate and its key in PEM.
func ServingCert(t testing.TB, host string) (*x509.CertPool, []byte, []byte) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, key := newKey(), newKey()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
