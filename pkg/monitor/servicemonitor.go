package monitor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// ServiceMonitorGVK is prometheus-operator's ServiceMonitor.
var ServiceMonitorGVK = monitoringv1.SchemeGroupVersion.WithKind(monitoringv1.ServiceMonitorsKind)

// AddServiceMonitorToScheme registers prometheus-operator's monitoring.coreos.com/v1
// types, so the Applier can apply a ServiceMonitor like any other child.
// Registering them needs no CRD: whether the API is served is asked of the
// RESTMapper when a monitor wants a ServiceMonitor.
func AddServiceMonitorToScheme(s *runtime.Scheme) error {
	return monitoringv1.AddToScheme(s)
}

// BuildServiceMonitor is the ServiceMonitor equivalent of Build: it selects
// the client Services of the selected instances that have metrics enabled,
// in their namespaces, and has two endpoints, as Build has two jobs: the
// exporter's metrics port with the monitor's endpoint settings, and the
// reloader's port over plain HTTP with only the interval and timeout (see
// reloaderScrapeConfig). Both set the same labels. Credentials stay Secret
// references (prometheus-operator reads them).
//
// Its targets get the job labels of the scrape configuration,
// JobName(namespace, name) and ReloaderJobName(namespace, name), not the
// Service's name that prometheus-operator gives by default: the mixin
// selects nginx targets by those jobs, and two monitors of one instance
// stay two jobs. prometheus-operator appends an endpoint's relabelings after
// its own rules (the one setting job from __meta_kubernetes_service_name
// among them), so a replace rule here has the last word.
//
// prometheus-operator has no per-endpoint sample limit: the monitor's
// sampleLimit is the ServiceMonitor's, and so also limits the reloader's
// targets, which return five samples.
//
// With no instance it selects nothing: see matchNothing.
func BuildServiceMonitor(mon *v1beta1.NginxMonitor, sel Selection) *monitoringv1.ServiceMonitor {
	instances, namespaces := smInstances(mon, sel)
	sm := &monitoringv1.ServiceMonitor{
		TypeMeta: metav1.TypeMeta{APIVersion: ServiceMonitorGVK.GroupVersion().String(), Kind: ServiceMonitorGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: mon.Name, Namespace: mon.Namespace,
			Labels: naming.Labels("nginx-monitor", mon.Name, "servicemonitor"),
		},
		Spec: monitoringv1.ServiceMonitorSpec{
			Selector: metav1.LabelSelector{
				MatchLabels: map[string]string{
					naming.LabelManagedBy: naming.ManagedBy, naming.LabelName: layout.AppName, naming.LabelComponent: layout.Component,
				},
				MatchExpressions: instances,
			},
			NamespaceSelector: monitoringv1.NamespaceSelector{MatchNames: namespaces},
			Endpoints:         []monitoringv1.Endpoint{smExporterEndpoint(mon, sel), smReloaderEndpoint(mon, sel)},
		},
	}
	if ep := mon.Spec.Endpoint; ep.SampleLimit > 0 {
		sm.Spec.SampleLimit = ptr.To(ep.SampleLimit)
	}
	return sm
}

// smInstances select the client Services of the scraped instances by their
// instance label, in the selection's namespaces; with no instance, nothing,
// in the monitor's own namespace (see matchNothing).
func smInstances(mon *v1beta1.NginxMonitor, sel Selection) ([]metav1.LabelSelectorRequirement, []string) {
	var instNames []string
	for _, in := range sel.Scraped() {
		instNames = append(instNames, in.Name)
	}
	if len(instNames) == 0 {
		return matchNothing(naming.LabelInstance), []string{mon.Namespace}
	}
	// The values of an In requirement: a set, sorted.
	slices.Sort(instNames)
	instNames = slices.Compact(instNames)
	return []metav1.LabelSelectorRequirement{{Key: naming.LabelInstance, Operator: metav1.LabelSelectorOpIn, Values: instNames}}, sel.Namespaces()
}

