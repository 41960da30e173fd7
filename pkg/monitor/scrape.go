// Package monitor is the NginxMonitor controller: it selects NginxOperator
// instances by label and namespace and generates, per monitor, a Secret
// holding a list of Prometheus scrape_config entries (scrape-configs.yaml)
// that discovers exactly those instances' exporter and reloader endpoints.
package monitor

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/common/model"
	yaml "go.yaml.in/yaml/v2"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// ScrapeConfigsKey is the key of the generated Secret that holds the list of
// scrape_config entries: the format of prometheus-operator's
// additionalScrapeConfigs.
const ScrapeConfigsKey = "scrape-configs.yaml"

// ScrapeConfigFileKey is the key holding the same entries as a file for
// Prometheus' scrape_config_files, which wants a document with a
// scrape_configs key rather than a bare list.
const ScrapeConfigFileKey = "scrape-config-file.yaml"

// MetricsPortName is the name of the exporter's port on the client Service.
const MetricsPortName = layout.MetricsPortName

// ReloaderPortName is the name of the nginx-reloader's port on the client
// Service; it serves reloader.MetricsPath over plain HTTP, without
// authentication.
const ReloaderPortName = layout.ReloaderPortName

// Labels every target carries, besides the Prometheus job.
const (
	LabelNamespace = "namespace"
	LabelInstance  = "instance"
	LabelPod       = "pod"
)

// Credentials are the resolved values of the endpoint's Secret references.
type Credentials struct {
	Username, Password string
	CA, Cert, Key      string
}

// Options are the builder's inputs besides the monitor and its instances.
type Options struct {
	// KubeconfigFile, when set, is written into every kubernetes_sd_config, for
	// a Prometheus running outside the cluster (tests). In a cluster Prometheus
	// uses its own service account.
	KubeconfigFile string
	// Role is the kubernetes_sd_configs role: "endpointslice" (default) or "endpoints".
	Role string
}

// JobName is the Prometheus job of a monitor's exporter targets: unique per
// monitor, so several monitors' files can be loaded side by side.
func JobName(namespace, name string) string {
	return "nginxmonitor/" + namespace + "/" + name
}

// ReloaderJobName is the Prometheus job of a monitor's reloader targets. It
// is a job of its own because the reloader is scraped with none of the
// endpoint's exporter settings (scheme, path, credentials). Namespace and
// monitor names hold no "/", so it has one more segment than any JobName and
// no two monitors' jobs, of either kind, are equal: the mixin tells the two
// kinds apart by that segment.
func ReloaderJobName(namespace, name string) string {
	return JobName(namespace, name) + "/reloader"
}

// The scrape_config subset the operator writes, in Prometheus' field order.
type scrapeConfig struct {
	JobName              string          `yaml:"job_name"`
	HonorLabels          bool            `yaml:"honor_labels,omitempty"`
	ScrapeInterval       string          `yaml:"scrape_interval,omitempty"`
	ScrapeTimeout        string          `yaml:"scrape_timeout,omitempty"`
	MetricsPath          string          `yaml:"metrics_path,omitempty"`
	Scheme               string          `yaml:"scheme,omitempty"`
	SampleLimit          int64           `yaml:"sample_limit,omitempty"`
	BasicAuth            *basicAuth      `yaml:"basic_auth,omitempty"`
	TLSConfig            *tlsConfig      `yaml:"tls_config,omitempty"`
	KubernetesSDConfigs  []kubernetesSD  `yaml:"kubernetes_sd_configs"`
	RelabelConfigs       []relabelConfig `yaml:"relabel_configs"`
	MetricRelabelConfigs []relabelConfig `yaml:"metric_relabel_configs,omitempty"`
}

type basicAuth struct {
	Username string `yaml:"username"`
	Password string `yaml:"password,omitempty"`
}

