package main

import (
	"fmt"
	"sort"
)

// The ClusterServiceVersion's shape (operators.coreos.com/v1alpha1), only the
// fields this bundle sets. The operator-framework API module is not available
// here; field names follow its JSON tags.

type csvObject struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   csvMetadata `json:"metadata"`
	Spec       csvSpec     `json:"spec"`
}

type csvMetadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
}

type csvSpec struct {
	DisplayName               string              `json:"displayName"`
	Description               string              `json:"description"`
	Version                   string              `json:"version"`
	MinKubeVersion            string              `json:"minKubeVersion"`
	Maturity                  string              `json:"maturity"`
	Keywords                  []string            `json:"keywords"`
	Maintainers               []maintainer        `json:"maintainers"`
	Provider                  provider            `json:"provider"`
	Links                     []link              `json:"links"`
	InstallModes              []installMode       `json:"installModes"`
	Install                   installStrategy     `json:"install"`
	CustomResourceDefinitions crdDescriptions     `json:"customresourcedefinitions"`
	WebhookDefinitions        []webhookDefinition `json:"webhookdefinitions,omitempty"`
}

type maintainer struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
}

type provider struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

type link struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type installMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type installStrategy struct {
	Strategy string      `json:"strategy"`
	Spec     installSpec `json:"spec"`
}

type installSpec struct {
	ClusterPermissions []permission     `json:"clusterPermissions,omitempty"`
	Permissions        []permission     `json:"permissions,omitempty"`
	Deployments        []deploymentSpec `json:"deployments"`
}

type deploymentSpec struct {
	Name  string            `json:"name"`
	Label map[string]string `json:"label,omitempty"`
	Spec  object            `json:"spec"`
}

type crdDescriptions struct {
	Owned []crdDescription `json:"owned"`
}

type crdDescription struct {
	Name              string       `json:"name"`
	Version           string       `json:"version"`
	Kind              string       `json:"kind"`
	DisplayName       string       `json:"displayName"`
	Description       string       `json:"description"`
	Resources         []apiRef     `json:"resources,omitempty"`
	SpecDescriptors   []descriptor `json:"specDescriptors,omitempty"`
	StatusDescriptors []descriptor `json:"statusDescriptors,omitempty"`
}

type apiRef struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

type descriptor struct {
	Path         string   `json:"path"`
	DisplayName  string   `json:"displayName"`
	Description  string   `json:"description,omitempty"`
	XDescriptors []string `json:"x-descriptors,omitempty"`
}

type webhookDefinition struct {
	Type                    string   `json:"type"`
	GenerateName            string   `json:"generateName"`
	DeploymentName          string   `json:"deploymentName"`
	ContainerPort           int64    `json:"containerPort"`
	TargetPort              int64    `json:"targetPort"`
	WebhookPath             string   `json:"webhookPath"`
	AdmissionReviewVersions []string `json:"admissionReviewVersions"`
	SideEffects             string   `json:"sideEffects"`
	ConversionCRDs          []string `json:"conversionCRDs,omitempty"`
}

// The four OLM install modes, in the order OLM documents them.
var allInstallModes = []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"}

