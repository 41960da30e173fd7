//go:build !unit

package conversion_test

// The integration tests' environment: the NginxOperator CRD, the operator
// running in-process (pkg/operator's manager plus Setup) and what the tests
// inspect of it.

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

func ptr[T any](v T) *T { return &v }

// installCRD installs the CRDs that ship (config/crd/bases), once.
func installCRD(t *testing.T) { inprocess.InstallCRDs(t, env.Cluster(t).Config) }

// operatorEnv is one in-process operator with the webhook set up.
type operatorEnv struct {
	ns    string
	port  int
	opts  conversion.Options // with defaults applied and the resolved CertDir
	admin client.Client
}

// startWebhookOperator runs the operator with its webhook in-process, as
// cmd/operator will, in namespace ns, with the webhook on port and the CRD
// pointing at it by URL, and waits until the apiserver converts through it.
func startWebhookOperator(t *testing.T, ns string, port int) *operatorEnv {
	t.Helper()
	logStart := testLog.Len()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("operator log:\n%s", testLog.Since(logStart))
		}
	})
	w := inprocess.StartWebhook(t, env.Cluster(t).Config, ns, port, logf.Log.WithName("operator"))
	opts, err := conversion.WithDefaults(w.Options)
	if err != nil {
		t.Fatal(err)
	}
	return &operatorEnv{ns: ns, port: port, opts: opts, admin: w.Admin}
}

// newOperatorManager is the manager cmd/operator builds, with its webhook
// server on port and its certificate directory returned.
func newOperatorManager(t *testing.T, ns string, port int) (manager.Manager, string) {
	t.Helper()
	return inprocess.WebhookManager(t, env.Cluster(t).Config, ns, port, logf.Log.WithName("operator"))
}

func newNamespace(t *testing.T) string {
	ns, _ := env.Namespace(t)
	return ns
}

func assertNoReservedAnnotations(t *testing.T, obj *v1beta1.NginxOperator) {
	t.Helper()
	for _, k := range []string{conversion.AnnotationSpec, conversion.AnnotationStatus} {
		if _, ok := obj.Annotations[k]; ok {
			t.Errorf("the v1beta1 object carries %s", k)
		}
	}
}

func (e *operatorEnv) secret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := e.admin.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: e.opts.SecretName}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *operatorEnv) crd(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := e.admin.Get(context.Background(), client.ObjectKey{Name: conversion.DefaultCRDName}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *operatorEnv) assertInjected(t *testing.T) {
	t.Helper()
	s := e.secret(t)
	if s.Labels[naming.LabelManagedBy] != naming.ManagedBy || s.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret labels %v, type %s: want managed-by %s, kubernetes.io/tls", s.Labels, s.Type, naming.ManagedBy)
	}
	conv := e.crd(t).Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		t.Fatalf("spec.conversion %+v, want the webhook", conv)
	}
	cc := conv.Webhook.ClientConfig
	if cc.URL == nil || *cc.URL != e.opts.URL || cc.Service != nil {
		t.Errorf("clientConfig url %v service %v, want url %s", cc.URL, cc.Service, e.opts.URL)
	}
	if diff := cmp.Diff([]string{"v1"}, conv.Webhook.ConversionReviewVersions); diff != "" {
		t.Errorf("conversionReviewVersions (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(cc.CABundle), strings.TrimSpace(string(s.Data[conversion.KeyCACert]))) {
		t.Error("the caBundle does not contain the Secret's CA")
	}
	if !conversion.Trusts(cc.CABundle, s.Data[conversion.KeyTLSCert], time.Now()) {
		t.Error("the caBundle does not trust the Secret's serving certificate")
	}
}

// assertSecondPassWritesNothing runs one more injector pass, as the leader
// does every minute, through a client that counts requests.
func (e *operatorEnv) assertSecondPassWritesNothing(t *testing.T) {
	t.Helper()
	crdBefore, secretBefore := e.crd(t).ResourceVersion, e.secret(t).ResourceVersion
	counter := &inprocess.RequestCounter{}
	cfg := rest.CopyConfig(env.Cluster(t).Config)
	cfg.WrapTransport = counter.Wrap
	if err := conversion.ReconcileOnce(context.Background(), inprocess.Client(t, cfg), e.opts); err != nil {
		t.Fatal(err)
	}
	if writes := counter.Writes(); len(writes) != 0 {
		t.Errorf("a steady-state pass sent %d mutating requests: %v", len(writes), writes)
	}
	if counter.Reads() == 0 {
		t.Error("the pass read nothing: it did not run")
	}
	if crdAfter, secretAfter := e.crd(t).ResourceVersion, e.secret(t).ResourceVersion; crdAfter != crdBefore || secretAfter != secretBefore {
		t.Errorf("resourceVersions changed: CRD %s -> %s, Secret %s -> %s", crdBefore, crdAfter, secretBefore, secretAfter)
	}
}

// servedCertificate is the certificate the webhook presents right now.
func servedCertificate(port int) ([]byte, error) {
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // we only look at what is served
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}