// smExporterEndpoint scrapes the exporter's metrics port with every setting
// of the monitor's endpoint.
func smExporterEndpoint(mon *v1beta1.NginxMonitor, sel Selection) monitoringv1.Endpoint {
	ep := mon.Spec.Endpoint
	exporter := monitoringv1.Endpoint{
		Port:           MetricsPortName,
		Path:           ep.Path,
		Scheme:         ptr.To(monitoringv1.Scheme(ep.Scheme)),
		Interval:       monitoringv1.Duration(ep.Interval),
		ScrapeTimeout:  monitoringv1.Duration(ep.ScrapeTimeout),
		HonorLabels:    ep.HonorLabels,
		RelabelConfigs: smTargetRules(mon, sel, JobName(mon.Namespace, mon.Name)),
	}
	for _, r := range ep.Relabelings {
		exporter.RelabelConfigs = append(exporter.RelabelConfigs, smRelabel(r))
	}
	for _, r := range ep.MetricRelabelings {
		exporter.MetricRelabelConfigs = append(exporter.MetricRelabelConfigs, smRelabel(r))
	}
	if ba := ep.BasicAuth; ba != nil {
		exporter.BasicAuth = &monitoringv1.BasicAuth{Username: ba.Username, Password: ba.Password}
	}
	if t := ep.TLSConfig; t != nil {
		exporter.TLSConfig = smTLSConfig(t)
	}
	return exporter
}

// smTLSConfig passes the monitor's TLS settings on as Secret references,
// which prometheus-operator reads.
func smTLSConfig(t *v1beta1.TLSConfig) *monitoringv1.TLSConfig {
	tc := monitoringv1.SafeTLSConfig{KeySecret: t.KeySecret}
	if t.CA != nil {
		tc.CA = monitoringv1.SecretOrConfigMap{Secret: t.CA}
	}
	if t.Cert != nil {
		tc.Cert = monitoringv1.SecretOrConfigMap{Secret: t.Cert}
	}
	// Set only when set in the monitor: the operator sends no field it
	// has no value for.
	if t.ServerName != "" {
		tc.ServerName = ptr.To(t.ServerName)
	}
	if t.InsecureSkipVerify {
		tc.InsecureSkipVerify = ptr.To(true)
	}
	return &monitoringv1.TLSConfig{SafeTLSConfig: tc}
}

// smReloaderEndpoint scrapes the reloader's port over plain HTTP with only
// the monitor's interval and timeout (see reloaderScrapeConfig).
func smReloaderEndpoint(mon *v1beta1.NginxMonitor, sel Selection) monitoringv1.Endpoint {
	ep := mon.Spec.Endpoint
	return monitoringv1.Endpoint{
		Port:           ReloaderPortName,
		Path:           reloader.MetricsPath,
		Scheme:         ptr.To(monitoringv1.Scheme("http")),
		Interval:       monitoringv1.Duration(ep.Interval),
		ScrapeTimeout:  monitoringv1.Duration(ep.ScrapeTimeout),
		RelabelConfigs: smTargetRules(mon, sel, ReloaderJobName(mon.Namespace, mon.Name)),
	}
}

