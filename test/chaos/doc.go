//go:build chaos

// Package chaos holds end-to-end tests that break the operator's world while
// it works: its leader is killed again and again, the apiserver and etcd
// restart under it, its conversion webhook goes away. Built with the tag
// chaos (`make test-chaos`; not part of `make test`, see README), they run on their own
// full local cluster (test/framework) and check, at the end, what must hold
// whatever happened: every instance converged, every child has exactly one
// living owner, no status was lost and an idle operator stays quiet.
package chaos
