package monitor

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
)

// ServiceMonitor is the subset of prometheus-operator's monitoring.coreos.com/v1
// ServiceMonitor the operator writes. The prometheus-operator module is not a
// dependency: these few fields are all the operator sets, and server-side
// apply leaves every other field alone.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

// ServiceMonitorList is a list of ServiceMonitor.
type ServiceMonitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceMonitor `json:"items"`
}

// ServiceMonitorSpec mirrors prometheus-operator's field names.
type ServiceMonitorSpec struct {
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector SMNamespaceSelector  `json:"namespaceSelector,omitempty"`
	Endpoints         []SMEndpoint         `json:"endpoints"`
	SampleLimit       *int64               `json:"sampleLimit,omitempty"`
}

// SMNamespaceSelector is prometheus-operator's NamespaceSelector.
type SMNamespaceSelector struct {
	MatchNames []string `json:"matchNames,omitempty"`
}

// SMEndpoint is prometheus-operator's Endpoint.
type SMEndpoint struct {
	Port              string       `json:"port"`
	Path              string       `json:"path,omitempty"`
	Scheme            string       `json:"scheme,omitempty"`
	Interval          string       `json:"interval,omitempty"`
	ScrapeTimeout     string       `json:"scrapeTimeout,omitempty"`
	HonorLabels       bool         `json:"honorLabels,omitempty"`
	Relabelings       []SMRelabel  `json:"relabelings,omitempty"`
	MetricRelabelings []SMRelabel  `json:"metricRelabelings,omitempty"`
	BasicAuth         *SMBasicAuth `json:"basicAuth,omitempty"`
	TLSConfig         *SMTLSConfig `json:"tlsConfig,omitempty"`
}

// SMRelabel is prometheus-operator's RelabelConfig.
type SMRelabel struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	Separator    *string  `json:"separator,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Modulus      int64    `json:"modulus,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// SMBasicAuth is prometheus-operator's BasicAuth.
type SMBasicAuth struct {
	Username corev1.SecretKeySelector `json:"username"`
	Password corev1.SecretKeySelector `json:"password"`
}

// SMTLSConfig is prometheus-operator's TLSConfig (Secret sources only).
type SMTLSConfig struct {
	CA                 *SMSecretOrConfigMap      `json:"ca,omitempty"`
	Cert               *SMSecretOrConfigMap      `json:"cert,omitempty"`
	KeySecret          *corev1.SecretKeySelector `json:"keySecret,omitempty"`
	ServerName         string                    `json:"serverName,omitempty"`
	InsecureSkipVerify bool                      `json:"insecureSkipVerify,omitempty"`
}

