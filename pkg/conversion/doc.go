// Package conversion converts NginxOperator objects between the book's
// nginx.operator.dev/v1alpha1 and the hub nginx.operator.dev/v1beta1, serves
// that conversion to the apiserver as a CRD conversion webhook at /convert, and
// manages the webhook's serving certificate itself: it generates a CA and a
// serving certificate into a Secret, rotates them before they expire, writes
// them where the manager's webhook server reads them, and injects the CA into
// the CRD's spec.conversion, so no cert-manager is needed.
//
// # Lossless down-conversion
//
// v1alpha1 holds only port, replicas, forceRedeploy and status.conditions.
// Everything else of a v1beta1 object travels in two annotations of the
// v1alpha1 object (AnnotationSpec and AnnotationStatus), each a JSON object
// holding the v1beta1 spec or status minus the fields v1alpha1 has its own
// place for. Because the annotation never repeats port, replicas or
// forceRedeploy, a v1alpha1 client that edits those fields is never
// contradicted by a stale copy: its values are the only ones there are.
// The annotations exist only on v1alpha1 objects; up-conversion removes them.
//
// # Validation on the way up
//
// A v1alpha1 write is checked by the apiserver against the v1alpha1 schema
// only, and what the webhook returns is stored without any v1beta1 check. So
// the webhook refuses a converted object that v1beta1 admission would refuse
// (pkg/validation, which evaluates the shipped CRD's schema and CEL rules),
// and never restores the status from an annotation a client could have
// written: only the spec annotation comes back.
// When plain JSON would exceed the apiserver's 256 KiB limit on annotations,
// the values are gzip-compressed (see compressedPrefix); an object too large
// even so is refused with an error rather than converted with a loss.
//
// # Why our own handler and certificates
//
// controller-runtime's conversion handler (Hub and Convertible on the API
// types) decodes the objects of a ConversionReview leniently, with the
// scheme's universal deserializer: a field the Go types do not know is dropped
// without a word. Ours decodes strictly and refuses such an object, so a
// v1alpha1 client never loses a field silently, and it checks the result
// against the v1beta1 schema before the apiserver stores it. So the API types
// carry no Hub or Convertible methods: the conversion lives here, once.
//
// open-policy-agent/cert-controller rotates the CA and the serving
// certificate together and injects only the new CA, so until every apiserver
// sees the new caBundle the webhook serves a certificate it cannot verify;
// ours keeps the previous CA in the bundle (keyPreviousCA) through a rotation.
// cert-controller also watches the objects it injects into through a cache,
// which needs list and watch on every CRD of the cluster; ours reads and
// patches the one CRD it serves, by name (RBAC get and patch with
// resourceNames), and re-checks it on a timer instead of watching.
package conversion
