package monitor

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
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

func setCondition(mon *v1beta1.NginxMonitor, typ string, status metav1.ConditionStatus, reason, msg string) {
	k8sutil.SetCondition(&mon.Status.Conditions, mon.Generation, typ, status, reason, msg)
}
