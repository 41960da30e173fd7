package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// bookObject is example/v1alpha1-book.yaml, exactly what a reader of The
// Kubernetes Operator Framework Book writes, without its namespace.
func bookObject(t *testing.T) string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "example", "v1alpha1-book.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "namespace:") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// The only test whose operator manages the CRD's conversion webhook: the CRD
// is cluster-wide, so it must not run in parallel with another such test.
func TestBookUsersV1alpha1ObjectIsServedAndReadableAsV1beta1(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)
	kc := operatorKubeconfig(ctx, t)
	framework.StartOperator(t, kc, "--metrics-bind-address=0", "--namespaces="+ns, "--conversion-webhook=true", "--namespace="+ns)

	book := bookObject(t)
	var out string
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		var err error
		out, err = kubectlWithInput(ctx, book, "apply", "-n", ns, "-f", "-")
		return err == nil
	}) {
		t.Fatalf("creating the v1alpha1 object never succeeded: %s", out)
	}
	if !strings.Contains(out, "deprecated") {
		t.Errorf("no deprecation warning for v1alpha1: %q", out)
	}

	c := inprocess.Client(t, cluster.Config)
	var n v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "book"}, &n); err != nil {
		t.Fatalf("reading the book object as v1beta1: %v", err)
	}
	if len(n.Spec.Ports) != 1 || n.Spec.Ports[0].ContainerPort != 8080 || n.Spec.Replicas == nil || *n.Spec.Replicas != 1 {
		t.Errorf("as v1beta1: ports %+v replicas %v; want containerPort 8080 and 1 replica", n.Spec.Ports, n.Spec.Replicas)
	}
	// The operator reconciles it like any other instance.
	if !framework.WaitFor(ctx, 90*time.Second, availableWith(c, ns, "book", 1)) {
		t.Fatal("the book object did not become Available")
	}
	out, err := kubectl(ctx, "get", "nginxoperators.v1alpha1.nginx.operator.dev", "book", "-n", ns, "-o", "jsonpath={.spec.port} {.status.conditions[?(@.type==\"Available\")].status}")
	// kubectl prints the deprecation warning first, on stderr.
	if err != nil || !strings.HasSuffix(out, "\n8080 True") {
		t.Errorf("read back as v1alpha1: %q (%v), want port 8080 and Available True", out, err)
	}
}

// With --webhook-cert-management=external (OLM, cert-manager) the operator
// serves /convert with the certificate mounted in its cert directory and
// leaves the CRD and its own namespace alone.
func TestConversionWebhookServesAnExternallyProvidedCertificate(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)
	certDir := t.TempDir()
	caPool := writeServingCert(t, certDir)
	op := framework.StartOperator(t, operatorKubeconfig(ctx, t), "--metrics-bind-address=0", "--namespaces="+ns,
		"--conversion-webhook=true", "--webhook-cert-management=external", "--webhook-cert-dir="+certDir)

	review := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"nginx.operator.dev/v1beta1",` +
		`"objects":[{"apiVersion":"nginx.operator.dev/v1alpha1","kind":"NginxOperator","metadata":{"name":"book","namespace":"` + ns + `"},"spec":{"replicas":1,"port":8080}}]}}`
	httpc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: caPool}}}
	var body []byte
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		resp, err := httpc.Post(op.WebhookURL, "application/json", strings.NewReader(review))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("the webhook never answered over TLS with the mounted certificate: %s", body)
	}
	for _, want := range []string{`"status":"Success"`, `"apiVersion":"nginx.operator.dev/v1beta1"`, `"containerPort":8080`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("conversion response lacks %s: %s", want, body)
		}
	}
	secrets, err := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("external certificate management created Secrets in %s: %d", ns, len(secrets.Items))
	}
}

// writeServingCert writes tls.crt and tls.key for 127.0.0.1, signed by a new
// CA, into dir, and returns a pool trusting that CA.
func writeServingCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	pool, certPEM, keyPEM := framework.ServingCert(t, "127.0.0.1")
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return pool
}
