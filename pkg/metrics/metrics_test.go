package metrics

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

type reasonError struct{ reason string }

func (e reasonError) Error() string  { return "failed: " + e.reason }
func (e reasonError) Reason() string { return e.reason }

func TestReasonOfFindsTheReasonInTheErrorChain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("plain"), "Unknown"},
		{reasonError{"SecretNotFound"}, "SecretNotFound"},
		{fmt.Errorf("applying: %w", reasonError{"ApplyFailed"}), "ApplyFailed"},
		{reasonError{""}, "Unknown"},
		// What k8sutil.Classify returns for a spec error.
		{reconcile.TerminalError(reasonError{"InvalidConfig"}), "InvalidConfig"},
		{reconcile.TerminalError(fmt.Errorf("rendering: %w", reasonError{"InvalidConfig"})), "InvalidConfig"},
		{reconcile.TerminalError(errors.New("plain")), "Unknown"},
		// What StatusReconciler returns when the status patch fails too.
		{errors.Join(reasonError{"ApplyFailed"}, errors.New("patching status")), "ApplyFailed"},
	} {
		if got := ReasonOf(tc.err); got != tc.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// gathered is one series of the shared registry: its labels and its value
// (a histogram's sample count).
type gathered struct {
	labels map[string]string
	value  float64
}

// gather returns the series of metric in the shared registry whose labels
// include match.
func gather(t *testing.T, metric string, match map[string]string) []gathered {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []gathered
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			g := gathered{labels: map[string]string{}, value: m.GetCounter().GetValue()}
			if h := m.GetHistogram(); h != nil {
				g.value = float64(h.GetSampleCount())
			}
			for _, l := range m.GetLabel() {
				g.labels[l.GetName()] = l.GetValue()
			}
			for k, v := range match {
				if g.labels[k] != v {
					continue series
				}
			}
			out = append(out, g)
		}
	}
	return out
}

func TestInstrumentCountsErrorsByReasonOnly(t *testing.T) {
	Register()
	const name = "instrument-test"
	outcomes := []struct {
		res reconcile.Result
		err error
	}{
		{reconcile.Result{}, nil},
		{reconcile.Result{RequeueAfter: time.Second}, nil},
		{reconcile.Result{}, reasonError{"ApplyFailed"}},
		{reconcile.Result{}, fmt.Errorf("applying: %w", reasonError{"ApplyFailed"})},
		{reconcile.Result{}, reconcile.TerminalError(reasonError{"InvalidConfig"})},
		{reconcile.Result{}, errors.New("connection refused")},
	}
	// The test may run several times in one process (-count).
	before := map[string]float64{}
	for _, g := range gather(t, "nginx_operator_reconcile_errors_total", map[string]string{"controller": name}) {
		before[g.labels["reason"]] = g.value
	}
	i := 0
	r := Instrument(name, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		o := outcomes[i]
		i++
		return o.res, o.err
	}))
	for _, o := range outcomes {
		res, err := r.Reconcile(context.Background(), reconcile.Request{})
		// The wrapper hands the result and the very error on, so that
		// controller-runtime still sees a TerminalError as terminal.
		if res != o.res || err != o.err {
			t.Errorf("Instrument returned (%v, %v), want (%v, %v)", res, err, o.res, o.err)
		}
	}

	got := map[string]float64{}
	for _, g := range gather(t, "nginx_operator_reconcile_errors_total", map[string]string{"controller": name}) {
		got[g.labels["reason"]] = g.value - before[g.labels["reason"]]
	}
	// Successes and requeues leave no series.
	want := map[string]float64{"ApplyFailed": 2, "InvalidConfig": 1, "Unknown": 1}
	if !maps.Equal(got, want) {
		t.Errorf("nginx_operator_reconcile_errors_total{controller=%q} by reason = %v, want %v", name, got, want)
	}
}

