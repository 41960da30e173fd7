package main

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// writeCA writes the PEM of srv's certificate, which httptest signs itself,
// as the CA file a probe trusts.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.crt")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProbeAsksTheConversionWebhook(t *testing.T) {
	webhook := httptest.NewTLSServer(conversion.NewHandler())
	defer webhook.Close()
	broken := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"other","result":{"status":"Success"}}}`))
	}))
	defer broken.Close()
	// Signed by a CA of its own, not by httptest's.
	_, certPEM, keyPEM, err := tools.ServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	untrusted := httptest.NewUnstartedServer(conversion.NewHandler())
	untrusted.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	untrusted.StartTLS()
	defer untrusted.Close()

	// The probe retries until its timeout: a failing case waits it out, so
	// theirs is short. The real handler's first conversion compiles the
	// CRD's validation (lazily, once), which took more than 1.5 s on a
	// loaded machine: a case that succeeds gets the probe's own default,
	// and returns as soon as it has an answer.
	for _, tc := range []struct {
		name, url, ca, timeout string
		code                   int
		out                    string
	}{
		{"the real handler converts", webhook.URL + "/convert", writeCA(t, webhook), "30s", 0, "converted a v1alpha1 NginxOperator to v1beta1"},
		{"an answer to another request", broken.URL, writeCA(t, broken), "1s", 1, `the response is for request "other"`},
		{"a certificate the CA did not sign", untrusted.URL, writeCA(t, webhook), "1s", 1, "certificate"},
		{"no CA", webhook.URL, "", "1s", 2, "--ca-file are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"probe", "--url=" + tc.url, "--ca-file=" + tc.ca, "--timeout=" + tc.timeout}, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout.String(), stderr.String(), tc.code, tc.out)
			}
		})
	}
}
