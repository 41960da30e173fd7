package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// TestAnInjectedOperatorPanicFailsTheChaosSuite builds the operator with a
// fault (testdata/fault.go, added with go build -overlay, so no production
// build can hold it) and runs it as the suite's replicas, once crashing
// and once with a panic recovered the way controller-runtime recovers a
// reconciler's. Each time the judge every chaos test ends with must report
// the panic, and the crash as an exit the test did not cause: what it
// reports here would fail any other chaos test.
func TestAnInjectedOperatorPanicFailsTheChaosSuite(t *testing.T) {
	cl := install(t)
	fault, err := filepath.Abs(filepath.Join("testdata", "fault.go"))
	if err != nil {
		t.Fatal(err)
	}
	bin := framework.BuildOperatorWith(t, map[string]string{"zz_test_fault.go": fault})

	for _, tc := range []struct {
		fault string
		want  []string // each reported, in some finding
	}{
		{"crash", []string{"exited on its own with status 2", "panic: fault injected by test/chaos: the operator crashes", "goroutine "}},
		{"recovered", []string{"Observed a panic", "fault injected by test/chaos: a recovered panic"}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			ctx := context.Background()
			ns, _ := env.Namespace(t)
			struck := filepath.Join(t.TempDir(), "struck")
			var mu sync.Mutex
			var reported []string
			// Registered before the replicas' judge, so it runs after it.
			t.Cleanup(func() {
				mu.Lock()
				defer mu.Unlock()
				all := strings.Join(reported, "\n")
				for _, w := range tc.want {
					if !strings.Contains(all, w) {
						t.Errorf("the judge did not report %q; it reported %d finding(s):\n%s", w, len(reported), all)
					}
				}
			})
			r := startReplicas(ctx, t, cl, ns, 1, framework.OperatorProcess{Binary: bin, Env: []string{
				"NGINX_OPERATOR_TEST_FAULT=" + tc.fault,
				"NGINX_OPERATOR_TEST_FAULT_AFTER=2s",
				"NGINX_OPERATOR_TEST_FAULT_ONCE=" + struck,
			}})
			r.mu.Lock()
			r.report = func(f string) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, f)
			}
			r.mu.Unlock()

			// The fault strikes in the first process only; the replica
			// (started again after a crash) then leads.
			if !framework.WaitFor(ctx, time.Minute, func(context.Context) bool { return fileExists(struck) }) {
				t.Fatal("the fault did not strike")
			}
			if tc.fault == "crash" && !framework.WaitFor(ctx, time.Minute, func(context.Context) bool { return r.unplannedRestarts() == 1 }) {
				t.Fatal("the crashed replica was not started again")
			}
			if _, _, err := r.waitLeader(ctx, 2*time.Minute, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