// TestControllerRuntimeCountsTheReconcilesInstrumentReasons runs an
// instrumented reconciler in a real controller-runtime controller, the way
// the operator's controllers run, and checks the metrics the mixin and the
// documentation rely on: controller-runtime's result labels, its terminal
// error count, its duration histogram, and the reasons next to them.
func TestControllerRuntimeCountsTheReconcilesInstrumentReasons(t *testing.T) {
	Register()
	const name = "metrics-test"

	var mu sync.Mutex
	calls := map[string]int{}
	r := Instrument(name, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[req.Name]++
		switch req.Name {
		case "later":
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		case "flaky":
			if calls[req.Name] == 1 {
				return reconcile.Result{}, fmt.Errorf("applying: %w", reasonError{"ApplyFailed"})
			}
		case "invalid":
			return reconcile.Result{}, reconcile.TerminalError(reasonError{"InvalidConfig"})
		}
		return reconcile.Result{}, nil
	}))

	// The test may run several times in one process (-count): compare with
	// what earlier runs left in the shared registry.
	value := func(metric string, labels map[string]string) float64 {
		var sum float64
		for _, g := range gather(t, metric, labels) {
			sum += g.value
		}
		return sum
	}
	type series struct {
		metric string
		labels map[string]string
	}
	result := func(r string) series {
		return series{"controller_runtime_reconcile_total", map[string]string{"controller": name, "result": r}}
	}
	reason := func(r string) series {
		return series{"nginx_operator_reconcile_errors_total", map[string]string{"controller": name, "reason": r}}
	}
	want := []struct {
		series
		delta float64
	}{
		{result("success"), 2},       // ok, and flaky's retry
		{result("requeue_after"), 1}, // later
		{result("requeue"), 0},       // only the deprecated Result.Requeue
		{result("error"), 2},         // flaky's first try and invalid
		{series{"controller_runtime_terminal_reconcile_errors_total", map[string]string{"controller": name}}, 1},
		{series{"controller_runtime_reconcile_errors_total", map[string]string{"controller": name}}, 2},
		{series{"controller_runtime_reconcile_time_seconds", map[string]string{"controller": name}}, 5},
		{reason("ApplyFailed"), 1},
		{reason("InvalidConfig"), 1},
		{reason("Unknown"), 0},
	}
	before := make([]float64, len(want))
	for i, w := range want {
		before[i] = value(w.metric, w.labels)
	}

	c, err := controller.NewUnmanaged(name, controller.Options{
		Reconciler:         r,
		SkipNameValidation: ptr.To(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		for _, n := range []string{"ok", "later", "flaky", "invalid"} {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: n}})
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})

	check := func() []string {
		var wrong []string
		for i, w := range want {
			if got := value(w.metric, w.labels) - before[i]; got != w.delta {
				wrong = append(wrong, fmt.Sprintf("%s%v went up by %v, want %v", w.metric, w.labels, got, w.delta))
			}
		}
		return wrong
	}
	tools.Eventually(t, 30*time.Second, "the reconciles' metrics", func() error {
		if wrong := check(); len(wrong) > 0 {
			mu.Lock()
			seen := fmt.Sprint(calls)
			mu.Unlock()
			return fmt.Errorf("after the reconciles (calls %s):\n%s", seen, strings.Join(wrong, "\n"))
		}
		return nil
	})

	// controller-runtime creates every result series of a started controller
	// at 0, so a ratio of errors to all results is 0, not missing, for a
	// controller that never failed.
	for _, res := range []string{"success", "error", "requeue", "requeue_after"} {
		if len(gather(t, "controller_runtime_reconcile_total", map[string]string{"controller": name, "result": res})) != 1 {
			t.Errorf("controller_runtime_reconcile_total{controller=%q,result=%q} does not exist", name, res)
		}
	}
	// The operator no longer duplicates controller-runtime's metrics.
	for _, gone := range []string{"nginx_operator_reconciles_total", "nginx_operator_reconcile_duration_seconds"} {
		if n, err := testutil.GatherAndCount(ctrlmetrics.Registry, gone); err != nil || n != 0 {
			t.Errorf("%s: %d series (err %v), want none", gone, n, err)
		}
	}
}

func TestBuildInfoIsExposedInTheSharedRegistry(t *testing.T) {
	Register()
	Register() // a second call must not panic on duplicate registration
	g, ok := Registry.(prometheus.Gatherer)
	if !ok {
		t.Fatal("the shared registry is not gatherable")
	}
	problems, err := testutil.GatherAndLint(g, "nginx_operator_build_info")
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("lint problems: %v", problems)
	}
	n, err := testutil.GatherAndCount(g, "nginx_operator_build_info")
	if err != nil || n != 1 {
		t.Fatalf("nginx_operator_build_info series = %d (err %v), want 1", n, err)
	}
	if err := testutil.GatherAndCompare(g, strings.NewReader(""), "nginx_operator_does_not_exist"); err != nil {
		t.Fatal(err)
	}
}
