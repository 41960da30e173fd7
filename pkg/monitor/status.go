package monitor

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// ConditionServiceMonitor reports the prometheus-operator ServiceMonitor of a
// monitor with serviceMonitor.enabled.
const ConditionServiceMonitor = "ServiceMonitor"

// Condition reasons, CamelCase.
const (
	// Accepted
	ReasonSpecValid   = "SpecValid"
	ReasonInvalidSpec = "InvalidSpec"
	// Ready
	ReasonScrapeConfigGenerated = "ScrapeConfigGenerated"
	ReasonNoMatchingInstances   = "NoMatchingInstances"
	ReasonMetricsNotEnabled     = "MetricsNotEnabled"
	ReasonSecretNotFound        = "SecretNotFound"
	ReasonApplyFailed           = "ApplyFailed"
	// ServiceMonitor
	ReasonServiceMonitorApplied = "Applied"
	ReasonAPINotAvailable       = "APINotAvailable"
	ReasonDisabled              = "Disabled"
)

// referenceError: a Secret or key the endpoint names does not exist.
type referenceError struct{ msg string }

func (e *referenceError) Error() string  { return e.msg }
func (e *referenceError) Reason() string { return ReasonSecretNotFound }

// applyError: the API refused a child.
type applyError struct{ err error }

func (e *applyError) Error() string  { return e.err.Error() }
func (e *applyError) Unwrap() error  { return e.err }
func (e *applyError) Reason() string { return ReasonApplyFailed }

func setCondition(mon *v1beta1.NginxMonitor, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&mon.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: mon.Generation,
	})
}
