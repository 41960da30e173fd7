package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// chartDefaults are the values whose defaults config/ states: values.yaml
// repeats them so `helm install` with no values installs what bundle.yaml
// does.
type chartDefaults struct {
	repository, tag    string
	replicas           any
	resources          any
	podSecurityContext any
	securityContext    any
	affinity           any
	minAvailable       any
	scrapeInterval     any
	prometheusName     any
	prometheusNS       any
}

// operatorContainer is the Deployment's container that runs the operator.
const operatorContainer = "operator"

func podSpecOf(dep map[string]any) (map[string]any, map[string]any, error) {
	spec, _ := dep["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	if pod == nil {
		return nil, nil, fmt.Errorf("the Deployment has no pod template")
	}
	containers, _ := pod["containers"].([]any)
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == operatorContainer {
			return pod, m, nil
		}
	}
	return nil, nil, fmt.Errorf("the Deployment has no container %q", operatorContainer)
}

// valuesFromDeployment reads the defaults off config's Deployment, before
// markDeployment replaces them with placeholders.
func valuesFromDeployment(dep map[string]any) (chartDefaults, error) {
	pod, ctr, err := podSpecOf(dep)
	if err != nil {
		return chartDefaults{}, err
	}
	image, _ := ctr["image"].(string)
	// The tag follows the last colon after the last slash: a registry's
	// host may have a port (10.0.0.1:5000/nginx-operator:v1.2.3).
	i := strings.LastIndex(image, ":")
	if i < 0 || i < strings.LastIndex(image, "/") {
		return chartDefaults{}, fmt.Errorf("the operator image %q has no tag", image)
	}
	repo, tag := image[:i], image[i+1:]
	spec := dep["spec"].(map[string]any)
	return chartDefaults{
		repository: repo, tag: tag,
		replicas:           spec["replicas"],
		resources:          ctr["resources"],
		securityContext:    ctr["securityContext"],
		podSecurityContext: pod["securityContext"],
		affinity:           pod["affinity"],
	}, nil
}

// markDeployment puts placeholders where values go.
func markDeployment(dep map[string]any) error {
	pod, ctr, err := podSpecOf(dep)
	if err != nil {
		return err
	}
	spec := dep["spec"].(map[string]any)
	spec["replicas"] = placeholder("replicas")
	tmplMeta := spec["template"].(map[string]any)["metadata"].(map[string]any)
	tmplMeta["labels"].(map[string]any)[placeholder("pod-labels")] = ""
	tmplMeta["annotations"] = placeholder("pod-annotations")
	for key, ph := range map[string]string{
		"securityContext": "pod-security-context", "affinity": "affinity", "nodeSelector": "node-selector",
		"tolerations": "tolerations", "topologySpreadConstraints": "topology-spread",
		"imagePullSecrets": "image-pull-secrets", "priorityClassName": "priority-class",
	} {
		pod[key] = placeholder(ph)
	}
	for key, ph := range map[string]string{
		"image": "image", "imagePullPolicy": "pull-policy", "resources": "resources", "securityContext": "security-context",
	} {
		ctr[key] = placeholder(ph)
	}
	env, _ := ctr["env"].([]any)
	for _, e := range env {
		if m, ok := e.(map[string]any); ok && m["name"] == operatorImageEnv {
			m["value"] = placeholder("image-env")
		}
	}
	args, _ := ctr["args"].([]any)
	var marked []any
	for _, a := range args {
		s, _ := a.(string)
		switch {
		case s == "--leader-elect":
			marked = append(marked, placeholder("if-leader-elect"), s, placeholder("end"))
		case strings.HasPrefix(s, "--metrics-bind-address="):
			marked = append(marked, placeholder("if-metrics"), s, placeholder("else"), "--metrics-bind-address=0", placeholder("end"))
		default:
			marked = append(marked, a)
		}
	}
	ctr["args"] = append(marked, placeholder("args"))
	return nil
}

// addPrometheus adds config/prometheus's ServiceMonitor and the binding that
// lets Prometheus scrape, both under metrics.serviceMonitor.enabled.
func addPrometheus(files chartFiles, dir string, d *chartDefaults) error {
	const wrap = ".Values.metrics.enabled | and .Values.metrics.serviceMonitor.enabled"
	monitor, err := readObject(filepath.Join(dir, "service_monitor.yaml"))
	if err != nil {
		return err
	}
	endpoints, _ := monitor["spec"].(map[string]any)["endpoints"].([]any)
	if len(endpoints) != 1 {
		return fmt.Errorf("config/prometheus: want one ServiceMonitor endpoint, have %d", len(endpoints))
	}
	ep := endpoints[0].(map[string]any)
	d.scrapeInterval, ep["interval"] = ep["interval"], placeholder("scrape-interval")
	monitor["metadata"].(map[string]any)["labels"].(map[string]any)[placeholder("monitor-labels")] = ""
	if err := addTemplate(files, monitor, wrap); err != nil {
		return err
	}
	binding, err := readObject(filepath.Join(dir, "metrics_reader_binding.yaml"))
	if err != nil {
		return err
	}
	subjects, _ := binding["subjects"].([]any)
	if len(subjects) != 1 {
		return fmt.Errorf("config/prometheus: want one subject of the metrics reader binding, have %d", len(subjects))
	}
	s := subjects[0].(map[string]any)
	d.prometheusName, s["name"] = s["name"], placeholder("prometheus-name")
	d.prometheusNS, s["namespace"] = s["namespace"], placeholder("prometheus-ns")
	return addTemplate(files, binding, wrap)
}

