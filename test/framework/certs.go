package framework

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's credentials: one CA that signs the apiserver's serving
// certificate and the admin's client certificate, and the service-account
// signing key.
type pki struct {
	CACert, CAKey        string
	ServingCert, Serving string // serving certificate and key files
	AdminCert, AdminKey  string
	SAKey, SAPub         string
	caPEM, adminCertPEM  []byte
	adminKeyPEM          []byte
}

func writePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		CACert: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), Serving: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		SAKey: filepath.Join(dir, "sa.key"), SAPub: filepath.Join(dir, "sa.pub"),
	}
	now := time.Now()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "nginx-operator-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p.caPEM = pemBlock("CERTIFICATE", caDER)

	issue := func(serial int64, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = now.Add(-time.Hour)
		tmpl.NotAfter = now.Add(30 * 24 * time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		return pemBlock("CERTIFICATE", der), pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)), nil
	}
	servingPEM, servingKey, err := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
	})
	if err != nil {
		return nil, err
	}
	// system:masters is the group RBAC lets do anything: the admin of a test cluster.
	p.adminCertPEM, p.adminKeyPEM, err = issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	for path, data := range map[string][]byte{
		p.CACert: p.caPEM, p.CAKey: pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(caKey)),
		p.ServingCert: servingPEM, p.Serving: servingKey,
		p.AdminCert: p.adminCertPEM, p.AdminKey: p.adminKeyPEM,
		p.SAKey: pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)), p.SAPub: pemBlock("PUBLIC KEY", saPub),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
