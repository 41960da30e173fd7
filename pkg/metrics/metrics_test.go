package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
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
	} {
		if got := ReasonOf(tc.err); got != tc.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestInstrumentCountsEveryResult(t *testing.T) {
	const controller = "instrument-test"
	outcomes := []struct {
		res reconcile.Result
		err error
	}{
		{reconcile.Result{}, nil},
		{reconcile.Result{}, nil},
		{reconcile.Result{RequeueAfter: time.Second}, nil},
		{reconcile.Result{}, reasonError{"ApplyFailed"}},
	}
	i := 0
	r := Instrument(controller, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		o := outcomes[i]
		i++
		return o.res, o.err
	}))
	for range outcomes {
		_, _ = r.Reconcile(context.Background(), reconcile.Request{})
	}

	for result, want := range map[string]float64{ResultSuccess: 2, ResultRequeue: 1, ResultError: 1} {
		if got := testutil.ToFloat64(reconciles.WithLabelValues(controller, result)); got != want {
			t.Errorf("reconciles_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if got := testutil.ToFloat64(reconcileErrors.WithLabelValues(controller, "ApplyFailed")); got != 1 {
		t.Errorf("reconcile_errors_total{reason=ApplyFailed} = %v, want 1", got)
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