func readObject(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// rbacTemplate grants the operator what controller-gen's markers ask for:
// everywhere with a ClusterRole, or, when watchNamespaces is set, the
// namespaced rules by a Role in each watched namespace and the release's
// (leader election, the webhook's Secret, Events), as config/namespaced does.
const rbacTemplate = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s
  labels:
    {{- include "nginx-operator.labels" . | nindent 4 }}
{{- if .Values.watchNamespaces }}
rules:
%[2]s{{- else }}
rules:
%[3]s{{- end }}
{{- if .Values.watchNamespaces }}
{{- range $ns := .Values.watchNamespaces | concat (list $.Release.Namespace) | uniq }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %[1]s
  namespace: {{ $ns }}
  labels:
    {{- include "nginx-operator.labels" $ | nindent 4 }}
rules:
%[4]s---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[1]s
  namespace: {{ $ns }}
  labels:
    {{- include "nginx-operator.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %[1]s
subjects:
- kind: ServiceAccount
  name: %[1]s
  namespace: {{ $.Release.Namespace }}
{{- end }}
{{- end }}
`

func addRBAC(files chartFiles, rolePath string) error {
	full, cluster, namespaced, err := splitRole(rolePath)
	if err != nil {
		return err
	}
	if full.Name != operatorRoleName {
		return fmt.Errorf("%s: ClusterRole %q, want %q", rolePath, full.Name, operatorRoleName)
	}
	var texts []string
	for _, rules := range [][]any{toAny(cluster), toAny(full.Rules), toAny(namespaced)} {
		b, err := yaml.Marshal(rules)
		if err != nil {
			return err
		}
		texts = append(texts, string(b))
	}
	files[filepath.Join("templates", "rbac-"+operatorRoleName+".yaml")] =
		fmt.Appendf([]byte(generatedHeader), rbacTemplate, operatorRoleName, texts[0], texts[1], texts[2])
	return nil
}

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

// renderValues writes values.yaml: every value the templates read, with
// config's defaults and a comment each.
func renderValues(d chartDefaults) ([]byte, error) {
	var b bytes.Buffer
	var errs []error
	b.WriteString(generatedHeader)
	b.WriteString("# The defaults install what bundle.yaml installs. values.schema.json checks them.\n\n")
	section := func(comment, key string, value any) {
		y, err := yaml.Marshal(map[string]any{key: value})
		errs = append(errs, err)
		if comment != "" {
			b.WriteString("# " + strings.ReplaceAll(comment, "\n", "\n# ") + "\n")
		}
		b.Write(y)
		b.WriteString("\n")
	}
	section("The operator's image, which also runs the backup agent and holds the nginx-reloader.\nThe tag defaults to the chart's appVersion; a digest, when set, pins it.",
		"image", map[string]any{"repository": d.repository, "tag": "", "digest": "", "pullPolicy": "IfNotPresent"})
	section("Secrets to pull the operator's image with.", "imagePullSecrets", []any{})
	section("Replicas of the operator; more than one needs leader election.", "replicaCount", d.replicas)
	section("Only the leader reconciles; the others take over when it goes.", "leaderElection", map[string]any{"enabled": true})
	section("Namespaces to watch (default: all), granted by Roles there instead of a ClusterRole.", "watchNamespaces", []any{})
	section("Namespaces never to watch; cannot be combined with watchNamespaces.", "denyNamespaces", []any{})
	section("Images the operator deploys for NginxOperator objects that name none (default: the operator's own defaults).",
		"images", map[string]any{"nginx": "", "exporter": ""})
	section("The metrics endpoint (HTTPS, every scrape authenticated and authorized), its Service,\nand a ServiceMonitor for prometheus-operator with the binding that lets Prometheus' ServiceAccount scrape.",
		"metrics", map[string]any{"enabled": true, "serviceMonitor": map[string]any{
			"enabled": false, "interval": d.scrapeInterval, "labels": map[string]any{},
			"prometheusServiceAccount": map[string]any{"name": d.prometheusName, "namespace": d.prometheusNS},
		}})
	section("The v1alpha1 <-> v1beta1 conversion webhook; the operator manages its certificate and the CRD's caBundle.\nDisabled, only v1beta1 can be read and written.",
		"webhook", map[string]any{"enabled": true})
	section("Keeps one replica through voluntary disruptions such as node drains.", "podDisruptionBudget", map[string]any{"enabled": true, "minAvailable": d.minAvailable})
	section("The operator container's resources.", "resources", d.resources)
	section("The pod's security context (the restricted Pod Security Standard).", "podSecurityContext", d.podSecurityContext)
	section("The operator container's security context.", "securityContext", d.securityContext)
	section("Scheduling of the operator's pods.", "affinity", d.affinity)
	section("", "nodeSelector", map[string]any{})
	section("", "tolerations", []any{})
	section("", "topologySpreadConstraints", []any{})
	section("", "priorityClassName", "")
	section("Extra labels and annotations of the operator's pods.", "podLabels", map[string]any{})
	section("", "podAnnotations", map[string]any{})
	section("More flags of `operator run` (`--log-level=debug`, `--log-format=json`, ...).", "extraArgs", []any{})
	return b.Bytes(), errors.Join(errs...)
}

// renderChartYAML is Chart.yaml for the operator image tag (v1.2.3): the
// chart's version is that without the v, so one release is one version.
func renderChartYAML(tag string) []byte {
	return fmt.Appendf([]byte(generatedHeader), `apiVersion: v2
name: nginx-operator
description: A Kubernetes operator for nginx - NginxOperator, NginxMonitor and NginxBackup custom resources.
type: application
version: %s
appVersion: %q
home: https://github.com/nginx-operator/nginx-operator
sources:
- https://github.com/nginx-operator/nginx-operator
keywords:
- nginx
- operator
`, strings.TrimPrefix(tag, "v"), tag)
}
