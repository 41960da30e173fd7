// Package naming derives the names and standard labels of the objects the
// operator makes, and the stable hash behind them, with no client: pure
// packages (pkg/layout, the renderer) use it without linking the API
// machinery that pkg/k8sutil, which reads and writes the API, needs.
// NameWithLimit derives DNS-1123 child names that keep distinct inputs
// distinct; Labels and SelectorLabels are the app.kubernetes.io labels
// every child carries, with a selector unique per instance;
// ManagedSelector is what the operator's cache holds; Hash is the stable
// digest behind configuration hashes.
package naming
