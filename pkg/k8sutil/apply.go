package k8sutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// AppliedHashAnnotation records the hash of the apply body the operator last
// sent for an object. Equal hashes mean the operator still wants exactly what
// it last applied; a different hash means it now sets other fields or other
// values, including a field it stopped setting, which must be applied so the
// API server releases it. Neither the live values nor the ownership record
// can tell that a field was dropped from the desired state.
const AppliedHashAnnotation = "nginx.operator.dev/applied-hash"

// Outcome says what Apply did.
type Outcome string

const (
	// Unchanged: the live object already matched; no request was sent.
	Unchanged Outcome = "Unchanged"
	// Created: the object did not exist and was created.
	Created Outcome = "Created"
	// Updated: the live object differed and was patched.
	Updated Outcome = "Updated"
)

// Applier writes desired objects with server-side apply under the field manager
// ManagedBy, sending nothing when the live object already matches.
type Applier struct {
	// Client sends the apply requests.
	Client client.Client
	// Reader reads the live objects; in the operator it is the informer cache, so
	// a steady-state reconcile costs no API request at all. It must return
	// metadata.managedFields (the operator's cache keeps them): without them
	// every Apply sends its request.
	Reader client.Reader
	// Scheme knows the Go types of the desired objects.
	Scheme *runtime.Scheme
	// Live reads an object the API server holds but Reader does not (see
	// createOnlyVersion); in the operator it reads the API directly. Nil: Reader.
	Live client.Reader
}

// createOnlyVersion is the metadata.resourceVersion Apply sends with an
// object Reader does not have. The API server ignores a resourceVersion when
// an apply creates the object, and otherwise refuses the apply with a
// Conflict unless the live object has that very version: etcd revisions are
// int64 and never reach this one, so the request creates the object or
// fails, atomically, and never changes an object Reader did not show. That
// is how an object someone else made under a child's name (outside the
// operator's cache, which holds only its own labelled objects) is never
// taken over, at no extra request for a name that is free.
const createOnlyVersion = "9223372036854775807"

// Apply makes the live object match desired in every field desired sets, using
// server-side apply with forced ownership (the operator is the authority on
// the fields it sets; fields it does not set stay with whoever set them).
//
// The request is skipped only when both hold:
//   - the live object carries the applied hash of this very apply body, so
//     the operator wants exactly what it last applied (see
//     AppliedHashAnnotation);
//   - every field of the body is still owned by ManagedBy in the live
//     object's metadata.managedFields (its Apply record). The API server
//     takes a field out of that record whenever anyone else changes or
//     removes it, or force-applies another value, so an intact record means
//     nobody touched the operator's fields since its last apply. This catches
//     drift to and from zero values (false, 0, ""), which a comparison of
//     values against a typed Go object cannot tell from "unset", and it
//     ignores what the API server legitimately adds (defaults) or what other
//     managers set in fields the operator does not own.
//
// Anything else, including a live object without a usable ownership record,
// sends the apply request; a no-op apply changes nothing on the server. An
// object Reader does not have is created only if the name is free (see
// createOnlyVersion); if it is taken, Apply reads the live object and goes on
// with it as above. desired is not modified.
func (a *Applier) Apply(ctx context.Context, desired client.Object) (Outcome, error) {
	return a.apply(ctx, desired, nil, nil)
}

// apply is Apply; with an owner, it refuses (a ReferenceError,
// ReasonNameConflict) to write an object owner does not control; with an
// answer, it fills that with what the API server answered a write with.
func (a *Applier) apply(ctx context.Context, desired, owner, answer client.Object) (Outcome, error) {
	body, hash, err := applyConfiguration(desired, a.Scheme)
	if err != nil {
		return "", err
	}
	gvk := body.GroupVersionKind()
	live, err := a.Scheme.New(gvk)
	if err != nil {
		return "", fmt.Errorf("apply %s: %w", gvk.Kind, err)
	}
	liveObj := live.(client.Object)
	key := client.ObjectKeyFromObject(desired)
	switch err := a.Reader.Get(ctx, key, liveObj); {
	case apierrors.IsNotFound(err):
		if created, err := a.createOnly(ctx, body); created != nil || err != nil {
			return Created, answered(err, created, answer)
		}
		// The name is taken (by someone else, by a child stripped of the
		// operator's labels, or by one the cache has not seen yet): look.
		reader := a.Live
		if reader == nil {
			reader = a.Reader
		}
		if err := reader.Get(ctx, key, liveObj); err != nil {
			return "", fmt.Errorf("apply %s %s: reading the object of that name: %w", gvk.Kind, key, err)
		}
	case err != nil:
		return "", fmt.Errorf("apply %s %s: reading the live object: %w", gvk.Kind, key, err)
	}
	if owner != nil && !metav1.IsControlledBy(liveObj, owner) {
		return "", nameTaken(gvk.Kind, key.Name, owner, a.Scheme)
	}
	if liveObj.GetAnnotations()[AppliedHashAnnotation] != hash {
		log.FromContext(ctx).V(1).Info("desired state changed; applying", "kind", gvk.Kind, "object", key)
	} else {
		drift := ownershipDrift(applyconfigurations.NewTypeConverter(a.Scheme), body, liveObj, naming.ManagedBy)
		if len(drift) == 0 {
			return Unchanged, nil
		}
		log.FromContext(ctx).V(1).Info("fields changed by someone else; re-applying", "kind", gvk.Kind, "object", key, "fields", drift)
	}
	if err := a.send(ctx, body); err != nil {
		return "", err
	}
	return Updated, answered(nil, body, answer)
}

