package conversion

import (
	"bytes"
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"
)

var (
	t0        = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	year      = 365 * 24 * time.Hour
	testNames = sans{DNSNames: []string{"nginx-operator-webhook.ops.svc", "nginx-operator-webhook.ops.svc.cluster.local"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}}
)

func mustApply(t *testing.T, p certPlan, data map[string][]byte) (map[string][]byte, string) {
	t.Helper()
	out, reason, err := p.apply(data)
	if err != nil {
		t.Fatal(err)
	}
	return out, reason
}

func fresh(t *testing.T) map[string][]byte {
	t.Helper()
	data, _ := mustApply(t, certPlan{Names: testNames, Now: t0, Validity: year}, nil)
	return data
}

func TestNewCertificatesServeEveryNameAndChainToTheCA(t *testing.T) {
	data := fresh(t)
	ca, err := parseKeyPair(data[keyCACert], data[keyCAKey])
	if err != nil || !ca.Cert.IsCA {
		t.Fatalf("CA: %v (IsCA %v)", err, ca.Cert != nil && ca.Cert.IsCA)
	}
	serving, err := parseKeyPair(data[keyTLSCert], data[keyTLSKey])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, name := range []string{"nginx-operator-webhook.ops.svc", "nginx-operator-webhook.ops.svc.cluster.local", "127.0.0.1"} {
		if _, err := serving.Cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: t0, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("not valid for %s: %v", name, err)
		}
	}
	if _, err := serving.Cert.Verify(x509.VerifyOptions{DNSName: "other.ops.svc", Roots: pool, CurrentTime: t0}); err == nil {
		t.Error("valid for a name it was not issued for")
	}
	if !serving.Cert.NotBefore.Before(t0) || !serving.Cert.NotAfter.Equal(t0.Add(year).Truncate(time.Second)) {
		t.Errorf("validity %s..%s, want slightly backdated to %s", serving.Cert.NotBefore, serving.Cert.NotAfter, t0.Add(year))
	}
	if _, ok := data[keyPreviousCA]; ok {
		t.Error("a first CA has a previous CA")
	}
}

