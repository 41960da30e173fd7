package framework

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
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
	ca, err := tools.NewCA("nginx-operator-test-ca", pkiValidity)
	if err != nil {
		return nil, err
	}
	p.caPEM = ca.CertPEM
	servingPEM, servingKey, err := ca.Issue(apiserverServing(), pkiValidity)
	if err != nil {
		return nil, err
	}
	// system:masters is the group RBAC lets do anything: the admin of a test cluster.
	p.adminCertPEM, p.adminKeyPEM, err = ca.Issue(tools.Client("admin", "system:masters"), pkiValidity)
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
		p.CACert: p.caPEM, p.CAKey: ca.KeyPEM,
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

// pkiValidity is how long the cluster's certificates are valid.
const pkiValidity = 30 * 24 * time.Hour

// apiserverServing is the template of the apiserver's serving certificate:
// its in-cluster names, loopback, the kubernetes Service's address and any
// extra addresses (the real node's view of the host).
func apiserverServing(extra ...net.IP) x509.Certificate {
	tmpl := tools.Server("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "127.0.0.1", "10.96.0.1")
	tmpl.Subject.CommonName = "kube-apiserver"
	tmpl.IPAddresses = append(tmpl.IPAddresses, extra...)
	return tmpl
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
