// Package metrics holds the operator's own Prometheus metrics. They are
// registered in controller-runtime's registry, so one /metrics endpoint serves
// them next to controller-runtime's and client-go's metrics.
//
// Reconciliations are counted and timed by controller-runtime itself, per
// controller name (nginxoperator, nginxmonitor, nginxbackup):
// controller_runtime_reconcile_total{controller,result} with result success,
// error, requeue or requeue_after, controller_runtime_reconcile_time_seconds
// {controller}, and controller_runtime_terminal_reconcile_errors_total
// {controller} for errors wrapped in reconcile.TerminalError (which are also
// result="error"). This package adds what controller-runtime cannot know: the
// reason of each error (nginx_operator_reconcile_errors_total).
package metrics

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/version"
)

// Registry is the one registry every controller registers with and the metrics
// endpoint serves.
var Registry prometheus.Registerer = ctrlmetrics.Registry

var (
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_build_info",
		Help: "Always 1; the labels describe the running operator build.",
	}, []string{"version", "revision", "goversion"})

	reconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nginx_operator_reconcile_errors_total",
		Help: "Failed reconciliations by controller and by the reason of the error the reconciler returned.",
	}, []string{"controller", "reason"})
)

var registerOnce sync.Once

// Register adds the operator's metrics to Registry. The manager calls it once;
// later calls do nothing, so tests may build several managers in one process.
func Register() {
	registerOnce.Do(func() {
		Registry.MustRegister(buildInfo, reconcileErrors)
		buildInfo.WithLabelValues(version.Version, version.RevisionString(), version.GoVersion).Set(1)
	})
}

// Reasoner is implemented by errors that know the CamelCase reason to report
// for them (the same reason a condition or Event carries).
type Reasoner interface {
	Reason() string
}

// ReasonOf is the reason label for err: the Reason of the first error in its
// chain that has one, otherwise "Unknown". The chain includes errors wrapped
// in reconcile.TerminalError and joined with errors.Join.
func ReasonOf(err error) string {
	var r Reasoner
	if errors.As(err, &r) && r.Reason() != "" {
		return r.Reason()
	}
	return "Unknown"
}

// Instrument wraps the reconciler of controller (the name it is Named in
// the builder, which controller-runtime labels its own metrics with) so every
// error it returns is counted by reason. Counting and timing all
// reconciliations is left to controller-runtime.
func Instrument(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			reconcileErrors.WithLabelValues(controller, ReasonOf(err)).Inc()
		}
		return res, err
	})
}

// ObjectLabels label the metrics about one custom resource.
var ObjectLabels = []string{"namespace", "name"}

// ObjectGauge is a gauge with one series per custom resource (ObjectLabels).
func ObjectGauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, ObjectLabels)
}