func TestServingCertificateNeverOutlivesItsCA(t *testing.T) {
	ca, err := newCA(t0, year)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := newServing(ca, testNames, t0.Add(300*24*time.Hour), year)
	if err != nil {
		t.Fatal(err)
	}
	if serving.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("serving certificate until %s, CA until %s", serving.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestCertPlan(t *testing.T) {
	base := fresh(t)
	otherCA := fresh(t)
	// with is base with some keys replaced: with(k1, v1, k2, v2...).
	with := func(kv ...any) map[string][]byte {
		d := map[string][]byte{}
		for key, val := range base {
			d[key] = val
		}
		for i := 0; i < len(kv); i += 2 {
			d[kv[i].(string)] = kv[i+1].([]byte)
		}
		return d
	}
	const (
		unchanged = "unchanged"
		newLeaf   = "new serving certificate, same CA"
		newCA     = "new CA and serving certificate"
		newCAKeep = "new CA, the old one kept as previous"
	)
	previousExpired := with(keyPreviousCA, base[keyCACert]) // expires with base, at t0+1y
	for _, tc := range []struct {
		name       string
		data       map[string][]byte
		now        time.Time
		rotate     bool
		names      sans
		want       string
		wantReason string
	}{
		{"fresh, leader", base, t0.Add(time.Hour), true, testNames, unchanged, ""},
		{"half way, leader", base, t0.Add(year / 2), true, testNames, unchanged, ""},
		{"a third left, leader: rotate", base, t0.Add(year * 7 / 10), true, testNames, newCAKeep, "the CA nears expiry"},
		{"a third left, not leader: wait for the leader", base, t0.Add(year * 7 / 10), false, testNames, unchanged, ""},
		{"expired, not leader: replace, nothing to keep", base, t0.Add(year + time.Hour), false, testNames, newCA, "the CA expired"},
		{"other names: new serving certificate from the same CA", base, t0.Add(time.Hour), false, sans{DNSNames: []string{"x.ops.svc"}}, newLeaf, "for other names"},
		{"serving key missing", with(keyTLSKey, []byte(nil)), t0, false, testNames, newLeaf, "no usable serving certificate"},
		{"serving key of another pair", with(keyTLSKey, otherCA[keyTLSKey]), t0, false, testNames, newLeaf, "private key does not match"},
		{"serving pair signed by another CA", with(keyTLSCert, otherCA[keyTLSCert], keyTLSKey, otherCA[keyTLSKey]), t0, false, testNames, newLeaf, "not signed by the CA"},
		{"CA garbage", with(keyCACert, []byte("garbage")), t0, false, testNames, newCA, "no usable CA"},
		{"CA key missing: keep the CA certificate trusted while replicas switch", with(keyCAKey, []byte(nil)), t0, false, testNames, newCAKeep, "no usable CA"},
		{"CA is not a CA", with(keyCACert, base[keyTLSCert], keyCAKey, base[keyTLSKey]), t0, false, testNames, newCA, "not a CA"},
		{"empty", map[string][]byte{}, t0, false, testNames, newCA, "no usable CA (missing)"},
		{"previous CA expired, leader: drop it", previousExpired, t0.Add(year + time.Hour), true, testNames, newCA, "the CA expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := certPlan{Names: tc.names, Now: tc.now, Validity: year, Rotate: tc.rotate}
			out, reason := mustApply(t, p, tc.data)
			if !strings.Contains(reason, tc.wantReason) {
				t.Errorf("reason %q, want it to contain %q", reason, tc.wantReason)
			}
			if tc.want == unchanged {
				if out != nil {
					t.Fatalf("changed (%s), want unchanged", reason)
				}
				return
			}
			if out == nil {
				t.Fatal("unchanged")
			}
			// Whatever changed, the result serves, now, for the names asked.
			again, r := mustApply(t, p, out)
			if again != nil {
				t.Errorf("the result is not stable: a second pass changes it again (%s)", r)
			}
			if !trusts(caBundle(out, tc.now), out[keyTLSCert], tc.now) {
				t.Error("the caBundle does not trust the new serving certificate")
			}
			sameCA := bytes.Equal(out[keyCACert], tc.data[keyCACert])
			prev, hasPrev := out[keyPreviousCA]
			switch tc.want {
			case newLeaf:
				if !sameCA || bytes.Equal(out[keyTLSCert], tc.data[keyTLSCert]) {
					t.Errorf("want a new serving certificate from the same CA (same CA: %v)", sameCA)
				}
			case newCA:
				if sameCA || hasPrev {
					t.Errorf("want a new CA and no previous one (same CA: %v, previous: %v)", sameCA, hasPrev)
				}
			case newCAKeep:
				if sameCA || !bytes.Equal(prev, tc.data[keyCACert]) {
					t.Errorf("want a new CA with the old one as previous (same CA: %v)", sameCA)
				}
				// During the overlap the apiserver trusts replicas still
				// serving the old certificate as well as those that switched.
				if tc.data[keyTLSKey] != nil && !trusts(caBundle(out, tc.now), tc.data[keyTLSCert], tc.now) {
					t.Error("the caBundle no longer trusts the old serving certificate")
				}
			}
		})
	}
}

func TestCABundleDropsAnExpiredPreviousCA(t *testing.T) {
	old := fresh(t)
	rotated, _ := mustApply(t, certPlan{Names: testNames, Now: t0.Add(year * 7 / 10), Validity: year, Rotate: true}, old)
	if n := countCerts(caBundle(rotated, t0.Add(year*7/10))); n != 2 {
		t.Errorf("during the overlap the bundle has %d CAs, want 2", n)
	}
	if n := countCerts(caBundle(rotated, t0.Add(year+time.Hour))); n != 1 {
		t.Errorf("after the old CA expired the bundle has %d CAs, want 1", n)
	}
	if trusts(caBundle(rotated, t0), old[keyTLSCert], t0.Add(year+time.Hour)) {
		t.Error("an expired certificate is trusted")
	}
}
