package monitor

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// Instance is one selected NginxOperator, as the builders need it.
type Instance struct {
	Namespace, Name string
	// Labels of the NginxOperator object, the source of targetLabels.
	Labels map[string]string
	// MetricsEnabled: spec.metrics.enabled; only such instances have a
	// metrics port to scrape.
	MetricsEnabled bool
	// Replicas: status.replicas, the pods a scrape of the instance finds.
	Replicas int32
}

// instanceOf is what a monitor uses of a selected NginxOperator.
func instanceOf(in *v1beta1.NginxOperator) Instance {
	return Instance{
		Namespace: in.Namespace, Name: in.Name, Labels: in.Labels,
		MetricsEnabled: in.Spec.Metrics.Enabled, Replicas: in.Status.Replicas,
	}
}

// service is the name of the instance's client Service, the one carrying
// the metrics port.
func (in Instance) service() string { return layout.NamesFor(in.Name).Service }

// Selection is what a monitor selected, computed once per reconcile and read
// by everything built from it: the status, the scrape configuration and the
// ServiceMonitor, which therefore agree. Instances are ordered by namespace,
// then name (the order of status.instances); every list and every regex
// alternation the builders write follows that order, so their output is
// deterministic. The zero Selection selects nothing.
type Selection struct {
	all, scraped []Instance
	namespaces   []string
}

// NewSelection orders instances (a copy) by namespace, then name.
func NewSelection(instances []Instance) Selection {
	s := Selection{all: slices.Clone(instances)}
	slices.SortFunc(s.all, func(a, b Instance) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, in := range s.all {
		if !in.MetricsEnabled {
			continue
		}
		s.scraped = append(s.scraped, in)
		// Sorted by namespace: a new namespace is never one seen before the last.
		if n := len(s.namespaces); n == 0 || s.namespaces[n-1] != in.Namespace {
			s.namespaces = append(s.namespaces, in.Namespace)
		}
	}
	return s
}

// All is every selected instance, metrics enabled or not.
func (s Selection) All() []Instance { return s.all }

// Scraped is the selected instances with metrics enabled: the targets.
func (s Selection) Scraped() []Instance { return s.scraped }

// Namespaces is the distinct namespaces of the scraped instances.
func (s Selection) Namespaces() []string { return s.namespaces }

// targetLabelRule is the relabelling that gives one scraped instance's
// targets its value of one of the monitor's targetLabels: the values live on
// the NginxOperator objects, not on the Services Prometheus discovers, so
// each rule matches its instance by namespace and instance label (the
// sources targetLabelSources returns).
type targetLabelRule struct {
	Regex, TargetLabel, Replacement string
}

// targetLabelSources are the source labels of a targetLabelRule, fresh for each rule.
func targetLabelSources() []string {
	return []string{metaNamespace, metaSvcLabel + LabelName(naming.LabelInstance)}
}

// targetLabelRules lists the rules label by label (in the order of keys),
// then instance by instance, for the labels each scraped instance has.
func (s Selection) targetLabelRules(keys []string) []targetLabelRule {
	var out []targetLabelRule
	for _, key := range keys {
		for _, in := range s.scraped {
			if value, ok := in.Labels[key]; ok {
				out = append(out, targetLabelRule{
					Regex:       regexp.QuoteMeta(in.Namespace + ";" + in.Name),
					TargetLabel: LabelName(key),
					// The value is literal: "$" would otherwise refer to a regex group.
					Replacement: strings.ReplaceAll(value, "$", "$$"),
				})
			}
		}
	}
	return out
}

// Targets is how many pods Prometheus scrapes: the replicas of the scraped
// instances (each pod is two endpoints, its exporter's and its reloader's).
func (s Selection) Targets() int {
	n := 0
	for _, in := range s.scraped {
		n += int(in.Replicas)
	}
	return n
}
