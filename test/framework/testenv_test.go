package framework

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recorder is a test that Env.Cluster reports to: it records how the test
// ended instead of ending the real one.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	skipped []string
	fatal   []string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = append(r.skipped, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.mu.Lock()
	r.fatal = append(r.fatal, fmt.Sprint(args...))
	r.mu.Unlock()
	runtime.Goexit()
}

// clusterFrom calls env.Cluster from n goroutines at once, as parallel tests
// do, and returns what each got.
func clusterFrom(env *Env, r *recorder, n int) []*Cluster {
	got := make([]*Cluster, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i] = env.Cluster(r) })
	}
	wg.Wait()
	return got
}

func TestMissingBinariesSkipEveryTestThatAsksForTheClusterWithTheInstallCommand(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	t.Setenv("CI", "")
	t.Setenv("NGINX_OPERATOR_REQUIRE_TOOLS", "")
	env, r := NewEnv(Options{}), &recorder{}
	env.short = func() bool { return false }
	for _, c := range clusterFrom(env, r, 4) {
		if c != nil {
			t.Fatal("Cluster returned a cluster without its binaries")
		}
	}
	if len(r.skipped) != 4 || len(r.fatal) != 0 {
		t.Fatalf("skipped %d, failed %d (%v); want 4 skipped", len(r.skipped), len(r.fatal), r.fatal)
	}
	for _, msg := range r.skipped {
		for _, want := range []string{Etcd + " not found in", installHint, "(set CI or NGINX_OPERATOR_REQUIRE_TOOLS to fail instead)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("skip message %q lacks %q", msg, want)
			}
		}
	}
}

func TestMissingBinariesFailTheTestWhenToolsAreRequired(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	t.Setenv("NGINX_OPERATOR_REQUIRE_TOOLS", "1")
	env, r := NewEnv(Options{Nodes: 1}), &recorder{}
	env.short = func() bool { return false }
	clusterFrom(env, r, 2)
	if len(r.fatal) != 2 || len(r.skipped) != 0 {
		t.Fatalf("failed %d, skipped %d (%v); want 2 failed", len(r.fatal), len(r.skipped), r.skipped)
	}
	if !strings.Contains(r.fatal[0], Etcd+" not found in") || !strings.Contains(r.fatal[0], installHint) {
		t.Errorf("failure %q does not name the binary and the install command", r.fatal[0])
	}
}

// The unit tier (go test -short) never starts a cluster, even with every
// binary installed and tools required: the test is skipped, saying why.
func TestUnitTierSkipsEveryTestThatAsksForTheCluster(t *testing.T) {
	t.Setenv("NGINX_OPERATOR_REQUIRE_TOOLS", "1")
	env, r := NewEnv(Options{}), &recorder{}
	env.short = func() bool { return true }
	for _, c := range clusterFrom(env, r, 2) {
		if c != nil {
			t.Fatal("Cluster returned a cluster in the unit tier")
		}
	}
	if len(r.skipped) != 2 || len(r.fatal) != 0 || !strings.Contains(r.skipped[0], "not a unit test") {
		t.Fatalf("skipped %v, failed %v; want 2 skipped as not unit tests", r.skipped, r.fatal)
	}
}

func TestMainChecksAndStopsOnlyAClusterATestStarted(t *testing.T) {
	calls := 0
	opts := Options{AfterTests: func(*Cluster) error { calls++; return nil }}

	if code := NewEnv(opts).finish(0); code != 0 || calls != 0 {
		t.Errorf("never started: code %d, AfterTests ran %d times; want 0, 0", code, calls)
	}

	for _, tc := range []struct {
		code      int
		wantCalls int
		keepDir   bool
	}{
		{code: 0, wantCalls: 1, keepDir: false},
		{code: 1, wantCalls: 0, keepDir: true},
	} {
		calls = 0
		var out strings.Builder
		env := NewEnv(opts)
		env.stderr = &out
		env.once.Do(func() { env.cluster, env.dir = &Cluster{}, t.TempDir() })
		if code := env.finish(tc.code); code != tc.code || calls != tc.wantCalls {
			t.Errorf("tests ended with %d: code %d, AfterTests ran %d times; want %d, %d", tc.code, code, calls, tc.code, tc.wantCalls)
		}
		if _, err := os.Stat(env.dir); (err == nil) != tc.keepDir {
			t.Errorf("tests ended with %d: cluster directory kept = %v, want %v", tc.code, err == nil, tc.keepDir)
		}
		if printed := strings.Contains(out.String(), "cluster logs kept in "+env.dir); printed != tc.keepDir {
			t.Errorf("tests ended with %d: printed the kept directory = %v, want %v (output %q)", tc.code, printed, tc.keepDir, out.String())
		}
	}

	var out strings.Builder
	env := NewEnv(Options{AfterTests: func(*Cluster) error { return errors.New("unused permission") }})
	env.stderr = &out
	env.once.Do(func() { env.cluster, env.dir = &Cluster{}, t.TempDir() })
	if code := env.finish(0); code == 0 || !strings.Contains(out.String(), "after the tests: unused permission") {
		t.Errorf("a failing AfterTests: code %d, output %q; want a failure naming its error", code, out.String())
	}
}
