package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// conversionInstances is the size of the conversion webhook outage test,
// and minOutage how long at least its webhook stays down.
const (
	conversionInstances = 20
	minOutage           = 10 * time.Second
)

var v1alpha1Resource = schema.GroupVersionResource{Group: "nginx.operator.dev", Version: "v1alpha1", Resource: "nginxoperators"}

// conversionURL is the URL the NginxOperator CRD sends conversions to, ""
// when it names none (no webhook, or the bundle's Service).
func conversionURL(ctx context.Context, t *testing.T, cl *framework.Cluster) string {
	t.Helper()
	crds := dynamic.NewForConfigOrDie(cl.Config).Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	crd, err := crds.Get(ctx, conversion.DefaultCRDName, metav1.GetOptions{})
	if err != nil {
		t.Logf("reading the CRD: %v", err)
		return ""
	}
	url, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "url")
	return url
}

// bookInstance is a v1alpha1 NginxOperator as the book's readers write it.
func bookInstance(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nginx.operator.dev/v1alpha1",
		"kind":       "NginxOperator",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"port": int64(8080), "replicas": int64(1)},
	}}
}

// TestConversionWebhookOutageFailsOnlyV1alpha1 stops both operator
// replicas, and with them the conversion webhook the CRD points at. While it
// is down, v1alpha1 reads and writes fail with an error naming the
// conversion webhook, and v1beta1 (the storage version) keeps working:
// list, create, update, delete. Once the operators are back, v1alpha1 works
// again and every instance, including those written during the outage,
// converges.
func TestConversionWebhookOutageFailsOnlyV1alpha1(t *testing.T) {
	ctx, cl, ns, w, r := setUp(t)
	dyn := dynamic.NewForConfigOrDie(cl.Config).Resource(v1alpha1Resource).Namespace(ns)

	for i := range conversionInstances {
		if err := w.create(ctx, instanceName(i), 1, 60); err != nil {
			t.Fatal(err)
		}
	}
	// The leader points the CRD at its webhook: v1alpha1 works. Both are
	// waited for: a v1alpha1 read alone does not tell which webhook, if
	// any, converted it, and the outage must take down the one in use.
	v1alpha1Works := func(ctx context.Context) bool {
		_, err := dyn.Get(ctx, instanceName(0), metav1.GetOptions{})
		return err == nil
	}
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		_, leader := r.leader()
		return leader != nil && conversionURL(ctx, t, cl) == leader.WebhookURL
	}) {
		t.Fatalf("the CRD's conversion webhook is %q, never the leader's", conversionURL(ctx, t, cl))
	}
	if !framework.WaitFor(ctx, 2*time.Minute, v1alpha1Works) {
		t.Fatal("v1alpha1 reads never worked with the operators running")
	}
	w.set("book", want{replicas: 1})
	if _, err := dyn.Create(ctx, bookInstance(ns, "book"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a v1alpha1 instance: %v", err)
	}

	r.stopAll()
	down := time.Now()

	mustFailWithWebhook := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s with the conversion webhook down: no error", what)
		} else if !strings.Contains(err.Error(), "conversion webhook") {
			t.Errorf("%s with the conversion webhook down: %v; want an error naming the conversion webhook", what, err)
		} else {
			t.Logf("%s while the webhook is down: %v", what, err)
		}
	}
	_, err := dyn.Get(ctx, instanceName(0), metav1.GetOptions{})
	mustFailWithWebhook("v1alpha1 get", err)
	_, err = dyn.Create(ctx, bookInstance(ns, "book-during-outage"), metav1.CreateOptions{})
	mustFailWithWebhook("v1alpha1 create", err)

	// v1beta1, the storage version, needs no conversion.
	if n, total := w.observed(ctx); total != conversionInstances+1 {
		t.Errorf("v1beta1 list with the webhook down: %d instances (%d observed), want %d", total, n, conversionInstances+1)
	}
	if err := w.create(ctx, "during-outage", 1, 60); err != nil {
		t.Errorf("v1beta1 create with the webhook down: %v", err)
	}
	for i := range conversionInstances / 2 {
		if err := w.setKeepalive(ctx, instanceName(i), 61); err != nil {
			t.Errorf("v1beta1 update with the webhook down: %v", err)
		}
	}
	if err := w.delete(ctx, instanceName(conversionInstances-1)); err != nil {
		t.Errorf("v1beta1 delete with the webhook down: %v", err)
	}
	// Stay down a while: v1alpha1 keeps failing, it does not recover by
	// itself (a window in which nothing may change, checked every second).
	for time.Since(down) < minOutage {
		_, err := dyn.Get(ctx, instanceName(1), metav1.GetOptions{})
		if err == nil || !strings.Contains(err.Error(), "conversion webhook") {
			t.Fatalf("v1alpha1 get %.1fs into the outage: %v; want an error naming the conversion webhook", time.Since(down).Seconds(), err)
		}
		time.Sleep(time.Second)
	}
	outage := time.Since(down)

	r.startAll()
	up := time.Now()
	if !framework.WaitFor(ctx, 2*time.Minute, v1alpha1Works) {
		t.Fatal("v1alpha1 reads did not work again after the operators returned")
	}
	back := time.Since(up)
	if _, err := dyn.Create(ctx, bookInstance(ns, "book-after-outage"), metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a v1alpha1 instance after the outage: %v", err)
	}
	w.set("book-after-outage", want{replicas: 1})
	t.Logf("webhook down for %.1fs; v1alpha1 served again %.1fs after the operators started", outage.Seconds(), back.Seconds())

	took := w.waitConverged(ctx, t, 3*time.Minute)
	t.Logf("%d instances converged %.1fs after v1alpha1 worked again", w.live(), took.Seconds())
	checkIdle(t, measureIdle(t, cl, r, idleWindow/2), operatorReplicas)
}
