package inprocess

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// Webhook is an operator running in-process with the conversion webhook, as
// cmd/operator runs it: its webhook server on Port, the CRD pointing at it by
// URL, its certificate Secret in Namespace.
type Webhook struct {
	Namespace string
	Port      int
	// Options are the conversion options given to Setup.
	Options conversion.Options
	// Admin talks straight to the apiserver (no cache) as the cluster
	// admin, and knows the operator's kinds and CRDs.
	Admin client.Client
}

// WebhookManager is the manager cmd/operator builds, with its webhook server
// on port, logging to log; it returns the manager and its certificate
// directory. Its controllers stay out of ns: tests that convert objects there
// must be their only writer.
func WebhookManager(t testing.TB, cfg *rest.Config, ns string, port int, log logr.Logger) (manager.Manager, string) {
	t.Helper()
	certDir := t.TempDir()
	opts := Options()
	opts.DenyNamespaces = []string{ns}
	opts.WebhookPort, opts.WebhookCertDir = port, certDir
	mgr, err := operator.NewManager(cfg, opts, log)
	if err != nil {
		t.Fatal(err)
	}
	return mgr, certDir
}

// StartWebhook runs a WebhookManager with conversion.Setup until the test
// ends, and waits until the apiserver converts through it. The CRDs must be
// installed (InstallCRDs).
func StartWebhook(t testing.TB, cfg *rest.Config, ns string, port int, log logr.Logger) *Webhook {
	t.Helper()
	mgr, certDir := WebhookManager(t, cfg, ns, port, log)
	opts := conversion.Options{Namespace: ns, URL: fmt.Sprintf("https://127.0.0.1:%d%s", port, conversion.Path), CertDir: certDir}
	ctx, cancel := context.WithCancel(context.Background())
	if err := conversion.Setup(ctx, mgr, opts); err != nil {
		cancel()
		t.Fatalf("conversion.Setup: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	})
	w := &Webhook{Namespace: ns, Port: port, Options: opts, Admin: Client(t, cfg)}
	w.waitUntilConverting(t)
	return w
}

// waitUntilConverting waits until the injector configured the CRD and the
// apiserver converts through the webhook: an object written as v1beta1 reads
// as v1alpha1 with its port. (Without the webhook the apiserver would only
// relabel the apiVersion, and v1alpha1's schema would prune the ports.)
func (w *Webhook) waitUntilConverting(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	probe := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: w.Namespace},
		Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8123}}}}
	if err := w.Admin.Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	if !framework.WaitFor(ctx, 60*time.Second, func(ctx context.Context) bool {
		got := &v1alpha1.NginxOperator{}
		lastErr = w.Admin.Get(ctx, client.ObjectKeyFromObject(probe), got)
		return lastErr == nil && got.Spec.Port != nil && *got.Spec.Port == 8123
	}) {
		t.Fatalf("the apiserver does not convert through the webhook (last error: %v)", lastErr)
	}
}