type tlsConfig struct {
	CA                 string `yaml:"ca,omitempty"`
	Cert               string `yaml:"cert,omitempty"`
	Key                string `yaml:"key,omitempty"`
	ServerName         string `yaml:"server_name,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify,omitempty"`
}

type kubernetesSD struct {
	Role           string        `yaml:"role"`
	KubeconfigFile string        `yaml:"kubeconfig_file,omitempty"`
	Namespaces     sdNamespaces  `yaml:"namespaces"`
	Selectors      []sdSelectors `yaml:"selectors,omitempty"`
}

type sdNamespaces struct {
	Names []string `yaml:"names"`
}

type sdSelectors struct {
	Role  string `yaml:"role"`
	Label string `yaml:"label,omitempty"`
}

type relabelConfig struct {
	SourceLabels []string `yaml:"source_labels,flow,omitempty"`
	Separator    *string  `yaml:"separator,omitempty"`
	TargetLabel  string   `yaml:"target_label,omitempty"`
	Regex        string   `yaml:"regex,omitempty"`
	Modulus      int64    `yaml:"modulus,omitempty"`
	Replacement  *string  `yaml:"replacement,omitempty"`
	Action       string   `yaml:"action,omitempty"`
}

// Meta labels of the endpointslice (and endpoints) roles the rules use.
const (
	metaNamespace   = "__meta_kubernetes_namespace"
	metaServiceName = "__meta_kubernetes_service_name"
	metaPodName     = "__meta_kubernetes_pod_name"
	metaSvcLabel    = "__meta_kubernetes_service_label_"
)

// SpecError is a spec the schema accepted but that cannot be turned into a
// valid Prometheus configuration; condition Accepted=False, reason InvalidSpec.
type SpecError = k8sutil.SpecError

func specErrorf(format string, args ...any) error {
	return k8sutil.InvalidSpec(ReasonInvalidSpec, format, args...)
}

// reservedLabels are set by the operator's own rules; a targetLabel may not overwrite them.
var reservedLabels = map[string]bool{"job": true, LabelNamespace: true, LabelInstance: true, LabelPod: true}

// Validate checks what the schema cannot: durations as Prometheus parses them,
// scrapeTimeout <= interval, regexes (again, as Prometheus anchors them) and
// target labels that would clash with the operator's. Every problem is
// reported at once.
func Validate(spec *v1beta1.NginxMonitorSpec) error {
	var errs []error
	ep := spec.Endpoint
	interval := ep.Interval
	iv, err := model.ParseDuration(interval)
	if err != nil || iv <= 0 {
		errs = append(errs, specErrorf("endpoint.interval %q is not a positive Prometheus duration", interval))
	}
	if ep.ScrapeTimeout != "" {
		tv, err := model.ParseDuration(ep.ScrapeTimeout)
		switch {
		case err != nil || tv <= 0:
			errs = append(errs, specErrorf("endpoint.scrapeTimeout %q is not a positive Prometheus duration", ep.ScrapeTimeout))
		case iv > 0 && tv > iv:
			errs = append(errs, specErrorf("endpoint.scrapeTimeout %s is longer than endpoint.interval %s", ep.ScrapeTimeout, interval))
		}
	}
	for field, rules := range map[string][]v1beta1.RelabelConfig{"relabelings": ep.Relabelings, "metricRelabelings": ep.MetricRelabelings} {
		for i, r := range rules {
			if r.Regex == "" {
				continue
			}
			if _, err := regexp.Compile("^(?:" + r.Regex + ")$"); err != nil {
				errs = append(errs, specErrorf("endpoint.%s[%d].regex: %v", field, i, err))
			}
		}
	}
	seen := map[string]string{}
	for _, key := range spec.TargetLabels {
		name := LabelName(key)
		if reservedLabels[name] || strings.HasPrefix(name, "__") {
			errs = append(errs, specErrorf("targetLabels: %q becomes the label %q, which the operator sets or Prometheus reserves", key, name))
		}
		if other, ok := seen[name]; ok {
			errs = append(errs, specErrorf("targetLabels: %q and %q both become the label %q", other, key, name))
		}
		seen[name] = key
	}
	return errors.Join(errs...)
}

