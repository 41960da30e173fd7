package conversion

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"
)

// Keys of the certificate Secret. tls.crt and tls.key make it a valid
// kubernetes.io/tls Secret; the CA key stays with it so any replica that
// becomes leader can issue the next serving certificate.
const (
	keyCACert     = "ca.crt"
	keyCAKey      = "ca.key"
	keyTLSCert    = "tls.crt"
	keyTLSKey     = "tls.key"
	keyPreviousCA = "ca-previous.crt" // the CA before the last rotation, trusted until it expires
)

// backdate is how far NotBefore lies in the past, so a certificate is valid at
// once on an apiserver whose clock is a little behind.
const backdate = 5 * time.Minute

// sans are the names the serving certificate must be valid for.
type sans struct {
	DNSNames []string
	IPs      []net.IP
}

func (s sans) equal(c *x509.Certificate) bool {
	return slices.Equal(sortedStrings(s.DNSNames), sortedStrings(c.DNSNames)) &&
		slices.Equal(sortedIPs(s.IPs), sortedIPs(c.IPAddresses))
}

func sortedStrings(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedIPs(in []net.IP) []string {
	out := make([]string, 0, len(in))
	for _, ip := range in {
		out = append(out, ip.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// keyPair is a parsed certificate with its PEM encodings.
type keyPair struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
	key     crypto.Signer
}

func newCA(now time.Time, validity time.Duration) (keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("nginx-operator-webhook-ca@%d", now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return issue(tmpl, nil)
}

// newServing issues a serving certificate from ca, never outliving it.
func newServing(ca keyPair, names sans, now time.Time, validity time.Duration) (keyPair, error) {
	notAfter := now.Add(validity)
	if ca.Cert.NotAfter.Before(notAfter) {
		notAfter = ca.Cert.NotAfter
	}
	cn := "nginx-operator-webhook"
	if len(names.DNSNames) > 0 {
		cn = names.DNSNames[0]
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   now.Add(-backdate),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    names.DNSNames,
		IPAddresses: names.IPs,
	}
	return issue(tmpl, &ca)
}

// issue signs tmpl with a new P-256 key, by parent or (nil) by itself.
func issue(tmpl *x509.Certificate, parent *keyPair) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return keyPair{}, err
	}
	tmpl.SerialNumber = serial
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.Cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return keyPair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{
		Cert:    cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		key:     key,
	}, nil
}

// parseKeyPair parses a certificate and its matching private key.
func parseKeyPair(certPEM, keyPEM []byte) (keyPair, error) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return keyPair{}, errors.New("missing")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return keyPair{}, err
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return keyPair{}, fmt.Errorf("private key %T cannot sign", pair.PrivateKey)
	}
	return keyPair{Cert: pair.Leaf, CertPEM: certPEM, KeyPEM: keyPEM, key: signer}, nil
}

