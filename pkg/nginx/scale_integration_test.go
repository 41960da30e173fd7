//go:build !unit

package nginx_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// nginxOperators is the resource an autoscaler's scaleTargetRef
// {apiVersion: nginx.operator.dev/v1beta1, kind: NginxOperator} resolves to.
var nginxOperators = schema.GroupResource{Group: v1beta1.GroupVersion.Group, Resource: "nginxoperators"}

// scaleClient is the polymorphic scale client the HorizontalPodAutoscaler
// controller uses: it finds the resource and its Scale kind by discovery.
func scaleClient(t *testing.T) scale.ScalesGetter {
	t.Helper()
	cfg := env.Cluster(t).Config
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	sc, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(dc))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// waitForStatefulSetReplicas waits until the instance's StatefulSet asks for want replicas.
func waitForStatefulSetReplicas(ctx context.Context, t *testing.T, c client.Client, ns, name string, want int32) {
	t.Helper()
	var sts appsv1.StatefulSet
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor(name).StatefulSet}, &sts) == nil &&
			ptr.Deref(sts.Spec.Replicas, -1) == want
	}) {
		t.Fatalf("StatefulSet of %s: replicas %v, want %d", name, sts.Spec.Replicas, want)
	}
}

// TestAutoscalerScalesAnInstanceThroughItsScaleSubresource does what a
// HorizontalPodAutoscaler targeting an NginxOperator does: read /scale (the
// current replicas and the selector it counts pods with), then write /scale
// with the resourceVersion it read. The write lands in spec.replicas and the
// operator carries it to the StatefulSet.
func TestAutoscalerScalesAnInstanceThroughItsScaleSubresource(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	scales := scaleClient(t).Scales(ns)

	if err := c.Create(ctx, instance(ns, "web")); err != nil { // replicas: 2
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "web") }) {
		t.Fatal("web was not reconciled")
	}
	waitForStatefulSetReplicas(ctx, t, c, ns, "web", 2)

	s, err := scales.Get(ctx, nginxOperators, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("GET /scale: %v", err)
	}
	if s.Spec.Replicas != 2 {
		t.Errorf("GET /scale: spec.replicas %d, want 2", s.Spec.Replicas)
	}
	// The selector is how the autoscaler finds the pods whose metrics it
	// averages: it must select exactly this instance's pods.
	sel, err := labels.Parse(s.Status.Selector)
	if err != nil || s.Status.Selector == "" {
		t.Fatalf("GET /scale: status.selector %q: %v", s.Status.Selector, err)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("web").StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(sts.Spec.Template.Labels)) {
		t.Errorf("status.selector %q does not select the pods (labels %v)", s.Status.Selector, sts.Spec.Template.Labels)
	}
	otherPods := labels.Set{}
	for k, v := range sts.Spec.Template.Labels {
		otherPods[k] = v
	}
	otherPods["app.kubernetes.io/instance"] = "other"
	if sel.Matches(otherPods) {
		t.Errorf("status.selector %q also selects the pods of another instance (labels %v)", s.Status.Selector, otherPods)
	}

	s.Spec.Replicas = 3 // s carries the resourceVersion read above, as the HPA's update does
	if _, err := scales.Update(ctx, nginxOperators, s, metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"}); err != nil {
		t.Fatalf("PUT /scale: %v", err)
	}
	var n v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &n); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(n.Spec.Replicas, -1); got != 3 {
		t.Errorf("spec.replicas after PUT /scale = %d, want 3", got)
	}
	waitForStatefulSetReplicas(ctx, t, c, ns, "web", 3)
}

// TestScaleSubresourceOfAnInstanceWithoutReplicas pins the API server's
// contract for an instance created without spec.replicas, the one the
// documentation's autoscaling advice depends on: GET /scale fails (the CRD
// scale subresource reads spec.replicas and refuses when it is absent, so an
// HPA targeting such an instance reports FailedGetScale), while a write
// through /scale that does not read first (kubectl scale's merge patch) sets
// spec.replicas, from which point the operator owns the StatefulSet's
// replicas and GET /scale works. If this test starts failing at the first
// step, spec.replicas has become defaulted: revisit the field's
// documentation and TestInvalidConfigPausedAndUnownedReplicas.
func TestScaleSubresourceOfAnInstanceWithoutReplicas(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	scales := scaleClient(t).Scales(ns)

	free := instance(ns, "free")
	free.Spec.Replicas = nil
	if err := c.Create(ctx, free); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return reconciled(ctx, c, ns, "free") }) {
		t.Fatal("free was not reconciled")
	}

	_, err := scales.Get(ctx, nginxOperators, "free", metav1.GetOptions{})
	if err == nil {
		t.Fatal("GET /scale of an instance without spec.replicas succeeded: spec.replicas is now always present (defaulted?); " +
			"the 'unset = not owned' documentation and TestInvalidConfigPausedAndUnownedReplicas no longer hold")
	}
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `".spec.replicas" does not exist`) {
		t.Fatalf("GET /scale of an instance without spec.replicas: %v; want the API server's internal error naming .spec.replicas", err)
	}

	patch := []byte(`{"spec":{"replicas":3}}`)
	if _, err := scales.Patch(ctx, v1beta1.GroupVersion.WithResource("nginxoperators"), "free", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("merge patch of /scale (kubectl scale): %v", err)
	}
	var n v1beta1.NginxOperator
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "free"}, &n); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(n.Spec.Replicas, -1); got != 3 {
		t.Errorf("spec.replicas after patching /scale = %d, want 3", got)
	}
	waitForStatefulSetReplicas(ctx, t, c, ns, "free", 3)
	var s *autoscalingv1.Scale
	if s, err = scales.Get(ctx, nginxOperators, "free", metav1.GetOptions{}); err != nil || s.Spec.Replicas != 3 {
		t.Errorf("GET /scale once spec.replicas is set: %+v, %v; want spec.replicas 3", s, err)
	}
}