var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// LabelName turns a Kubernetes label key into a Prometheus label name, as
// Prometheus does for __meta_kubernetes_*_label_* names.
func LabelName(key string) string {
	name := invalidLabelChars.ReplaceAllString(key, "_")
	if name != "" && name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return name
}

// Build returns scrape-configs.yaml for mon: a YAML list of two
// scrape_config entries that discover, in the namespaces of the selected
// instances only, the endpoints of their client Services and nothing else.
// The first, job JobName, scrapes the exporter's metrics port with the
// monitor's endpoint settings; the second, job ReloaderJobName, scrapes the
// reloader's port (see reloaderScrapeConfig). With no instance exposing
// metrics the list is empty, never a job that discovers everything. Output
// is deterministic: it follows the selection's order.
func Build(mon *v1beta1.NginxMonitor, sel Selection, creds Credentials, opts Options) ([]byte, error) {
	if err := Validate(&mon.Spec); err != nil {
		return nil, err
	}
	if len(sel.Scraped()) == 0 {
		return []byte("[]\n"), nil
	}

	ep := mon.Spec.Endpoint
	role := opts.Role
	if role == "" {
		role = "endpointslice"
	}
	exporter := scrapeConfig{
		JobName:             JobName(mon.Namespace, mon.Name),
		HonorLabels:         ep.HonorLabels,
		ScrapeInterval:      ep.Interval,
		ScrapeTimeout:       ep.ScrapeTimeout,
		MetricsPath:         ep.Path,
		Scheme:              ep.Scheme,
		SampleLimit:         ep.SampleLimit,
		KubernetesSDConfigs: discovery(sel, role, opts),
	}
	if ep.BasicAuth != nil {
		exporter.BasicAuth = &basicAuth{Username: creds.Username, Password: creds.Password}
	}
	if t := ep.TLSConfig; t != nil {
		exporter.TLSConfig = &tlsConfig{CA: creds.CA, Cert: creds.Cert, Key: creds.Key, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	}
	exporter.RelabelConfigs = append(targetRules(mon, sel, role, MetricsPortName), convertRelabelings(ep.Relabelings)...)
	exporter.MetricRelabelConfigs = convertRelabelings(ep.MetricRelabelings)

	out, err := yaml.Marshal([]scrapeConfig{exporter, reloaderScrapeConfig(mon, sel, role, opts)})
	if err != nil {
		return nil, fmt.Errorf("encoding the scrape configuration: %w", err)
	}
	return out, nil
}

// reloaderScrapeConfig scrapes the nginx-reloader of the same pods: the same
// discovery, the same selection, the same namespace, instance, pod and
// targetLabels labels, at the endpoint's interval and timeout. Nothing else
// of the endpoint applies. Its scheme, path, credentials and TLS settings
// describe the exporter: the reloader serves plain HTTP on
// reloader.MetricsPath and asks for no credentials, so https would fail and
// a password would be sent for nothing. Its relabelings, metric relabelings,
// honorLabels and sampleLimit are written against the exporter's targets and
// series: a rule rewriting __metrics_path__ or __address__, or keeping
// series by name, would break this job silently.
func reloaderScrapeConfig(mon *v1beta1.NginxMonitor, sel Selection, role string, opts Options) scrapeConfig {
	return scrapeConfig{
		JobName:             ReloaderJobName(mon.Namespace, mon.Name),
		ScrapeInterval:      mon.Spec.Endpoint.Interval,
		ScrapeTimeout:       mon.Spec.Endpoint.ScrapeTimeout,
		MetricsPath:         reloader.MetricsPath,
		Scheme:              "http",
		KubernetesSDConfigs: discovery(sel, role, opts),
		RelabelConfigs:      targetRules(mon, sel, role, ReloaderPortName),
	}
}

// discovery is the kubernetes_sd_configs of every job of a monitor.
func discovery(sel Selection, role string, opts Options) []kubernetesSD {
	// The EndpointSlice (and Endpoints) controller copies a Service's labels
	// onto its slices, so Prometheus need only watch the operator's nginx
	// slices; the relabelling of targetRules is what selects exactly.
	return []kubernetesSD{{
		Role: role, KubeconfigFile: opts.KubeconfigFile, Namespaces: sdNamespaces{Names: sel.Namespaces()},
		Selectors: []sdSelectors{{Role: role, Label: naming.LabelManagedBy + "=" + naming.ManagedBy + "," + naming.LabelName + "=nginx"}},
	}}
}

// targetRules are the operator's relabelling rules of a job that scrapes
// port of the selected instances' client Services: they keep exactly those
// endpoints and set namespace, instance, pod and the monitor's targetLabels.
func targetRules(mon *v1beta1.NginxMonitor, sel Selection, role, port string) []relabelConfig {
	var keys []string
	for _, in := range sel.Scraped() {
		keys = append(keys, regexp.QuoteMeta(in.Namespace+";"+in.service()+";"+in.Name))
	}
	svcLabel := func(key string) string { return metaSvcLabel + LabelName(key) }
	portLabel := "__meta_kubernetes_endpointslice_port_name"
	if role == "endpoints" {
		portLabel = "__meta_kubernetes_endpoint_port_name"
	}
	rules := []relabelConfig{
		// Only the port of this job...
		{SourceLabels: []string{portLabel}, Regex: port, Action: "keep"},
		// ...of Services the operator made for an nginx instance...
		{
			SourceLabels: []string{svcLabel(naming.LabelManagedBy), svcLabel(naming.LabelName), svcLabel(naming.LabelComponent)},
			Regex:        regexp.QuoteMeta(naming.ManagedBy + ";nginx;server"), Action: "keep",
		},
		// ...and of exactly the selected instances (namespace, client Service, instance label).
		{
			SourceLabels: []string{metaNamespace, metaServiceName, svcLabel(naming.LabelInstance)},
			Regex:        strings.Join(keys, "|"), Action: "keep",
		},
		{SourceLabels: []string{metaNamespace}, TargetLabel: LabelNamespace, Action: "replace"},
		{SourceLabels: []string{svcLabel(naming.LabelInstance)}, TargetLabel: LabelInstance, Action: "replace"},
		{SourceLabels: []string{metaPodName}, TargetLabel: LabelPod, Action: "replace"},
	}
	for _, t := range sel.targetLabelRules(mon.Spec.TargetLabels) {
		rules = append(rules, relabelConfig{
			SourceLabels: targetLabelSources(), Regex: t.Regex, TargetLabel: t.TargetLabel,
			Replacement: ptr.To(t.Replacement), Action: "replace",
		})
	}
	return rules
}

// FileForm turns the list Build returns into a file for Prometheus'
// scrape_config_files: the same entries under a scrape_configs key.
func FileForm(list []byte) []byte {
	if strings.TrimSpace(string(list)) == "[]" {
		return []byte("scrape_configs: []\n")
	}
	var b strings.Builder
	b.WriteString("scrape_configs:\n")
	for _, line := range strings.SplitAfter(string(list), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	return []byte(b.String())
}

func convertRelabelings(in []v1beta1.RelabelConfig) []relabelConfig {
	var out []relabelConfig
	for _, r := range in {
		out = append(out, relabelConfig{
			SourceLabels: r.SourceLabels, Separator: r.Separator, TargetLabel: r.TargetLabel,
			Regex: r.Regex, Modulus: r.Modulus, Replacement: r.Replacement, Action: r.Action,
		})
	}
	return out
}
