package tools

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// The tests' certificates: every CA, serving and client certificate a test
// or the local cluster needs is made here. Keys are ECDSA P-256, encoded as
// PKCS#8 ("PRIVATE KEY"), which nginx, Go and every Kubernetes component read.

// CA signs the certificates of one test or cluster.
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA is a new CA named commonName, valid from an hour ago for validity.
func NewCA(commonName string, validity time.Duration) (*CA, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: keyPEM}, nil
}

// LoadCA is the CA whose certificate and key (PKCS#1, SEC 1 or PKCS#8) are
// certPEM and keyPEM.
func LoadCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, kb := decodePEM(certPEM), decodePEM(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("no PEM certificate or key")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// Issue signs a certificate for a new key: tmpl gives the subject, the
// names and the extended key usages; the serial number and a validity from
// an hour ago for validity are set here. It returns the certificate and the
// key in PEM.
func (ca *CA) Issue(tmpl x509.Certificate, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), keyPEM, nil
}

// Pool is a certificate pool that trusts only ca.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// Server is the template of a serving certificate for hosts (DNS names or
// IP addresses).
func Server(hosts ...string) x509.Certificate {
	tmpl := x509.Certificate{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if len(hosts) > 0 {
		tmpl.Subject.CommonName = hosts[0]
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl
}

// Client is the template of a client certificate for user in groups (the
// subject's organizations, as Kubernetes reads them).
func Client(user string, groups ...string) x509.Certificate {
	return x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// ServingCert issues, from a new CA, a serving certificate for hosts valid
// for a day: the pool that trusts it, the certificate and its key in PEM.
func ServingCert(hosts ...string) (*x509.CertPool, []byte, []byte, error) {
	ca, err := NewCA("test CA", 24*time.Hour)
	if err != nil {
		return nil, nil, nil, err
	}
	certPEM, keyPEM, err := ca.Issue(Server(hosts...), 24*time.Hour)
	if err != nil {
		return nil, nil, nil, err
	}
	return ca.Pool(), certPEM, keyPEM, nil
}

func newKey() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pemBlock("PRIVATE KEY", der), nil
}

func parseKey(der []byte) (crypto.Signer, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T is not a signing key", k)
	}
	return signer, nil
}

func decodePEM(data []byte) *pem.Block {
	b, _ := pem.Decode(data)
	return b
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
