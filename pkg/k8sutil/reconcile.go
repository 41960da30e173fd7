package k8sutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// The three controllers share one reconcile skeleton (StatusReconciler) and
// one classification of what goes wrong:
//
//   - a SpecError is a spec that cannot be applied as it is: terminal, it
//     is not retried until the spec changes (which triggers a reconcile);
//   - a ReferenceError names an object the user must create or fix (a
//     Secret, a Service, a name taken by someone else's object): looked at
//     again every ReferenceRetry, without an error backoff storm, because
//     the operator does not watch users' objects;
//   - anything else is transient and retried with backoff.
//
// Both carry the CamelCase reason their condition and Event report, which
// the errors metric is labelled with.

// ReferenceRetry is how often an object waiting for something the user must
// create looks again.
const ReferenceRetry = 15 * time.Second

// SpecError is a spec that cannot be applied as it is.
type SpecError struct{ reason, msg string }

func (e *SpecError) Error() string  { return e.msg }
func (e *SpecError) Reason() string { return e.reason }

// InvalidSpec returns a SpecError with reason and a formatted message.
func InvalidSpec(reason, format string, args ...any) error {
	return &SpecError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// ReferenceError names an object the user must create or fix.
type ReferenceError struct{ reason, msg string }

func (e *ReferenceError) Error() string  { return e.msg }
func (e *ReferenceError) Reason() string { return e.reason }

// MissingReference returns a ReferenceError with reason and a formatted message.
func MissingReference(reason, format string, args ...any) error {
	return &ReferenceError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// ReasonNameConflict is the reason of a child whose name is taken by an
// object its owner does not control.
const ReasonNameConflict = "NameConflict"

// nameTaken is the ReferenceError of a kind/name child that owner would
// get, were the name not taken by an object owner does not control.
func nameTaken(kind, name string, owner client.Object, scheme *runtime.Scheme) error {
	ownerKind := "owner"
	if gvk, err := apiutil.GVKForObject(owner, scheme); err == nil {
		ownerKind = gvk.Kind
	}
	return MissingReference(ReasonNameConflict, "%s %q already exists and is not controlled by this %s: delete or rename it, or rename the %s",
		kind, name, ownerKind, ownerKind)
}

// ReasonOf is the reason err reports (SpecError, ReferenceError or any error
// with a Reason method in its chain), or fallback.
func ReasonOf(err error, fallback string) string {
	var r interface{ Reason() string }
	if errors.As(err, &r) && r.Reason() != "" {
		return r.Reason()
	}
	return fallback
}

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
	if statusErr := PatchStatus(ctx, r.Client, obj, original); statusErr != nil {
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
	case errors.As(err, &refErr):
		return reconcile.Result{RequeueAfter: ReferenceRetry}, nil
	}
	return result, err
}

// ReasonApplyFailed is the reason of an error applying a child.
const ReasonApplyFailed = "ApplyFailed"

// ApplyError is a child the API refused. It unwraps to the API's error, so
// apierrors.IsInvalid and the like still tell what kind of refusal it was.
type ApplyError struct{ Err error }

func (e *ApplyError) Error() string  { return e.Err.Error() }
func (e *ApplyError) Unwrap() error  { return e.Err }
func (e *ApplyError) Reason() string { return ReasonApplyFailed }

// ApplyOwned makes owner the controller of child and applies child, unless
// child's name is taken by an object owner does not control: that is a
// ReferenceError (ReasonNameConflict) and the object is left as it is. A
// child the API refused is reported at once in a Warning Event
// (ApplyFailed) on owner. A child that was created or changed is reported in
// a Normal Event too, but inside a StatusReconciler's Sync those are gathered
// into one Event per reconcile (see appliedEvents), so a new instance costs
// one Event rather than one per child.
func (a *Applier) ApplyOwned(ctx context.Context, rec recorder.EventRecorder, owner, child client.Object) (Outcome, error) {
	if err := SetOwner(owner, child, a.Scheme); err != nil {
		return "", &ApplyError{Err: err}
	}
	outcome, err := a.apply(ctx, child, owner)
	var taken *ReferenceError
	switch {
	case errors.As(err, &taken):
		return "", err
	case err != nil:
		rec.Eventf(owner, child, corev1.EventTypeWarning, ReasonApplyFailed, "Apply", "%v", err)
		return "", &ApplyError{Err: err}
	}
	if outcome != Unchanged {
		gvk, _ := apiutil.GVKForObject(child, a.Scheme)
		if batch := appliedEventsFrom(ctx); batch != nil {
			batch.add(rec, owner, outcome, gvk.Kind+" "+child.GetName())
		} else {
			rec.Eventf(owner, child, corev1.EventTypeNormal, string(outcome), "Apply", "%s %s %s", outcome, gvk.Kind, child.GetName())
		}
	}
	return outcome, nil
}

// ReasonApplied is the reason of a reconcile's summary Event when it both
// created and updated children; one that only created reports Created, one
// that only updated reports Updated.
const ReasonApplied = "Applied"

// appliedEvents gathers the children one reconcile created or updated, per
// owner, so that flush records one Normal Event per owner summarising them.
type appliedEvents struct {
	mu     sync.Mutex
	owners []*ownerChanges
}

type ownerChanges struct {
	rec              recorder.EventRecorder
	owner            client.Object
	created, updated []string
}

type appliedEventsKey struct{}

func withAppliedEvents(ctx context.Context) (context.Context, *appliedEvents) {
	batch := &appliedEvents{}
	return context.WithValue(ctx, appliedEventsKey{}, batch), batch
}

func appliedEventsFrom(ctx context.Context) *appliedEvents {
	batch, _ := ctx.Value(appliedEventsKey{}).(*appliedEvents)
	return batch
}

func (b *appliedEvents) add(rec recorder.EventRecorder, owner client.Object, outcome Outcome, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var oc *ownerChanges
	for _, o := range b.owners {
		if o.owner.GetUID() == owner.GetUID() && o.owner.GetName() == owner.GetName() && o.owner.GetNamespace() == owner.GetNamespace() {
			oc = o
			break
		}
	}
	if oc == nil {
		oc = &ownerChanges{rec: rec, owner: owner}
		b.owners = append(b.owners, oc)
	}
	if outcome == Created {
		oc.created = append(oc.created, what)
	} else {
		oc.updated = append(oc.updated, what)
	}
}

// flush records the summary Events, such as "Created ServiceAccount web,
// Secret web-config-1a2b, StatefulSet web".
func (b *appliedEvents) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range b.owners {
		var parts []string
		reason := ReasonApplied
		switch {
		case len(o.updated) == 0:
			reason = string(Created)
		case len(o.created) == 0:
			reason = string(Updated)
		}
		if len(o.created) > 0 {
			parts = append(parts, "Created "+strings.Join(o.created, ", "))
		}
		if len(o.updated) > 0 {
			parts = append(parts, "Updated "+strings.Join(o.updated, ", "))
		}
		o.rec.Eventf(o.owner, nil, corev1.EventTypeNormal, reason, "Apply", "%s", strings.Join(parts, "; "))
	}
	b.owners = nil
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

// EventSource is the name Events of the operator are reported by.
const EventSource = "nginx-operator"

// NewDeps are mgr's clients, scheme and Event recorder, with an Applier that
// reads from the cache.
func NewDeps(mgr manager.Manager) Deps {
	return Deps{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder(EventSource),
		Applier:   &Applier{Client: mgr.GetClient(), Reader: mgr.GetClient(), Live: mgr.GetAPIReader(), Scheme: mgr.GetScheme()},
	}
}