func parseCert(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// nearExpiry: less than a third of the certificate's lifetime remains.
func nearExpiry(c *x509.Certificate, now time.Time) bool {
	lifetime := c.NotAfter.Sub(c.NotBefore)
	return c.NotAfter.Sub(now) < lifetime/3
}

func expired(c *x509.Certificate, now time.Time) bool {
	return !now.Before(c.NotAfter)
}

// certPlan decides what the Secret's data must become.
type certPlan struct {
	Names    sans
	Now      time.Time
	Validity time.Duration
	// Rotate allows replacing certificates that are still valid but near
	// expiry. Only the leader rotates: it is the one that then puts the new CA
	// into the CRD, before any replica serves a certificate signed by it.
	// Anything missing, unparseable, expired or issued for other names is
	// replaced regardless, since it cannot serve.
	Rotate bool
}

// apply returns the new Secret data and why it changed, or nil data when
// data is fine as it is.
func (p certPlan) apply(data map[string][]byte) (map[string][]byte, string, error) {
	ca, caErr := parseKeyPair(data[keyCACert], data[keyCAKey])
	if reason := p.caReason(ca, caErr); reason != "" {
		out, err := p.newCAData(data)
		if err != nil {
			return nil, "", err
		}
		return out, reason + ": new CA and serving certificate", nil
	}

	var reasons []string
	out := map[string][]byte{}
	for k, v := range data {
		out[k] = v
	}
	if reason := p.servingReason(data, ca); reason != "" {
		// The CA stays, so the caBundle the apiserver has already trusts it.
		serving, err := newServing(ca, p.Names, p.Now, p.Validity)
		if err != nil {
			return nil, "", err
		}
		out[keyTLSCert], out[keyTLSKey] = serving.CertPEM, serving.KeyPEM
		reasons = append(reasons, reason+": new serving certificate")
	}
	if prev, ok := data[keyPreviousCA]; ok && p.Rotate {
		if c, err := parseCert(prev); err != nil || expired(c, p.Now) {
			delete(out, keyPreviousCA)
			reasons = append(reasons, "the previous CA expired: no longer trusted")
		}
	}
	if len(reasons) == 0 {
		return nil, "", nil
	}
	return out, strings.Join(reasons, "; "), nil
}

// caReason says why the CA (parsed with err) must be replaced, or "" when
// it may stay.
func (p certPlan) caReason(ca keyPair, err error) string {
	switch {
	case err != nil:
		return "no usable CA (" + err.Error() + ")"
	case !ca.Cert.IsCA:
		return "ca.crt is not a CA"
	case expired(ca.Cert, p.Now):
		return "the CA expired"
	case p.Rotate && nearExpiry(ca.Cert, p.Now):
		return "the CA nears expiry"
	}
	return ""
}

// newCAData is the Secret data of a new CA and a serving certificate it
// signed. The old CA, while valid, stays as the previous CA: replicas still
// serving a certificate of it stay trusted until they have loaded the new one.
func (p certPlan) newCAData(data map[string][]byte) (map[string][]byte, error) {
	newCAPair, err := newCA(p.Now, p.Validity)
	if err != nil {
		return nil, err
	}
	serving, err := newServing(newCAPair, p.Names, p.Now, p.Validity)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{
		keyCACert: newCAPair.CertPEM, keyCAKey: newCAPair.KeyPEM,
		keyTLSCert: serving.CertPEM, keyTLSKey: serving.KeyPEM,
	}
	if old, err := parseCert(data[keyCACert]); err == nil && old.IsCA && !expired(old, p.Now) {
		out[keyPreviousCA] = data[keyCACert]
	}
	return out, nil
}

// servingReason says why the serving certificate of data must be replaced
// under the CA ca, or "" when it may stay.
func (p certPlan) servingReason(data map[string][]byte, ca keyPair) string {
	serving, err := parseKeyPair(data[keyTLSCert], data[keyTLSKey])
	switch {
	case err != nil:
		return "no usable serving certificate (" + err.Error() + ")"
	case serving.Cert.CheckSignatureFrom(ca.Cert) != nil:
		return "the serving certificate is not signed by the CA"
	case !p.Names.equal(serving.Cert):
		return "the serving certificate is for other names"
	case expired(serving.Cert, p.Now):
		return "the serving certificate expired"
	case p.Rotate && nearExpiry(serving.Cert, p.Now):
		return "the serving certificate nears expiry"
	}
	return ""
}

// caBundle is what the apiserver must trust: the current CA and, during a
// rotation's overlap, the previous one while it has not expired.
func caBundle(data map[string][]byte, now time.Time) []byte {
	bundle := bytes.TrimSpace(data[keyCACert])
	if prev, err := parseCert(data[keyPreviousCA]); err == nil && !expired(prev, now) {
		bundle = append(append(slices.Clone(bundle), '\n'), bytes.TrimSpace(data[keyPreviousCA])...)
	}
	return append(slices.Clone(bundle), '\n')
}

// trusts reports whether bundle verifies certPEM as a serving certificate.
func trusts(bundle, certPEM []byte, now time.Time) bool {
	cert, err := parseCert(certPEM)
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		return false
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err == nil
}
