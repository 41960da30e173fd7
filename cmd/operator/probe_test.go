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
	"sync/atomic"
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
	t.Cleanup(webhook.Close)
	broken := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"other","result":{"status":"Success"}}}`))
	}))
	t.Cleanup(broken.Close)
	// Answers the first request for another, then hangs: the attempt the
	// timeout cuts short must not hide why the first one failed.
	var asked atomic.Int32
	release := make(chan struct{})
	slowAfterWrong := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) == 1 {
			_, _ = w.Write([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"other","result":{"status":"Success"}}}`))
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(slowAfterWrong.Close)
	t.Cleanup(func() { close(release) }) // before Close, which waits for the handler

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
	t.Cleanup(untrusted.Close)

	// The probe retries until its timeout: a failing case waits it out, so
	// the cases run in parallel. Theirs is 2 s: under make test, one TLS
	// handshake took the whole of a 1 s timeout, whose error then said only
	// that time ran out. The real handler's first conversion compiles the
	// CRD's validation (lazily, once), which took more than 1.5 s on a
	// loaded machine: a case that succeeds gets the probe's own default,
	// and returns as soon as it has an answer.
	for _, tc := range []struct {
		name, url, ca, timeout string
		code                   int
		out                    string
	}{
		{"the real handler converts", webhook.URL + "/convert", writeCA(t, webhook), "30s", 0, "converted a v1alpha1 NginxOperator to v1beta1"},
		{"an answer to another request", broken.URL, writeCA(t, broken), "2s", 1, `the response is for request "other"`},
		{"a wrong answer, then none until the timeout", slowAfterWrong.URL, writeCA(t, slowAfterWrong), "2s", 1, `the response is for request "other"`},
		{"a certificate the CA did not sign", untrusted.URL, writeCA(t, webhook), "2s", 1, "certificate"},
		{"no CA", webhook.URL, "", "1s", 2, "--ca-file are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"probe", "--url=" + tc.url, "--ca-file=" + tc.ca, "--timeout=" + tc.timeout}, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout.String(), stderr.String(), tc.code, tc.out)
			}
		})
	}
}
