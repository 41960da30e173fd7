package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceSelector chooses the namespaces whose NginxOperator objects a monitor
// considers: any, a list of names, or a label selector over namespaces. Empty
// means the monitor's own namespace.
// +kubebuilder:validation:XValidation:rule="!(has(self.any) && self.any && has(self.matchNames) && size(self.matchNames) > 0)",message="set either any or matchNames, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.labelSelector) || (!(has(self.any) && self.any) && !(has(self.matchNames) && size(self.matchNames) > 0))",message="set labelSelector alone, not with any or matchNames"
type NamespaceSelector struct {
	// Any selects every namespace the operator watches.
	// +optional
	Any bool `json:"any,omitempty"`
	// MatchNames lists namespaces by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	MatchNames []string `json:"matchNames,omitempty"`
	// LabelSelector selects namespaces by their labels; a namespace whose labels
	// change is added to or dropped from the selection.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Endpoint is how Prometheus scrapes the exporter (port metrics) of each
// selected nginx instance. The instance's nginx-reloader (port reloader) is
// scraped in a job of its own with this interval and scrapeTimeout and none
// of the other settings: it serves plain HTTP on /metrics, without
// authentication. The controller also checks that scrapeTimeout is at most
// interval (condition Accepted=False, reason InvalidSpec), as Prometheus
// would refuse it.
// +kubebuilder:validation:XValidation:rule="!has(self.tlsConfig) || (has(self.scheme) && self.scheme == 'https')",message="tlsConfig needs scheme https"
type Endpoint struct {
	// Interval between scrapes, as a Prometheus duration.
	// +optional
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Pattern=`^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$`
	Interval string `json:"interval,omitempty"`
	// ScrapeTimeout for one scrape, as a Prometheus duration; at most the
	// interval. Unset: Prometheus' global scrape_timeout, or the interval when
	// that is shorter.
	// +optional
	// +kubebuilder:validation:Pattern=`^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
	// Path of the metrics endpoint.
	// +optional
	// +kubebuilder:default="/metrics"
	// +kubebuilder:validation:Pattern=`^/[^\s]*$`
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`
	// Scheme used to scrape: http, or https with tlsConfig.
	// +optional
	// +kubebuilder:default=http
	// +kubebuilder:validation:Enum=http;https
	Scheme string `json:"scheme,omitempty"`
	// HonorLabels keeps the scraped labels when they clash with target labels.
	// +optional
	HonorLabels bool `json:"honorLabels,omitempty"`
	// SampleLimit fails a scrape that returns more samples; 0 means no limit.
	// In the ServiceMonitor it is the ServiceMonitor's limit, which
	// prometheus-operator also applies to the reloader (five samples).
	// +optional
	// +kubebuilder:validation:Minimum=0
	SampleLimit int64 `json:"sampleLimit,omitempty"`
	// Relabelings are applied to each target before scraping, after the
	// operator's own rules (which select the instances and set namespace,
	// instance and pod).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Relabelings []RelabelConfig `json:"relabelings,omitempty"`
	// MetricRelabelings are applied to every scraped sample before ingestion.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MetricRelabelings []RelabelConfig `json:"metricRelabelings,omitempty"`
	// BasicAuth credentials for the scrape, from Secrets in the monitor's namespace.
	// +optional
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`
	// TLSConfig for https scrapes, from Secrets in the monitor's namespace.
	// +optional
	TLSConfig *TLSConfig `json:"tlsConfig,omitempty"`
}

// RelabelConfig is one Prometheus relabel_config. The action is enumerated and
// the regex must compile (as Prometheus compiles it, anchored), so a bad rule is
// refused at admission rather than breaking the generated configuration.
// +kubebuilder:validation:XValidation:rule="!has(self.regex) || type('-'.matches('^(?:' + self.regex + ')$')) == bool",message="regex must be a valid RE2 regular expression"
// +kubebuilder:validation:XValidation:rule="!(self.action in ['replace', 'hashmod', 'lowercase', 'uppercase', 'keepequal', 'dropequal']) || (has(self.targetLabel) && size(self.targetLabel) > 0)",message="targetLabel is required for actions replace, hashmod, lowercase, uppercase, keepequal and dropequal"
// +kubebuilder:validation:XValidation:rule="self.action != 'hashmod' || (has(self.modulus) && self.modulus > 0)",message="modulus must be positive for action hashmod"
// +kubebuilder:validation:XValidation:rule="!(self.action in ['keepequal', 'dropequal']) || !has(self.regex)",message="regex cannot be set for actions keepequal and dropequal"
// +kubebuilder:validation:XValidation:rule="!(self.action in ['labeldrop', 'labelkeep']) || !(has(self.sourceLabels) || has(self.targetLabel) || has(self.separator) || has(self.replacement) || has(self.modulus))",message="actions labeldrop and labelkeep take only regex"
type RelabelConfig struct {
	// SourceLabels are joined with the separator and matched against the regex.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$`
	SourceLabels []string `json:"sourceLabels,omitempty"`
	// Separator between concatenated source label values; Prometheus' default is ";".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Separator *string `json:"separator,omitempty"`
	// TargetLabel receives the result of replace, hashmod, lowercase and uppercase.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$|^\$\{?[a-zA-Z0-9_]+\}?$|^[a-zA-Z_][a-zA-Z0-9_]*(\$\{?[a-zA-Z0-9_]+\}?[a-zA-Z0-9_]*)+$`
	TargetLabel string `json:"targetLabel,omitempty"`
	// Regex matched against the source labels (RE2, anchored at both ends);
	// Prometheus' default is "(.*)".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Regex string `json:"regex,omitempty"`
	// Modulus for action hashmod.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Modulus int64 `json:"modulus,omitempty"`
	// Replacement for action replace (with $1-style references); Prometheus' default is "$1".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Replacement *string `json:"replacement,omitempty"`
	// Action to perform.
	// +optional
	// +kubebuilder:default=replace
	// +kubebuilder:validation:Enum=replace;keep;drop;hashmod;labelmap;labeldrop;labelkeep;lowercase;uppercase;keepequal;dropequal
	Action string `json:"action,omitempty"`
}

// BasicAuth names the username and password of HTTP basic authentication.
type BasicAuth struct {
	// Username is a key of a Secret in the monitor's namespace.
	Username corev1.SecretKeySelector `json:"username"`
	// Password is a key of a Secret in the monitor's namespace.
	Password corev1.SecretKeySelector `json:"password"`
}

// TLSConfig configures TLS of https scrapes.
type TLSConfig struct {
	// CA is a Secret key holding the PEM CA bundle that verifies the targets.
	// +optional
	CA *corev1.SecretKeySelector `json:"ca,omitempty"`
	// Cert is a Secret key holding the PEM client certificate.
	// +optional
	Cert *corev1.SecretKeySelector `json:"cert,omitempty"`
	// KeySecret is a Secret key holding the PEM client key.
	// +optional
	KeySecret *corev1.SecretKeySelector `json:"keySecret,omitempty"`
	// ServerName is the name the target certificates are verified for.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName string `json:"serverName,omitempty"`
	// InsecureSkipVerify disables target certificate verification.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// ServiceMonitorSpec asks for a prometheus-operator ServiceMonitor besides the scrape
// configuration Secret.
type ServiceMonitorSpec struct {
	// Enabled creates a ServiceMonitor owned by this NginxMonitor when the
	// monitoring.coreos.com API is served.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// NginxMonitorSpec selects nginx instances and says how to scrape them.
type NginxMonitorSpec struct {
	// Selector chooses NginxOperator objects by their labels. An empty selector
	// selects every instance in the selected namespaces.
	// +optional
	Selector metav1.LabelSelector `json:"selector,omitempty"`
	// NamespaceSelector chooses where to look; default: the monitor's namespace.
	// +optional
	NamespaceSelector NamespaceSelector `json:"namespaceSelector,omitempty"`
	// Endpoint settings of every selected instance's exporter; the reloader's
	// job takes only interval and scrapeTimeout.
	// +optional
	Endpoint Endpoint `json:"endpoint,omitempty"`
	// TargetLabels are label keys copied from each NginxOperator onto its targets.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=317
	TargetLabels []string `json:"targetLabels,omitempty"`
	// ServiceMonitor also publishes the selection as a prometheus-operator ServiceMonitor.
	// +optional
	ServiceMonitor ServiceMonitorSpec `json:"serviceMonitor,omitempty"`
}

// InstanceReference names one selected NginxOperator.
type InstanceReference struct {
	// Namespace of the NginxOperator.
	Namespace string `json:"namespace"`
	// Name of the NginxOperator.
	Name string `json:"name"`
}

// NginxMonitorStatus is what the monitor selected and generated.
type NginxMonitorStatus struct {
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// MatchedInstances is the number of selected NginxOperator objects.
	// +optional
	MatchedInstances int32 `json:"matchedInstances,omitempty"`
	// Instances lists the selected NginxOperator objects.
	// +optional
	// +listType=atomic
	Instances []InstanceReference `json:"instances,omitempty"`
	// ScrapeConfigSecret is the Secret holding scrape-configs.yaml.
	// +optional
	ScrapeConfigSecret string `json:"scrapeConfigSecret,omitempty"`
	// Conditions: Accepted and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NginxMonitor selects nginx instances for Prometheus to scrape, like a
// ServiceMonitor specialised for nginx, and generates their scrape configuration.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || (size(self.metadata.name) <= 49 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))",message="metadata.name must be at most 49 characters of lowercase letters, digits and '-': it names the monitor's ServiceMonitor and its Secret <name>-scrape-config",optionalOldSelf=true
// +kubebuilder:resource:shortName=ngxmon,categories=nginx
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Instances",type=integer,JSONPath=`.status.matchedInstances`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.scrapeConfigSecret`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NginxMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec selects instances and sets how they are scraped.
	// +optional
	Spec NginxMonitorSpec `json:"spec,omitempty"`
	// Status reports the selection and the generated configuration.
	// +optional
	Status NginxMonitorStatus `json:"status,omitempty"`
}

// NginxMonitorList is a list of NginxMonitor.
//
// +kubebuilder:object:root=true
type NginxMonitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NginxMonitor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NginxMonitor{}, &NginxMonitorList{})
}
