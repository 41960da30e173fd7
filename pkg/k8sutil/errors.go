package k8sutil

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// The three controllers share one reconcile skeleton (StatusReconciler) and
// one classification of what goes wrong:
//
//   - a SpecError is a spec that cannot be applied as it is: terminal, it
//     is not retried until the spec changes (which triggers a reconcile);
//   - a ReferenceError names an object the user must create or fix (a
//     Secret, a Service, a name taken by someone else's object): looked at
//     again every ReferenceRetry, without an error backoff storm, unless
//     the controller watches it (MissingWatchedReference);
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
type ReferenceError struct {
	reason, msg string
	// watched: the controller watches the object, so its creation or fix
	// wakes the controller and nothing need look again.
	watched bool
}

func (e *ReferenceError) Error() string  { return e.msg }
func (e *ReferenceError) Reason() string { return e.reason }

// MissingReference returns a ReferenceError with reason and a formatted message.
func MissingReference(reason, format string, args ...any) error {
	return &ReferenceError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// MissingWatchedReference returns a ReferenceError with reason and a
// formatted message for an object the controller watches: it is not looked
// at again every ReferenceRetry, its watch event brings the owner back.
func MissingWatchedReference(reason, format string, args ...any) error {
	return &ReferenceError{reason: reason, msg: fmt.Sprintf(format, args...), watched: true}
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

// RefusedBody tells whether the API server refused an object the operator
// built as such: invalid (422), or a body it cannot even decode (400; an
// apply body is YAML to the API server, which refuses control characters
// in it and map keys over 1,024 bytes, though JSON writes store them). A
// body built from a spec is the spec's fault: retrying cannot help.
func RefusedBody(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}