// smTargetRules are the operator's relabelings of a ServiceMonitor endpoint,
// the counterpart of targetRules (prometheus-operator itself keeps the
// endpoint's port of the Services the selector matches): they keep the
// selected instances' client Services, set namespace, instance and pod, set
// job, and then the monitor's targetLabels.
func smTargetRules(mon *v1beta1.NginxMonitor, sel Selection, job string) []monitoringv1.RelabelConfig {
	var keys []string
	for _, in := range sel.Scraped() {
		keys = append(keys, regexp.QuoteMeta(in.Namespace+";"+in.service()))
	}
	if len(keys) == 0 {
		// The keep rule's source values are "<namespace>;<service>": one
		// without ";" never matches. (An empty regex would be Prometheus'
		// default, (.*), which keeps everything.)
		keys = []string{"none"}
	}
	rules := []monitoringv1.RelabelConfig{
		// Only the client Service of each selected instance, not its headless twin.
		{SourceLabels: labelNames(metaNamespace, metaServiceName), Regex: strings.Join(keys, "|"), Action: "keep"},
		{SourceLabels: labelNames(metaNamespace), TargetLabel: LabelNamespace, Action: "replace"},
		{SourceLabels: labelNames(metaSvcLabel + LabelName(naming.LabelInstance)), TargetLabel: LabelInstance, Action: "replace"},
		{SourceLabels: labelNames(metaPodName), TargetLabel: LabelPod, Action: "replace"},
		// The job of the scrape configuration Secret, replacing the
		// Service name prometheus-operator sets before this rule.
		{TargetLabel: "job", Replacement: ptr.To(job), Action: "replace"},
	}
	for _, t := range sel.targetLabelRules(mon.Spec.TargetLabels) {
		rules = append(rules, monitoringv1.RelabelConfig{
			SourceLabels: labelNames(targetLabelSources()...), Regex: t.Regex, TargetLabel: t.TargetLabel,
			Replacement: ptr.To(t.Replacement), Action: "replace",
		})
	}
	return rules
}

// matchNothing is a label selector requirement list that no object matches
// and that every consumer accepts: the label key both exists and does not.
// Both operators take no values, so Kubernetes' selector validation (which
// prometheus-operator runs on a ServiceMonitor's selector, refusing it as
// InvalidConfiguration otherwise) and prometheus-operator's translation into
// relabelings (keep when present, drop when present) and into a Kubernetes SD
// role selector ("k,!k") all accept it. An In requirement cannot say
// "nothing": it needs at least one value, and any valid value is a name an
// object could carry.
//
// The ServiceMonitor of a monitor that selects nothing is still applied,
// with this selector, rather than deleted: it then scrapes nothing, like the
// empty scrape configuration list, and the instances selected later reuse
// the same object.
func matchNothing(key string) []metav1.LabelSelectorRequirement {
	return []metav1.LabelSelectorRequirement{
		{Key: key, Operator: metav1.LabelSelectorOpExists},
		{Key: key, Operator: metav1.LabelSelectorOpDoesNotExist},
	}
}

// serviceMonitorApplyObject is sm as the operator applies it. The typed
// object always carries tlsConfig's ca and cert (prometheus-operator holds
// them by value), as {} when unset; they are left out of what is sent, so
// the operator applies exactly the fields it has values for.
func serviceMonitorApplyObject(sm *monitoringv1.ServiceMonitor) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sm)
	if err != nil {
		return nil, fmt.Errorf("converting ServiceMonitor %s: %w", sm.Name, err)
	}
	spec, _ := obj["spec"].(map[string]any)
	endpoints, _ := spec["endpoints"].([]any)
	for _, e := range endpoints {
		endpoint, _ := e.(map[string]any)
		tls, ok := endpoint["tlsConfig"].(map[string]any)
		if !ok {
			continue
		}
		for _, field := range []string{"ca", "cert"} {
			if v, ok := tls[field].(map[string]any); ok && len(v) == 0 {
				delete(tls, field)
			}
		}
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

func labelNames(names ...string) []monitoringv1.LabelName {
	out := make([]monitoringv1.LabelName, len(names))
	for i, n := range names {
		out[i] = monitoringv1.LabelName(n)
	}
	return out
}

func smRelabel(r v1beta1.RelabelConfig) monitoringv1.RelabelConfig {
	return monitoringv1.RelabelConfig{SourceLabels: labelNames(r.SourceLabels...), Separator: r.Separator, TargetLabel: r.TargetLabel,
		Regex: r.Regex, Modulus: r.Modulus, Replacement: r.Replacement, Action: r.Action}
}
