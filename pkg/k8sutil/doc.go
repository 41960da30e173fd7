// Package k8sutil is what the three controllers share to read and write the
// API. Its exported names are what other packages use, by concern:
//
// Applying children (apply.go, ownership.go, events.go). Applier.ApplyOwned
// is the one way a controller creates or changes a child: it makes the
// custom resource the child's controller and server-side applies the child
// with the operator's single field manager. What survives from the live
// object is everything the operator does not send: fields other managers set
// (a HorizontalPodAutoscaler's replicas, a defaulted clusterIP, another
// controller's annotations) are left as they are, and an object whose name is
// taken by one the owner does not control is not touched at all. No request
// is sent while the live object still holds, as the operator's own, every
// field of the last body it applied (AppliedHashAnnotation and the
// managedFields record, which the cache keeps small with CompactApplyRecord),
// so a steady-state resync writes nothing. The children a reconcile created or changed are reported in one
// Event per owner.
//
// The reconcile skeleton and its error classes (reconcile.go, errors.go).
// StatusReconciler reads the custom resource, lets a controller's Sync
// apply children and compute the status, writes the status only when it
// changed, and classifies Sync's error: a SpecError (InvalidSpec) is
// terminal until the spec changes, a ReferenceError (MissingReference) names
// an object the user must create or fix and is looked at again every
// ReferenceRetry (unless the controller watches it:
// MissingWatchedReference), anything else is retried with backoff. Deps are the clients
// and recorder every controller is built with; SetCondition and HadReason set
// conditions and tell transitions apart, so Events go out on changes only.
//
// Names, labels and hashes are pkg/naming's, which needs no client: the
// layout of every instance's children is built on them.
package k8sutil
