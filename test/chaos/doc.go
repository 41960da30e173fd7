// Package chaos holds end-to-end tests that break the operator's world while
// it works: its leader is killed again and again, the apiserver and etcd
// restart under it, its conversion webhook goes away. They run on their own
// full local cluster (test/framework), one test after the other, the
// control-plane restarts last (restart_test.go sorts last), and check, at the
// end, what must hold whatever happened: every instance converged, every
// child has exactly one living owner, no status was lost and an idle operator
// stays quiet. Every test also judges the operators themselves (replicas):
// a replica may end only because the test killed or stopped it, or lost its
// lease while the test had the control plane down on purpose; any other
// exit, and a panic in any operator's log, recovered or not, fails the
// test. judge_test.go proves that judge with a panic built into the
// operator from testdata/fault.go, which no production build contains.
package chaos
