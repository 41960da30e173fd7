package conversion

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestAReplicaServesANewCertificateOnlyOnceTheCRDTrustsIt(t *testing.T) {
	files := certFiles{Dir: filepath.Join(t.TempDir(), "certs"), CertName: "tls.crt", KeyName: "tls.key"}
	m := &certManager{opts: Options{Namespace: "ops", SecretName: "cert", CRDName: DefaultCRDName}, files: files, log: logr.Discard(), now: func() time.Time { return t0 }}
	old := fresh(t)
	if err := files.write(old[keyTLSCert], old[keyTLSKey]); err != nil {
		t.Fatal(err)
	}
	rotated, _ := mustApply(t, certPlan{Names: testNames, Now: t0, Validity: year, Rotate: true}, map[string][]byte{}) // another CA altogether
	secret := &corev1.Secret{Data: rotated}

	// The CRD still holds only the old CA: keep serving the old certificate.
	if err := m.serve(secret, caBundle(old, t0)); err != nil {
		t.Fatal(err)
	}
	if !files.same(old[keyTLSCert], old[keyTLSKey]) {
		t.Fatal("switched to a certificate the apiserver does not trust yet")
	}
	// The leader has put the new CA in: switch.
	if err := m.serve(secret, append(caBundle(old, t0), caBundle(rotated, t0)...)); err != nil {
		t.Fatal(err)
	}
	if !files.same(rotated[keyTLSCert], rotated[keyTLSKey]) {
		t.Fatal("did not switch to the trusted new certificate")
	}
}

func TestDesiredConversionPointsAtTheServiceOrTheURL(t *testing.T) {
	path, port := "/convert", int32(443)
	url := "https://127.0.0.1:9443/convert"
	for _, tc := range []struct {
		name string
		opts Options
		want apiextensionsv1.WebhookClientConfig
	}{
		{"in a cluster: the Service on 443", Options{Namespace: "ops", ServiceName: "hook"},
			apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "ops", Name: "hook", Path: &path, Port: &port}, CABundle: []byte("CA")}},
		{"local runs and tests: the URL", Options{Namespace: "ops", ServiceName: "hook", URL: url},
			apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: []byte("CA")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := desiredConversion(tc.opts, []byte("CA"))
			if got.Strategy != apiextensionsv1.WebhookConverter || got.Webhook == nil {
				t.Fatalf("conversion %+v, want the Webhook strategy", got)
			}
			if diff := cmp.Diff([]string{"v1"}, got.Webhook.ConversionReviewVersions); diff != "" {
				t.Errorf("review versions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(&tc.want, got.Webhook.ClientConfig); diff != "" {
				t.Errorf("clientConfig (-want +got):\n%s", diff)
			}
		})
	}
}
