package monitor

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
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
	ReasonApplyFailed           = k8sutil.ReasonApplyFailed
	// ServiceMonitor
	ReasonServiceMonitorApplied = "Applied"
	ReasonAPINotAvailable       = "APINotAvailable"
	ReasonDisabled              = "Disabled"
)

func setCondition(mon *v1beta1.NginxMonitor, typ string, status metav1.ConditionStatus, reason, msg string) {
	k8sutil.SetCondition(&mon.Status.Conditions, mon.Generation, typ, status, reason, msg)
}

// serviceMonitorState is what became of the monitor's ServiceMonitor.
type serviceMonitorState int

const (
	serviceMonitorUnknown    serviceMonitorState = iota // not reached, or failed
	serviceMonitorDisabled                              // spec.serviceMonitor.enabled is false
	serviceMonitorAPIMissing                            // prometheus-operator's API is not served
	serviceMonitorApplied                               // applied and current
)

// observation is what one reconcile saw and did, up to the first step that
// failed: the spec refused (invalid), a read or reference failed (failed),
// or an apply failed (applyFailed).
type observation struct {
	invalid, failed, applyFailed error
	selection                    *Selection
	// secret is the applied scrape configuration Secret's name.
	secret         string
	serviceMonitor serviceMonitorState
}

func (o observation) err() error {
	return errors.Join(o.invalid, o.failed, o.applyFailed)
}

// statusFor sets mon's status from o, in one place.
func statusFor(mon *v1beta1.NginxMonitor, o observation) {
	mon.Status.ObservedGeneration = mon.Generation
	if o.invalid != nil {
		msg := o.invalid.Error()
		setCondition(mon, v1beta1.ConditionAccepted, metav1.ConditionFalse, ReasonInvalidSpec, msg)
		setCondition(mon, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonInvalidSpec, "the spec is not accepted: "+msg)
		return
	}
	setCondition(mon, v1beta1.ConditionAccepted, metav1.ConditionTrue, ReasonSpecValid, "")
	if o.selection == nil {
		return // the instances could not be listed: try again
	}
	all := o.selection.All()
	mon.Status.Instances = nil
	var disabled []string
	for _, in := range all {
		mon.Status.Instances = append(mon.Status.Instances, v1beta1.InstanceReference{Namespace: in.Namespace, Name: in.Name})
		if !in.MetricsEnabled {
			disabled = append(disabled, in.Namespace+"/"+in.Name)
		}
	}
	mon.Status.MatchedInstances = int32(len(all))

	var refErr *k8sutil.ReferenceError
	switch {
	case errors.As(o.failed, &refErr):
		setCondition(mon, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonSecretNotFound, refErr.Error())
		return
	case o.failed != nil:
		return
	}
	if o.secret != "" {
		mon.Status.ScrapeConfigSecret = o.secret
	}
	switch o.serviceMonitor {
	case serviceMonitorDisabled:
		meta.RemoveStatusCondition(&mon.Status.Conditions, ConditionServiceMonitor)
	case serviceMonitorAPIMissing:
		setCondition(mon, ConditionServiceMonitor, metav1.ConditionFalse, ReasonAPINotAvailable,
			"the monitoring.coreos.com/v1 ServiceMonitor API is not served: install prometheus-operator, or use the scrape configuration Secret")
	case serviceMonitorApplied:
		setCondition(mon, ConditionServiceMonitor, metav1.ConditionTrue, ReasonServiceMonitorApplied, "ServiceMonitor "+mon.Name+" is current")
	}
	if o.applyFailed != nil {
		setCondition(mon, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonApplyFailed, o.applyFailed.Error())
		return
	}
	scraped := len(o.selection.Scraped())
	switch {
	case len(all) == 0:
		setCondition(mon, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonNoMatchingInstances, "no NginxOperator matches spec.selector in "+describeNamespaces(mon))
	case scraped == 0:
		setCondition(mon, v1beta1.ConditionReady, metav1.ConditionFalse, ReasonMetricsNotEnabled, "no selected instance has spec.metrics.enabled: "+strings.Join(disabled, ", "))
	default:
		msg := fmt.Sprintf("%d instance(s) in %s", scraped, o.secret)
		if len(disabled) > 0 {
			msg += "; without spec.metrics.enabled, not scraped: " + strings.Join(disabled, ", ")
		}
		setCondition(mon, v1beta1.ConditionReady, metav1.ConditionTrue, ReasonScrapeConfigGenerated, msg)
	}
}
