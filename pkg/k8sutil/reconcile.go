package k8sutil

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// SetCondition sets condition typ on conds for an object at generation,
// keeping lastTransitionTime while the status holds, so that setting the same
// condition again leaves the status equal and costs no write.
func SetCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: generation,
	})
}

// HadReason is true when conds holds condition typ with reason: Events are
// sent on transitions only, and this says whether one happened.
func HadReason(conds []metav1.Condition, typ, reason string) bool {
	c := meta.FindStatusCondition(conds, typ)
	return c != nil && c.Reason == reason
}

// StatusReconciler is the reconcile loop of a custom resource of type T (a
// pointer type): read it from the cache, forget a deleted one, leave one being
// deleted to the garbage collector, let Sync apply its children and compute
// its status in place, patch the status when it changed, and classify the
// error Sync returned (see SpecError and ReferenceError).
type StatusReconciler[T client.Object] struct {
	Client client.Client
	// New returns an empty object to read into.
	New func() T
	// Forget drops what the controller keeps about a deleted object, such as
	// its metrics series; optional.
	Forget func(types.NamespacedName)
	// Sync applies what obj asks for and sets obj's status. It runs on a copy
	// of the cached object; the skeleton writes the status that results.
	Sync func(ctx context.Context, obj T) (reconcile.Result, error)
}

// Reconcile implements reconcile.Reconciler.
func (r *StatusReconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if client.IgnoreNotFound(err) == nil && r.Forget != nil {
			r.Forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		// The children go with it through their owner references.
		return reconcile.Result{}, nil
	}
	original := obj.DeepCopyObject().(client.Object)
	ctx, applied := withAppliedEvents(ctx)
	result, err := r.Sync(ctx, obj)
	applied.flush()
	if statusErr := patchStatus(ctx, r.Client, obj, original); statusErr != nil {
		return reconcile.Result{}, errors.Join(err, statusErr)
	}
	return Classify(result, err)
}

// Classify turns Sync's error into what the controller should do next.
func Classify(result reconcile.Result, err error) (reconcile.Result, error) {
	var specErr *SpecError
	var refErr *ReferenceError
	switch {
	case errors.As(err, &specErr):
		return reconcile.Result{}, reconcile.TerminalError(err)
	case errors.As(err, &refErr) && refErr.watched:
		return reconcile.Result{}, nil
	case errors.As(err, &refErr):
		return reconcile.Result{RequeueAfter: ReferenceRetry}, nil
	}
	return result, err
}

// Deps are what every controller reads and writes the API with.
type Deps struct {
	// Client reads from the cache (the custom resources and the children,
	// selected by the managed-by label) and writes.
	Client client.Client
	// APIReader reads users' objects (Secrets, ConfigMaps, Services a spec
	// names) directly: they are not in the operator's cache.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  recorder.EventRecorder
	// Applier writes the children, reading them from the cache.
	Applier *Applier
}

// eventSource is the name Events of the operator are reported by.
const eventSource = "nginx-operator"

// NewDeps are mgr's clients, scheme and Event recorder, with an Applier that
// reads from the cache.
func NewDeps(mgr manager.Manager) Deps {
	return Deps{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder(eventSource),
		Applier:   &Applier{Client: mgr.GetClient(), Reader: mgr.GetClient(), Live: mgr.GetAPIReader(), Scheme: mgr.GetScheme()},
	}
}

// patchStatus writes obj's status through the status subresource, as a merge
// patch against original, only when the two statuses differ: an unchanged
// status costs no request. meta.SetStatusCondition keeps a condition's
// lastTransitionTime while its status holds, so re-setting the same
// conditions leaves the status equal. A deleted object is not an error.
func patchStatus(ctx context.Context, c client.Client, obj, original client.Object) error {
	now, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	was, err := runtime.DefaultUnstructuredConverter.ToUnstructured(original)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(now["status"], was["status"]) {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(original)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}