const (
	repository = "https://github.com/nginx-operator/nginx-operator"

	// capabilities is the operator's level on OLM's capability model. Deep
	// Insights (level 4) needs the levels below it and metrics, alerts and
	// dashboards: the operator installs and configures nginx from typed
	// fields (Basic Install), converts its API across versions and rolls
	// pods on configuration changes (Seamless Upgrades), backs up and
	// restores configuration and content with retention and checksums
	// (NginxBackup, spec.restore: Full Lifecycle), and exports its own
	// nginx_operator_* metrics, an nginx exporter sidecar per instance,
	// Prometheus scrape configuration (NginxMonitor) and a monitoring mixin
	// with alerts and dashboards (jsonnet/nginx-operator/mixin). It does not
	// autoscale or auto-tune (Auto Pilot).
	capabilities = "Deep Insights"

	displayName = "nginx-operator"

	shortDescription = "Runs nginx web servers and reverse proxies from typed configuration, with monitoring and backups."

	description = `nginx-operator runs [nginx](https://nginx.org) on Kubernetes from three custom resources (and, for Gateway API, the parameters of Gateways and an external authentication filter), in the style of prometheus-operator.

## NginxOperator

An nginx deployment: a StatefulSet, Services, a PodDisruptionBudget, a ServiceAccount and the generated ` + "`nginx.conf`" + ` in a Secret.
The configuration is written as typed fields (servers, TLS, static content, proxies, redirects) and rendered by an emitter that quotes every argument, so no user string can add a directive.
Content comes from ConfigMaps or per-replica persistent volumes, or is restored from a backup.
The resource has status conditions (Available, Progressing, Degraded, Reconciled) and a scale subresource; ` + "`forceRedeploy`" + ` rolls every pod and ` + "`paused`" + ` stops reconciling.
With ` + "`metrics.enabled`" + ` each pod gets an nginx-prometheus-exporter sidecar.

## NginxMonitor

Selects nginx instances by label across namespaces and writes a Prometheus scrape configuration to a Secret; where prometheus-operator is installed it also creates a ServiceMonitor.

## NginxGatewayParameters

With the Gateway API CRDs installed, each Gateway of a class naming the controller ` + "`nginx.operator.dev/gateway-controller`" + ` becomes an NginxOperator; its settings (replicas, image, nginx tuning, Service type, resources, pod placement) come from the NginxGatewayParameters its class or the Gateway names.
Route rules ask for external authentication with an ExtensionRef filter naming an NginxExternalAuth of their namespace.

## NginxBackup

One-shot or scheduled backups of an instance's configuration and content to a PersistentVolumeClaim or S3-compatible storage, with retention, SHA-256 checksums and restore.

## Operations

Steady state makes no writes to the API server; deleted or edited children are repaired; a bad reference degrades only the object that holds it.
Every pod the operator creates passes the restricted Pod Security Standard.
The operator exports ` + "`nginx_operator_*`" + ` metrics (errors by reason, managed objects, backups, monitor targets) next to controller-runtime's reconcile counts and durations, over authenticated HTTPS.

The legacy ` + "`v1alpha1`" + ` NginxOperator API (the original ` + "`port`" + `, ` + "`replicas`" + `, ` + "`forceRedeploy`" + ` schema) is deprecated; write ` + "`v1beta1`" + `.
`
)

type csvInput struct {
	version          string
	image            string
	almExamples      string
	suggestedNS      string
	deploymentName   string
	serviceAccount   string
	deploymentLabels map[string]string
	deploymentSpec   object
	permissions      permissions
	owned            []crdDescription
	webhooks         []webhookDefinition
}

func clusterServiceVersion(in csvInput) csvObject {
	annotations := map[string]string{
		"alm-examples":   in.almExamples,
		"capabilities":   capabilities,
		"categories":     "Networking",
		"containerImage": in.image,
		"description":    shortDescription,
		"repository":     repository,
		"support":        repository + "/issues",
	}
	if in.suggestedNS != "" {
		annotations["operatorframework.io/suggested-namespace"] = in.suggestedNS
	}
	sa := in.serviceAccount
	var spec installSpec
	if len(in.permissions.cluster) > 0 {
		spec.ClusterPermissions = []permission{{ServiceAccountName: sa, Rules: in.permissions.cluster}}
	}
	if len(in.permissions.namespaced) > 0 {
		spec.Permissions = []permission{{ServiceAccountName: sa, Rules: in.permissions.namespaced}}
	}
	spec.Deployments = []deploymentSpec{{Name: in.deploymentName, Label: in.deploymentLabels, Spec: in.deploymentSpec}}

	var modes []installMode
	for _, m := range allInstallModes {
		// Transform 4 in transform.go: a conversion webhook makes the
		// operator a cluster singleton.
		supported := m == "AllNamespaces" || len(in.webhooks) == 0
		modes = append(modes, installMode{Type: m, Supported: supported})
	}

	return csvObject{
		APIVersion: "operators.coreos.com/v1alpha1",
		Kind:       "ClusterServiceVersion",
		Metadata:   csvMetadata{Name: packageName + ".v" + in.version, Annotations: annotations},
		Spec: csvSpec{
			DisplayName:    displayName,
			Description:    description,
			Version:        in.version,
			MinKubeVersion: "1.30.0",
			Maturity:       "alpha",
			Keywords:       []string{"nginx", "web server", "reverse proxy", "static site", "backup", "prometheus"},
			Maintainers:    []maintainer{{Name: "nginx-operator maintainers"}},
			Provider:       provider{Name: "nginx-operator project", URL: repository},
			Links: []link{
				{Name: "Source code", URL: repository},
				{Name: "Documentation", URL: repository + "/tree/main/Documentation"},
			},
			InstallModes:              modes,
			Install:                   installStrategy{Strategy: "deployment", Spec: spec},
			CustomResourceDefinitions: crdDescriptions{Owned: in.owned},
			WebhookDefinitions:        in.webhooks,
		},
	}
}

