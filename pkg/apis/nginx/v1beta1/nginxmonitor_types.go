package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceSelector chooses the namespaces whose NginxOperator objects a monitor
// considers. Empty means the monitor's own namespace.
// +kubebuilder:validation:XValidation:rule="!(has(self.any) && self.any && has(self.matchNames) && size(self.matchNames) > 0)",message="set either any or matchNames, not both"
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
}

// Endpoint is how Prometheus scrapes each selected nginx instance.
type Endpoint struct {
	// Interval between scrapes, as a Prometheus duration.
	// +optional
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Pattern=`^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$`
	Interval string `json:"interval,omitempty"`
	// ScrapeTimeout for one scrape, as a Prometheus duration; at most the interval.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Pattern=`^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
	// Path of the metrics endpoint.
	// +optional
	// +kubebuilder:default="/metrics"
	// +kubebuilder:validation:Pattern=`^/[^\s]*$`
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`
	// HonorLabels keeps the scraped labels when they clash with target labels.
	// +optional
	HonorLabels bool `json:"honorLabels,omitempty"`
	// SampleLimit fails a scrape that returns more samples; 0 means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SampleLimit int64 `json:"sampleLimit,omitempty"`
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
	// Endpoint settings for every selected instance.
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
