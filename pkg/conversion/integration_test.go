//go:build !unit

package conversion_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

const bookYAML = `
apiVersion: nginx.operator.dev/v1alpha1
kind: NginxOperator
metadata:
  name: web
spec:
  replicas: 1
  port: 8080
`

func TestV1alpha1AndV1beta1ClientsShareOneObjectThroughTheWebhookWithoutLoss(t *testing.T) {
	installCRD(t)
	ctx := context.Background()
	e := startWebhookOperator(t, newNamespace(t), tools.Port(t))
	c := e.admin

	// 1. A book user creates exactly what the book shows.
	docs, err := framework.DecodeYAML([]byte(bookYAML))
	if err != nil {
		t.Fatal(err)
	}
	book := docs[0]
	book.SetNamespace(e.ns)
	if err := c.Create(ctx, book); err != nil {
		t.Fatalf("creating the book's v1alpha1 object: %v", err)
	}
	key := client.ObjectKey{Namespace: e.ns, Name: "web"}

	// 2. A v1beta1 client sees the port as ports[0].
	beta := &v1beta1.NginxOperator{}
	if err := c.Get(ctx, key, beta); err != nil {
		t.Fatal(err)
	}
	wantPorts := []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(wantPorts, beta.Spec.Ports); diff != "" || beta.Spec.Replicas == nil || *beta.Spec.Replicas != 1 {
		t.Fatalf("as v1beta1: replicas %v, ports (-want +got):\n%s", beta.Spec.Replicas, diff)
	}
	assertNoReservedAnnotations(t, beta)

	// 3. The v1beta1 client uses what v1alpha1 cannot express, in spec and status.
	beta.Spec.ForceRedeploy = "2026-11-22"
	beta.Spec.Paused = true
	beta.Spec.Ports = append(beta.Spec.Ports, v1beta1.Port{Name: "admin", ContainerPort: 9090, Protocol: corev1.ProtocolTCP})
	beta.Spec.Config.Servers = []v1beta1.Server{{
		Port: "http", ServerNames: []string{"example.com"},
		Locations: []v1beta1.Location{
			{Path: "/", Static: &v1beta1.StaticLocation{Autoindex: true}},
			{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}},
			{Path: "/old", Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 301}},
		},
	}}
	beta.Spec.Metrics.Enabled = true
	beta.Spec.Service.Annotations = map[string]string{"lb.example.com/internal": "true"}
	beta.Spec.Pod.Labels = map[string]string{"team": "a"}
	if err := c.Update(ctx, beta); err != nil {
		t.Fatalf("updating as v1beta1: %v", err)
	}
	beta.Status = v1beta1.NginxOperatorStatus{
		ObservedGeneration: beta.Generation, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, Selector: "app=x", ConfigHash: "abc123",
		Conditions: []metav1.Condition{{Type: v1beta1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Ready", Message: "1/1 ready",
			ObservedGeneration: beta.Generation, LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}},
	}
	if err := c.Status().Update(ctx, beta); err != nil {
		t.Fatalf("updating status as v1beta1: %v", err)
	}
	before := &v1beta1.NginxOperator{}
	if err := c.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}

	// 4. A v1alpha1 client reads it, and writes it back unchanged, spec and status.
	alpha := &v1alpha1.NginxOperator{}
	if err := c.Get(ctx, key, alpha); err != nil {
		t.Fatal(err)
	}
	if alpha.Spec.Port == nil || *alpha.Spec.Port != 8080 || alpha.Spec.ForceRedeploy != "2026-11-22" || len(alpha.Status.Conditions) != 1 {
		t.Errorf("as v1alpha1: %+v %+v", alpha.Spec, alpha.Status)
	}
	if alpha.Annotations[conversion.AnnotationSpec] == "" || alpha.Annotations[conversion.AnnotationStatus] == "" {
		t.Errorf("as v1alpha1 the preservation annotations are missing: %v", alpha.Annotations)
	}
	if err := c.Update(ctx, alpha); err != nil {
		t.Fatalf("writing back as v1alpha1: %v", err)
	}

	// 5. Nothing was lost: spec, status, generation (only a spec change bumps
	// it) and annotations are as the v1beta1 client left them.
	after := &v1beta1.NginxOperator{}
	if err := c.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
		t.Errorf("spec changed by a v1alpha1 round trip (-before +after):\n%s", diff)
	}
	// The apiserver rebuilds the stored status of a v1alpha1 write from the
	// v1alpha1 object, whose metadata the client controls: only the
	// conditions come back, never the status annotation (which could forge
	// configHash or the scale selector). The operator rewrites the rest on
	// its next reconcile; no operator runs in this namespace.
	if diff := cmp.Diff(v1beta1.NginxOperatorStatus{Conditions: before.Status.Conditions}, after.Status); diff != "" {
		t.Errorf("status after a v1alpha1 write (-want +got):\n%s", diff)
	}

	// 5b. Nor through the status subresource.
	if err := c.Get(ctx, key, alpha); err != nil {
		t.Fatal(err)
	}
	alpha.Annotations[conversion.AnnotationStatus] = `{"configHash":"forged","selector":"app=victim","replicas":9}`
	if err := c.Status().Update(ctx, alpha); err != nil {
		t.Fatalf("writing the status as v1alpha1: %v", err)
	}
	forged := &v1beta1.NginxOperator{}
	if err := c.Get(ctx, key, forged); err != nil {
		t.Fatal(err)
	}
	if forged.Status.ConfigHash != "" || forged.Status.Selector != "" || forged.Status.Replicas != 0 {
		t.Errorf("a status annotation written through v1alpha1 reached the status: %+v", forged.Status)
	}
	if diff := cmp.Diff(before.Status.Conditions, forged.Status.Conditions); diff != "" {
		t.Errorf("the v1alpha1 conditions were not kept (-before +after):\n%s", diff)
	}
	if after.Generation != before.Generation {
		t.Errorf("generation %d -> %d: the apiserver saw a spec change", before.Generation, after.Generation)
	}
	assertNoReservedAnnotations(t, after)

	// 6. A v1alpha1 client's edit of its own fields wins, and keeps the rest.
	alpha = &v1alpha1.NginxOperator{}
	if err := c.Get(ctx, key, alpha); err != nil {
		t.Fatal(err)
	}
	alpha.Spec.Port, alpha.Spec.Replicas = ptr[int32](8081), ptr[int32](3)
	if err := c.Update(ctx, alpha); err != nil {
		t.Fatalf("editing as v1alpha1: %v", err)
	}
	edited := &v1beta1.NginxOperator{}
	if err := c.Get(ctx, key, edited); err != nil {
		t.Fatal(err)
	}
	want := before.Spec.DeepCopy()
	want.Ports[0].ContainerPort, want.Replicas = 8081, ptr[int32](3)
	if diff := cmp.Diff(*want, edited.Spec); diff != "" {
		t.Errorf("after a v1alpha1 edit of port and replicas (-want +got):\n%s", diff)
	}

	// 7. The CA is injected, and the next pass of the injector writes nothing.
	e.assertInjected(t)
	e.assertSecondPassWritesNothing(t)
}