// ownedCRDs describes every served version of every bundle CRD. A CRD or
// version without a description here, or a description of one that no
// longer exists, fails the generation: OLM's console would otherwise show
// a bare kind.
func ownedCRDs(crds []crd) ([]crdDescription, error) {
	used := map[string]bool{}
	var out []crdDescription
	for _, c := range crds {
		versions, _ := mapAt(c.obj, "spec")["versions"].([]any)
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			if served, _ := vm["served"].(bool); !served {
				continue
			}
			version, _ := vm["name"].(string)
			key := c.kind + "/" + version
			d, ok := crdUI[key]
			if !ok {
				return nil, fmt.Errorf("hack/olm: no description of %s %s for the CSV; add it to crdUI", c.kind, version)
			}
			used[key] = true
			d.Name, d.Version, d.Kind = c.name, version, c.kind
			out = append(out, d)
		}
	}
	for key := range crdUI {
		if !used[key] {
			return nil, fmt.Errorf("hack/olm: crdUI describes %s, which config/crd does not serve", key)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Version > out[j].Version // newest first: the console lists the first
	})
	return out, nil
}

// OLM x-descriptors (the console's widgets for a field).
const (
	xPodCount       = "urn:alm:descriptor:com.tectonic.ui:podCount"
	xText           = "urn:alm:descriptor:com.tectonic.ui:text"
	xNumber         = "urn:alm:descriptor:com.tectonic.ui:number"
	xBooleanSwitch  = "urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	xResources      = "urn:alm:descriptor:com.tectonic.ui:resourceRequirements"
	xSecret         = "urn:alm:descriptor:io.kubernetes:Secret"
	xConditions     = "urn:alm:descriptor:io.kubernetes.conditions"
	xPhase          = "urn:alm:descriptor:io.kubernetes.phase"
	xTimestamp      = "urn:alm:descriptor:timestamp"
	xAdvanced       = "urn:alm:descriptor:com.tectonic.ui:advanced"
	xInstanceSelect = "urn:alm:descriptor:com.tectonic.ui:selector:nginx.operator.dev:v1beta1:NginxOperator"
)

func selectX(values ...string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, "urn:alm:descriptor:com.tectonic.ui:select:"+v)
	}
	return out
}