// SMSecretOrConfigMap is prometheus-operator's SecretOrConfigMap.
type SMSecretOrConfigMap struct {
	Secret *corev1.SecretKeySelector `json:"secret,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (s *ServiceMonitor) DeepCopyObject() runtime.Object { return deepCopyJSON(s, &ServiceMonitor{}) }

// DeepCopyObject implements runtime.Object.
func (s *ServiceMonitorList) DeepCopyObject() runtime.Object {
	return deepCopyJSON(s, &ServiceMonitorList{})
}

func deepCopyJSON[T runtime.Object](in T, out T) runtime.Object {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

// AddServiceMonitorToScheme registers ServiceMonitor, so the Applier can
// apply it like any other child.
func AddServiceMonitorToScheme(s *runtime.Scheme) error {
	gv := ServiceMonitorGVK.GroupVersion()
	if s.Recognizes(ServiceMonitorGVK) {
		return nil
	}
	s.AddKnownTypes(gv, &ServiceMonitor{}, &ServiceMonitorList{})
	metav1.AddToGroupVersion(s, gv)
	return nil
}

// BuildServiceMonitor is the ServiceMonitor equivalent of Build: it selects
// the client Services of the selected instances that have metrics enabled,
// in their namespaces, keeps exactly their metrics port and sets the same
// labels. Credentials stay Secret references (prometheus-operator reads them).
// With no instance it selects nothing (an impossible instance label value).
func BuildServiceMonitor(mon *v1beta1.NginxMonitor, instances []Instance) *ServiceMonitor {
	var selected []Instance
	for _, in := range instances {
		if in.MetricsEnabled {
			selected = append(selected, in)
		}
	}
	sort.Slice(selected, func(i, j int) bool {
		return selected[i].Namespace+"/"+selected[i].Name < selected[j].Namespace+"/"+selected[j].Name
	})
	names := map[string]bool{}
	nsSeen := map[string]bool{}
	var namespaces, instNames, keys []string
	for _, in := range selected {
		if !nsSeen[in.Namespace] {
			nsSeen[in.Namespace] = true
			namespaces = append(namespaces, in.Namespace)
		}
		if !names[in.Name] {
			names[in.Name] = true
			instNames = append(instNames, in.Name)
		}
		keys = append(keys, regexp.QuoteMeta(in.Namespace+";"+nginx.NamesFor(in.Name).Service))
	}
	sort.Strings(instNames)
	if len(instNames) == 0 {
		// "-" is not a valid object name: no Service carries it.
		instNames = []string{"-"}
		namespaces = []string{mon.Namespace}
		keys = []string{"-"}
	}
	ep := mon.Spec.Endpoint
	smep := SMEndpoint{
		Port: MetricsPortName, Path: orDefault(ep.Path, DefaultPath), Scheme: orDefault(ep.Scheme, DefaultScheme),
		Interval: orDefault(ep.Interval, DefaultInterval), ScrapeTimeout: ep.ScrapeTimeout, HonorLabels: ep.HonorLabels,
	}
	smep.Relabelings = []SMRelabel{
		// Only the client Service of each selected instance, not its headless twin.
		{SourceLabels: []string{metaNamespace, metaServiceName}, Regex: strings.Join(keys, "|"), Action: "keep"},
		{SourceLabels: []string{metaNamespace}, TargetLabel: LabelNamespace, Action: "replace"},
		{SourceLabels: []string{metaSvcLabel + LabelName(k8sutil.LabelInstance)}, TargetLabel: LabelInstance, Action: "replace"},
		{SourceLabels: []string{metaPodName}, TargetLabel: LabelPod, Action: "replace"},
	}
	for _, key := range mon.Spec.TargetLabels {
		for _, in := range selected {
			if value, ok := in.Labels[key]; ok {
				smep.Relabelings = append(smep.Relabelings, SMRelabel{
					SourceLabels: []string{metaNamespace, metaSvcLabel + LabelName(k8sutil.LabelInstance)},
					Regex:        regexp.QuoteMeta(in.Namespace + ";" + in.Name), TargetLabel: LabelName(key),
					Replacement: ptr(strings.ReplaceAll(value, "$", "$$")), Action: "replace",
				})
			}
		}
	}
	for _, r := range ep.Relabelings {
		smep.Relabelings = append(smep.Relabelings, smRelabel(r))
	}
	for _, r := range ep.MetricRelabelings {
		smep.MetricRelabelings = append(smep.MetricRelabelings, smRelabel(r))
	}
	if ba := ep.BasicAuth; ba != nil {
		smep.BasicAuth = &SMBasicAuth{Username: ba.Username, Password: ba.Password}
	}
	if t := ep.TLSConfig; t != nil {
		tc := &SMTLSConfig{KeySecret: t.KeySecret, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
		if t.CA != nil {
			tc.CA = &SMSecretOrConfigMap{Secret: t.CA}
		}
		if t.Cert != nil {
			tc.Cert = &SMSecretOrConfigMap{Secret: t.Cert}
		}
		smep.TLSConfig = tc
	}
	sm := &ServiceMonitor{
		TypeMeta: metav1.TypeMeta{APIVersion: ServiceMonitorGVK.GroupVersion().String(), Kind: ServiceMonitorGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: mon.Name, Namespace: mon.Namespace,
			Labels: k8sutil.Labels("nginx-monitor", mon.Name, "servicemonitor"),
		},
		Spec: ServiceMonitorSpec{
			Selector: metav1.LabelSelector{
				MatchLabels: map[string]string{
					k8sutil.LabelManagedBy: k8sutil.ManagedBy, k8sutil.LabelName: "nginx", k8sutil.LabelComponent: "server",
				},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: k8sutil.LabelInstance, Operator: metav1.LabelSelectorOpIn, Values: instNames}},
			},
			NamespaceSelector: SMNamespaceSelector{MatchNames: namespaces},
			Endpoints:         []SMEndpoint{smep},
		},
	}
	if ep.SampleLimit > 0 {
		sm.Spec.SampleLimit = ptr(ep.SampleLimit)
	}
	return sm
}

func smRelabel(r v1beta1.RelabelConfig) SMRelabel {
	return SMRelabel{SourceLabels: r.SourceLabels, Separator: r.Separator, TargetLabel: r.TargetLabel, Regex: r.Regex,
		Modulus: r.Modulus, Replacement: r.Replacement, Action: orDefault(r.Action, "replace")}
}
