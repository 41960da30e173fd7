// Package metrics holds the operator's own Prometheus metrics. They are
// registered in controller-runtime's registry, so one /metrics endpoint serves
// them next to controller-runtime's and client-go's metrics.
package metrics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/version"
)

// Registry is the one registry every controller registers with and the metrics
// endpoint serves.
var Registry prometheus.Registerer = ctrlmetrics.Registry

// Result labels of nginx_operator_reconciles_total.
const (
	ResultSuccess = "success"
	ResultRequeue = "requeue"
	ResultError   = "error"
)

var (
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "nginx_operator_build_info",
		Help: "Always 1; the labels describe the running operator build.",
	}, []string{"version", "revision", "goversion"})

	reconciles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nginx_operator_reconciles_total",
		Help: "Reconciliations by controller and result (success, requeue, error).",
	}, []string{"controller", "result"})

	reconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nginx_operator_reconcile_errors_total",
		Help: "Failed reconciliations by controller and reason.",
	}, []string{"controller", "reason"})

	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "nginx_operator_reconcile_duration_seconds",
		Help:    "Time spent in one reconciliation, by controller.",
		Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"controller"})
)

var registerOnce sync.Once

// Register adds the operator's metrics to Registry. The manager calls it once;
// later calls do nothing, so tests may build several managers in one process.
func Register() {
	registerOnce.Do(func() {
		Registry.MustRegister(buildInfo, reconciles, reconcileErrors, reconcileDuration)
		buildInfo.WithLabelValues(version.Version, version.RevisionString(), version.GoVersion).Set(1)
	})
}

// Reasoner is implemented by errors that know the CamelCase reason to report
// for them (the same reason a condition or Event carries).
type Reasoner interface {
	Reason() string
}

// ReasonOf is the reason label for err: the Reason of the first error in its
// chain that has one, otherwise "Unknown".
func ReasonOf(err error) string {
	var r Reasoner
	if errors.As(err, &r) && r.Reason() != "" {
		return r.Reason()
	}
	return "Unknown"
}

// ObserveReconcile records one reconciliation of controller.
func ObserveReconcile(controller string, res reconcile.Result, err error, took time.Duration) {
	reconcileDuration.WithLabelValues(controller).Observe(took.Seconds())
	switch {
	case err != nil:
		reconciles.WithLabelValues(controller, ResultError).Inc()
		reconcileErrors.WithLabelValues(controller, ReasonOf(err)).Inc()
	case res.RequeueAfter > 0:
		reconciles.WithLabelValues(controller, ResultRequeue).Inc()
	default:
		reconciles.WithLabelValues(controller, ResultSuccess).Inc()
	}
}

// Instrument wraps a reconciler so every call is counted and timed under the
// controller's name.
func Instrument(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		res, err := r.Reconcile(ctx, req)
		ObserveReconcile(controller, res, err, time.Since(start))
		return res, err
	})
}

// ObjectLabels label the metrics about one custom resource.
var ObjectLabels = []string{"namespace", "name"}

// ObjectGauge is a gauge with one series per custom resource (ObjectLabels).
func ObjectGauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, ObjectLabels)
}
