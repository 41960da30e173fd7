// Package certmanager holds the tests that run the operator with the real
// cert-manager (its controllers built from its Go module, hack/certmanager)
// on a real apiserver of their own: cert-manager's CRDs are cluster-wide,
// and the tests start without them.
package certmanager