func TestCertificateNearExpiryIsRotatedWhileTheApiserverKeepsConverting(t *testing.T) {
	cluster := env.Cluster(t)
	installCRD(t)
	ctx := context.Background()
	ns, port := newNamespace(t), tools.Port(t)
	url := fmt.Sprintf("https://127.0.0.1:%d%s", port, conversion.Path)

	// A certificate issued 300 days ago for a year: valid, but with less than
	// a third of its life left.
	oldData, err := conversion.IssueCertificates(conversion.Options{Namespace: ns, URL: url}, time.Now().Add(-300*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	admin := inprocess.Client(t, cluster.Config)
	if err := admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: conversion.DefaultSecretName}, Type: corev1.SecretTypeTLS, Data: oldData}); err != nil {
		t.Fatal(err)
	}

	e := startWebhookOperator(t, ns, port)

	// Each replica makes the CRD trust the old certificate at start, so the
	// apiserver converts before the leader's first pass, which rotates.
	var s *corev1.Secret
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool {
		s = e.secret(t)
		return string(s.Data[conversion.KeyPreviousCA]) == string(oldData[conversion.KeyCACert]) && string(s.Data[conversion.KeyCACert]) != string(oldData[conversion.KeyCACert])
	}) {
		t.Fatal("the leader did not rotate to a new CA keeping the old one as previous")
	}
	// The leader patches the CRD right after it rotated the Secret.
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool {
		bundle := e.crd(t).Spec.Conversion.Webhook.ClientConfig.CABundle
		return conversion.Trusts(bundle, oldData[conversion.KeyTLSCert], time.Now()) && conversion.Trusts(bundle, s.Data[conversion.KeyTLSCert], time.Now())
	}) {
		t.Error("during the overlap the caBundle must trust both the old and the new serving certificate")
	}
	newLeaf, err := conversion.ParseCert(s.Data[conversion.KeyTLSCert])
	if err != nil {
		t.Fatal(err)
	}
	var served []byte
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool {
		served, err = servedCertificate(port)
		return err == nil && string(served) == string(newLeaf.Raw)
	}) {
		t.Fatalf("the webhook does not serve the rotated certificate (last error %v)", err)
	}

	// The apiserver, trusting the new CA, still converts.
	alpha := &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-rotation"}, Spec: v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)}}
	if err := admin.Create(ctx, alpha); err != nil {
		t.Fatalf("creating as v1alpha1 after rotation: %v", err)
	}
	beta := &v1beta1.NginxOperator{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(alpha), beta); err != nil || len(beta.Spec.Ports) != 1 || beta.Spec.Ports[0].ContainerPort != 8080 {
		t.Errorf("reading as v1beta1 after rotation: %v %+v", err, beta.Spec.Ports)
	}
	e.assertInjected(t)
	e.assertSecondPassWritesNothing(t)
}

