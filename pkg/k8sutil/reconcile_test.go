package k8sutil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// The skeleton is exercised with a built-in kind that has a status
// subresource (a Namespace's phase stands for a custom resource's status).
func newLoop(t *testing.T, sync func(context.Context, *corev1.Namespace) (reconcile.Result, error), objs ...client.Object) (*k8sutil.StatusReconciler[*corev1.Namespace], *int, *[]types.NamespacedName) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	patches := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&corev1.Namespace{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	var forgotten []types.NamespacedName
	return &k8sutil.StatusReconciler[*corev1.Namespace]{
		Client: c,
		New:    func() *corev1.Namespace { return &corev1.Namespace{} },
		Forget: func(key types.NamespacedName) { forgotten = append(forgotten, key) },
		Sync:   sync,
	}, &patches, &forgotten
}

func TestStatusReconcilerWritesTheStatusOnlyWhenItChangesAndClassifiesErrors(t *testing.T) {
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "team-a"}}
	setPhase := func(phase corev1.NamespacePhase, err error) func(context.Context, *corev1.Namespace) (reconcile.Result, error) {
		return func(_ context.Context, ns *corev1.Namespace) (reconcile.Result, error) {
			ns.Status.Phase = phase
			return reconcile.Result{}, err
		}
	}
	for _, tc := range []struct {
		name        string
		sync        func(context.Context, *corev1.Namespace) (reconcile.Result, error)
		wantPatches int
		wantResult  reconcile.Result
		wantErr     func(error) bool
	}{
		{"an unchanged status costs no write", setPhase(corev1.NamespaceActive, nil), 0, reconcile.Result{}, func(err error) bool { return err == nil }},
		{"a changed status is patched", setPhase(corev1.NamespaceTerminating, nil), 1, reconcile.Result{}, func(err error) bool { return err == nil }},
		{"a spec error is terminal, and the status is still written", setPhase(corev1.NamespaceTerminating, k8sutil.InvalidSpec("InvalidConfig", "bad")), 1, reconcile.Result{},
			func(err error) bool {
				return errors.Is(err, reconcile.TerminalError(nil)) && k8sutil.ReasonOf(err, "") == "InvalidConfig"
			}},
		{"a missing reference is looked at again later without an error", setPhase(corev1.NamespaceActive, k8sutil.MissingReference("SecretNotFound", "no")), 0,
			reconcile.Result{RequeueAfter: k8sutil.ReferenceRetry}, func(err error) bool { return err == nil }},
		{"a missing watched reference waits for its watch event", setPhase(corev1.NamespaceActive, k8sutil.MissingWatchedReference("SecretNotFound", "no")), 0,
			reconcile.Result{}, func(err error) bool { return err == nil }},
		{"another error is returned for a retry with backoff", setPhase(corev1.NamespaceActive, errors.New("timeout")), 0, reconcile.Result{},
			func(err error) bool { return err != nil && err.Error() == "timeout" }},
		{"Sync's own requeue is kept", func(context.Context, *corev1.Namespace) (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}, 0, reconcile.Result{RequeueAfter: time.Minute}, func(err error) bool { return err == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
			loop, patches, _ := newLoop(t, tc.sync, ns)
			res, err := loop.Reconcile(ctx, req)
			if !tc.wantErr(err) {
				t.Errorf("error %v", err)
			}
			if res != tc.wantResult {
				t.Errorf("result %+v, want %+v", res, tc.wantResult)
			}
			if *patches != tc.wantPatches {
				t.Errorf("%d status patches, want %d", *patches, tc.wantPatches)
			}
		})
	}
}

func TestStatusReconcilerForgetsDeletedObjectsAndSkipsTerminatingOnes(t *testing.T) {
	ctx := context.Background()
	called := 0
	sync := func(context.Context, *corev1.Namespace) (reconcile.Result, error) {
		called++
		return reconcile.Result{}, nil
	}
	loop, _, forgotten := newLoop(t, sync)
	if _, err := loop.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	if len(*forgotten) != 1 || (*forgotten)[0].Name != "gone" || called != 0 {
		t.Errorf("a deleted object: forgotten %v, Sync called %d times", *forgotten, called)
	}

	now := metav1.Now()
	dying := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dying", DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}}
	loop, _, _ = newLoop(t, sync, dying)
	if _, err := loop.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: "dying"}}); err != nil {
		t.Fatal(err)
	}
	if called != 0 {
		t.Errorf("Sync ran on an object being deleted")
	}
}