// crdUI holds the CSV's description of each kind and version. Paths are
// relative to spec or status; olm_test.go checks that each exists in the
// CRD's schema.
var crdUI = map[string]crdDescription{
	"NginxOperator/v1beta1": {
		DisplayName: "Nginx",
		Description: "An nginx deployment: StatefulSet, Services, generated nginx.conf, PodDisruptionBudget and ServiceAccount, configured from typed fields.",
		Resources: []apiRef{
			{Kind: "StatefulSet", Version: "v1"},
			{Kind: "Service", Version: "v1"},
			{Kind: "Secret", Version: "v1"},
			{Kind: "ServiceAccount", Version: "v1"},
			{Kind: "PodDisruptionBudget", Version: "v1"},
		},
		SpecDescriptors: []descriptor{
			{Path: "replicas", DisplayName: "Replicas", Description: "Number of nginx pods; unset leaves the count to an autoscaler.", XDescriptors: []string{xPodCount}},
			{Path: "image", DisplayName: "Image", Description: "nginx container image; defaults to the operator's --nginx-image.", XDescriptors: []string{xText}},
			{Path: "paused", DisplayName: "Paused", Description: "Stop reconciling this instance; deletion still proceeds.", XDescriptors: []string{xBooleanSwitch}},
			{Path: "forceRedeploy", DisplayName: "Force redeploy", Description: "Any change rolls every pod.", XDescriptors: []string{xText, xAdvanced}},
			{Path: "metrics.enabled", DisplayName: "Metrics", Description: "Run the nginx-prometheus-exporter sidecar on port metrics.", XDescriptors: []string{xBooleanSwitch}},
			{Path: "service.type", DisplayName: "Service type", XDescriptors: selectX("ClusterIP", "NodePort", "LoadBalancer")},
			{Path: "resources", DisplayName: "Resources", Description: "Compute resources of the nginx container.", XDescriptors: []string{xResources, xAdvanced}},
		},
		StatusDescriptors: []descriptor{
			{Path: "replicas", DisplayName: "Replicas", XDescriptors: []string{xPodCount}},
			{Path: "readyReplicas", DisplayName: "Ready replicas", XDescriptors: []string{xPodCount}},
			{Path: "conditions", DisplayName: "Conditions", XDescriptors: []string{xConditions}},
		},
	},
	"NginxOperator/v1alpha1": {
		DisplayName: "Nginx (v1alpha1, deprecated)",
		Description: "Deprecated: the original NginxOperator API (port, replicas, forceRedeploy), kept for compatibility; use v1beta1.",
		Resources: []apiRef{
			{Kind: "StatefulSet", Version: "v1"},
			{Kind: "Service", Version: "v1"},
			{Kind: "Secret", Version: "v1"},
			{Kind: "ServiceAccount", Version: "v1"},
			{Kind: "PodDisruptionBudget", Version: "v1"},
		},
		SpecDescriptors: []descriptor{
			{Path: "replicas", DisplayName: "Replicas", XDescriptors: []string{xPodCount}},
			{Path: "port", DisplayName: "Port", Description: "The container port nginx listens on.", XDescriptors: []string{xNumber}},
			{Path: "forceRedeploy", DisplayName: "Force redeploy", Description: "Any change rolls every pod.", XDescriptors: []string{xText, xAdvanced}},
		},
		StatusDescriptors: []descriptor{
			{Path: "conditions", DisplayName: "Conditions", XDescriptors: []string{xConditions}},
		},
	},
	"NginxMonitor/v1beta1": {
		DisplayName: "Nginx Monitor",
		Description: "Selects nginx instances by label and generates their Prometheus scrape configuration in a Secret, and a ServiceMonitor where prometheus-operator is installed.",
		Resources: []apiRef{
			{Kind: "Secret", Version: "v1"},
			{Kind: "ServiceMonitor", Version: "v1"},
		},
		SpecDescriptors: []descriptor{
			{Path: "selector", DisplayName: "Instance selector", Description: "Labels of the NginxOperator objects to scrape.", XDescriptors: []string{xInstanceSelect}},
			{Path: "endpoint.interval", DisplayName: "Scrape interval", XDescriptors: []string{xText}},
			{Path: "serviceMonitor.enabled", DisplayName: "ServiceMonitor", Description: "Also create a prometheus-operator ServiceMonitor.", XDescriptors: []string{xBooleanSwitch}},
		},
		StatusDescriptors: []descriptor{
			{Path: "matchedInstances", DisplayName: "Matched instances", XDescriptors: []string{xText}},
			{Path: "scrapeConfigSecret", DisplayName: "Scrape configuration", Description: "Secret holding scrape-configs.yaml.", XDescriptors: []string{xSecret}},
			{Path: "conditions", DisplayName: "Conditions", XDescriptors: []string{xConditions}},
		},
	},
	"NginxGatewayParameters/v1beta1": {
		DisplayName: "Nginx Gateway Parameters",
		Description: "Settings of the nginx instances of Gateways (replicas, image, nginx tuning, Service type, resources, pod placement), named by a GatewayClass's or a Gateway's parametersRef.",
		Resources:   []apiRef{{Kind: "NginxOperator", Version: "v1beta1"}},
		SpecDescriptors: []descriptor{
			{Path: "replicas", DisplayName: "Replicas", XDescriptors: []string{xPodCount}},
			{Path: "image", DisplayName: "Image", XDescriptors: []string{xText}},
			{Path: "service.type", DisplayName: "Service type", XDescriptors: []string{xText}},
		},
	},
	"NginxExternalAuth/v1beta1": {
		DisplayName: "Nginx External Auth",
		Description: "External authentication (an authentication Service asked about each request, with sign-in redirect and cached answers) that HTTPRoute and GRPCRoute rules name in an ExtensionRef filter.",
		SpecDescriptors: []descriptor{
			{Path: "service", DisplayName: "Service", Description: "The authentication Service, in the filter's namespace.", XDescriptors: []string{xText}},
			{Path: "port", DisplayName: "Port", XDescriptors: []string{xNumber}},
		},
	},
	"NginxBackup/v1beta1": {
		DisplayName: "Nginx Backup",
		Description: "One-shot or scheduled backups of an nginx instance's configuration and content to a PVC or S3-compatible storage, with retention and checksums.",
		Resources: []apiRef{
			{Kind: "Job", Version: "v1"},
			{Kind: "CronJob", Version: "v1"},
		},
		SpecDescriptors: []descriptor{
			{Path: "instance", DisplayName: "Instance", Description: "Name of the NginxOperator in this namespace to back up.", XDescriptors: []string{xText}},
			{Path: "schedule", DisplayName: "Schedule", Description: "Cron schedule; empty for a one-shot backup.", XDescriptors: []string{xText}},
			{Path: "suspend", DisplayName: "Suspend", Description: "Stop scheduling new backups.", XDescriptors: []string{xBooleanSwitch}},
			{Path: "retention.keepLast", DisplayName: "Keep last", Description: "Number of backups to keep.", XDescriptors: []string{xNumber}},
			{Path: "destination.s3.credentialsSecret", DisplayName: "S3 credentials", XDescriptors: []string{xSecret}},
		},
		StatusDescriptors: []descriptor{
			{Path: "phase", DisplayName: "Phase", XDescriptors: []string{xPhase}},
			{Path: "lastSuccessfulTime", DisplayName: "Last successful backup", XDescriptors: []string{xTimestamp}},
			{Path: "nextScheduleTime", DisplayName: "Next backup", XDescriptors: []string{xTimestamp}},
			{Path: "conditions", DisplayName: "Conditions", XDescriptors: []string{xConditions}},
		},
	},
}