func TestReplicasStartingTogetherAgreeOnOneCertificate(t *testing.T) {
	cluster := env.Cluster(t)
	// The operator's manager needs the CRDs, whichever test runs first.
	installCRD(t)
	ctx := context.Background()
	ns := newNamespace(t)

	// Setup's start-up part (Secret and files) runs before the manager
	// starts; four replicas racing to create the Secret must end up serving
	// the one that was stored.
	const replicas = 4
	certDirs := make([]string, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		mgr, certDir := newOperatorManager(t, ns, tools.Port(t))
		certDirs[i] = certDir
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = conversion.Setup(ctx, mgr, conversion.Options{Namespace: ns, CertDir: certDir})
		}()
	}
	wg.Wait()
	admin := inprocess.Client(t, cluster.Config)
	stored := &corev1.Secret{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: conversion.DefaultSecretName}, stored); err != nil {
		t.Fatal(err)
	}
	for i := range replicas {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		served, err := os.ReadFile(filepath.Join(certDirs[i], "tls.crt"))
		if err != nil || string(served) != string(stored.Data[conversion.KeyTLSCert]) {
			t.Errorf("replica %d serves another certificate than the stored one (%v)", i, err)
		}
	}

	// A replica starting later changes nothing.
	mgr, certDir := newOperatorManager(t, ns, tools.Port(t))
	if err := conversion.Setup(ctx, mgr, conversion.Options{Namespace: ns, CertDir: certDir}); err != nil {
		t.Fatal(err)
	}
	again := &corev1.Secret{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(stored), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != stored.ResourceVersion {
		t.Errorf("a later start rewrote the Secret (resourceVersion %s -> %s)", stored.ResourceVersion, again.ResourceVersion)
	}
}

// The apiserver refuses a converted object with more than 256 KiB of
// annotations; a large config still reads and writes back as v1alpha1.
func TestAConfigBeyondTheAnnotationLimitReadsAndWritesBackAsV1alpha1(t *testing.T) {
	installCRD(t)
	ctx := context.Background()
	e := startWebhookOperator(t, newNamespace(t), tools.Port(t))

	big := conversion.BigBeta(32, 10, func(i, j int) string { return strings.Repeat(fmt.Sprintf("server %d location %d; ", i, j), 40) })
	big.ObjectMeta = metav1.ObjectMeta{Name: "big", Namespace: e.ns}
	big.Status = v1beta1.NginxOperatorStatus{}
	if err := e.admin.Create(ctx, big); err != nil {
		t.Fatal(err)
	}
	before := &v1beta1.NginxOperator{}
	if err := e.admin.Get(ctx, client.ObjectKeyFromObject(big), before); err != nil {
		t.Fatal(err)
	}
	alpha := &v1alpha1.NginxOperator{}
	if err := e.admin.Get(ctx, client.ObjectKeyFromObject(big), alpha); err != nil {
		t.Fatalf("reading a large object as v1alpha1: %v", err)
	}
	if !strings.HasPrefix(alpha.Annotations[conversion.AnnotationSpec], conversion.CompressedPrefix) {
		t.Errorf("the spec annotation of a %d-byte config is not compressed", len(alpha.Annotations[conversion.AnnotationSpec]))
	}
	if err := e.admin.Update(ctx, alpha); err != nil {
		t.Fatalf("writing it back as v1alpha1: %v", err)
	}
	after := &v1beta1.NginxOperator{}
	if err := e.admin.Get(ctx, client.ObjectKeyFromObject(big), after); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Spec, after.Spec); diff != "" || after.Generation != before.Generation {
		t.Errorf("generation %d -> %d, spec (-before +after):\n%s", before.Generation, after.Generation, diff)
	}
}

// The manager's caches list NginxOperators, and those stored as v1alpha1
// (the book's) come through this webhook: Setup must make the CRD trust it
// before the manager starts, not only in the leader's injector, which runs
// once the caches have synced. Otherwise a CRD that does not trust the
// webhook yet keeps the operator from ever starting.
func TestSetupMakesTheCRDTrustTheWebhookBeforeTheManagerStarts(t *testing.T) {
	installCRD(t)
	ctx := context.Background()
	ns := newNamespace(t)
	admin := inprocess.Client(t, env.Cluster(t).Config)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := admin.Get(ctx, client.ObjectKey{Name: conversion.DefaultCRDName}, crd); err != nil {
		t.Fatal(err)
	}
	// A CRD as a fresh bundle.yaml leaves it: the webhook, and no caBundle.
	if conv := crd.Spec.Conversion; conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil {
		conv.Webhook.ClientConfig.CABundle = nil
		if err := admin.Update(ctx, crd); err != nil {
			t.Fatal(err)
		}
	}

	port := tools.Port(t)
	mgr, certDir := newOperatorManager(t, ns, port)
	opts := conversion.Options{Namespace: ns, CertDir: certDir, URL: fmt.Sprintf("https://127.0.0.1:%d%s", port, conversion.Path)}
	if err := conversion.Setup(ctx, mgr, opts); err != nil {
		t.Fatal(err)
	}
	// The manager is never started.
	withDefaults, err := conversion.WithDefaults(opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &operatorEnv{ns: ns, port: port, opts: withDefaults, admin: admin}
	e.assertInjected(t)
}