// answered fills answer, when there is one, with the object the API server
// answered a write with (its status, resourceVersion and defaults
// included): a caller may report from it at once, where the cache would
// still show the object from before the write.
func answered(err error, body *unstructured.Unstructured, answer client.Object) error {
	if err != nil || answer == nil || body == nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(body.Object, answer); err != nil {
		return fmt.Errorf("apply %s %s: reading the API server's answer: %w", body.GetKind(), body.GetName(), err)
	}
	return nil
}

// createOnly sends body on condition that no object of its name exists
// (see createOnlyVersion), and returns the object the API server created;
// a name that is taken is no error (and no object).
func (a *Applier) createOnly(ctx context.Context, body *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	createOnly := body.DeepCopy()
	createOnly.SetResourceVersion(createOnlyVersion)
	switch err := a.send(ctx, createOnly); {
	case err == nil:
		return createOnly, nil
	case apierrors.IsConflict(err):
		return nil, nil
	default:
		return nil, err
	}
}

// send server-side applies body as ManagedBy, taking over conflicting fields.
func (a *Applier) send(ctx context.Context, body *unstructured.Unstructured) error {
	err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(body), client.FieldOwner(naming.ManagedBy), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", body.GetKind(), client.ObjectKeyFromObject(body), err)
	}
	return nil
}

// applyConfiguration is the body Apply sends for desired: applyBody with its
// apiVersion and kind, annotated with its own hash.
func applyConfiguration(desired client.Object, scheme *runtime.Scheme) (body *unstructured.Unstructured, hash string, err error) {
	gvk, err := apiutil.GVKForObject(desired, scheme)
	if err != nil {
		return nil, "", fmt.Errorf("apply: %w", err)
	}
	body, err = applyBody(desired, scheme)
	if err != nil {
		return nil, "", err
	}
	body.SetGroupVersionKind(gvk)
	hash = naming.Hash(body.Object)
	annotations := body.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedHashAnnotation] = hash
	body.SetAnnotations(annotations)
	return body, hash, nil
}

// applyBody converts desired to the map sent as the apply configuration: no
// status (written through the status subresource only), no server-populated
// metadata, and no nulls (which would claim ownership of absent fields).
func applyBody(desired client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return nil, fmt.Errorf("apply: converting %T: %w", desired, err)
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink"} {
			delete(meta, k)
		}
	}
	return &unstructured.Unstructured{Object: dropNulls(m).(map[string]any)}, nil
}

// dropNulls removes null values and the keys holding them, recursively.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if val == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(val)
		}
	case []any:
		for i := range t {
			t[i] = dropNulls(t[i])
		}
	}
	return v
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
	return a.ApplyOwnedAnswer(ctx, rec, owner, child, nil)
}

// ApplyOwnedAnswer is ApplyOwned that, when it writes child, fills answer
// (an empty object of child's type) with what the API server answered;
// answer stays empty when nothing was written.
func (a *Applier) ApplyOwnedAnswer(ctx context.Context, rec recorder.EventRecorder, owner, child, answer client.Object) (Outcome, error) {
	if err := setOwner(owner, child, a.Scheme); err != nil {
		return "", &ApplyError{Err: err}
	}
	outcome, err := a.apply(ctx, child, owner, answer)
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

// CheckOwned finds out whether the API server would accept child as owner's,
// with a server-side dry run of the apply ApplyOwned would send, so that a
// spec a child's API refuses is found before anything is written. It sends
// nothing when the live object (from Reader) carries this very apply body:
// the API server accepted it then. A refusal is an *ApplyError; a name
// taken by an object owner does not control is no refusal (ApplyOwned
// reports it, NameConflict).
func (a *Applier) CheckOwned(ctx context.Context, owner, child client.Object) error {
	child = child.DeepCopyObject().(client.Object)
	if err := setOwner(owner, child, a.Scheme); err != nil {
		return &ApplyError{Err: err}
	}
	body, hash, err := applyConfiguration(child, a.Scheme)
	if err != nil {
		return err
	}
	live, err := a.Scheme.New(body.GroupVersionKind())
	if err != nil {
		return fmt.Errorf("check %s: %w", body.GetKind(), err)
	}
	liveObj := live.(client.Object)
	switch err := a.Reader.Get(ctx, client.ObjectKeyFromObject(child), liveObj); {
	case err == nil && (liveObj.GetAnnotations()[AppliedHashAnnotation] == hash || !metav1.IsControlledBy(liveObj, owner)):
		return nil
	case apierrors.IsNotFound(err):
		// As Apply would: a create that cannot touch an object of that name
		// (see createOnlyVersion), which may exist out of Reader's sight.
		body.SetResourceVersion(createOnlyVersion)
	case err != nil:
		return fmt.Errorf("check %s %s: reading the live object: %w", body.GetKind(), child.GetName(), err)
	}
	err = a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(body), client.FieldOwner(naming.ManagedBy), client.ForceOwnership, client.DryRunAll)
	switch {
	case err == nil, apierrors.IsConflict(err):
		return nil
	default:
		return &ApplyError{Err: fmt.Errorf("apply %s %s (dry run): %w", body.GetKind(), child.GetName(), err)}
	}
}

// setOwner makes owner the controlling owner of child, so deleting the custom
// resource garbage-collects the child and the child's events requeue the owner.
// It fails when child already has a different controller: the operator never
// takes over an object someone else controls.
func setOwner(owner, child client.Object, scheme *runtime.Scheme) error {
	return controllerutil.SetControllerReference(owner, child, scheme)
}
