// Package certmanager holds the test of cert-manager's gateway-shim with
// the operator's Gateways: the real cert-manager (its controllers built
// from its Go module, hack/certmanager) on a real apiserver of its own,
// where Gateway API's CRDs are installed before the operator starts.
// test/e2e and test/realpods/rollout run cert-manager for tls.issuerRef.
package certmanager
