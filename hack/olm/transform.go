package main

// What the OLM bundle changes relative to config/, and why. olm_test.go
// checks each of these against config/ independently of this code.
//
//  1. CRDs: spec.conversion is removed. Under OLM the conversion webhook is
//     declared in the CSV's spec.webhookdefinitions (type ConversionWebhook)
//     and OLM writes the CRD's spec.conversion itself once the operator's
//     Deployment is available: the Service it creates (<deployment>-service
//     in the install namespace) and the CA of the certificate it mounts into
//     the pod. config/'s clientConfig names the namespace nginx-operator and
//     the Service nginx-operator-webhook, neither of which exists under OLM;
//     shipped in the bundle CRD, it would arm a conversion webhook nobody
//     answers from the moment OLM applies the CRD until the CSV is
//     installed, and every upgrade would reset OLM's settings to it.
//
//  2. Deployment: the operator container gets
//     --webhook-cert-management=external (oLMArgs). By default the operator
//     generates its own CA and serving certificate, writes them into the
//     webhook server's CertDir and patches the CRD's spec.conversion to its
//     own Service and CA. Under OLM that CertDir
//     (/tmp/k8s-webhook-server/serving-certs) is OLM's read-only certificate
//     mount, and the CRD patch would fight OLM's; with the flag the operator
//     serves /convert with OLM's certificate and leaves the CRD alone.
//     Nothing else in the Deployment changes: the image is the one
//     kustomize sets (or -image).
//
//  3. RBAC: role.yaml's ClusterRole rules become clusterPermissions for the
//     Deployment's ServiceAccount, except the leader-election Lease rule,
//     which becomes a namespaced permission: the operator's Lease lives in
//     its own namespace (--leader-election-namespace defaults to it), and
//     OLM grants permissions in the install namespace only, which is less
//     than the cluster-wide grant config/ makes. A Role in role.yaml becomes
//     permissions. The union is exactly role.yaml's rules.
//
//  4. installModes: only AllNamespaces. OLM refuses a CSV that declares a
//     conversion webhook and supports any other install mode (a CRD has one
//     conversion webhook cluster-wide, so the operator must be a singleton);
//     see the olm_test.go case that pins this. Were the webhook dropped,
//     OwnNamespace/SingleNamespace/MultiNamespace would need the operator to
//     read OLM's olm.targetNamespaces annotation (its --namespaces flag has
//     no environment fallback), which AllNamespaces does not need: OLM sets
//     the annotation to "" there, meaning every namespace, as --namespaces
//     unset does.
//
//  5. Other objects: the Namespace is dropped (OLM installs into the
//     namespace the user picks; its name becomes the suggested namespace),
//     the ServiceAccount and the ClusterRole/bindings of role.yaml are
//     created by OLM from the CSV, the webhook Service is replaced by OLM's
//     own, and the remaining objects (metrics Service, metrics-reader
//     ClusterRole, the operator's PodDisruptionBudget) ship as plain bundle
//     manifests without metadata.namespace.

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// oLMArgs are appended to the operator container's args under OLM.
var oLMArgs = []string{"--webhook-cert-management=external"}

// crd is a bundle CRD and its file name in bundle/manifests.
type crd struct {
	file  string
	group string
	kind  string
	name  string
	obj   object
}

// conversion is what config/'s conversion stanza of one CRD says.
type conversion struct {
	crd            string
	path           string
	reviewVersions []string
}

// bundleCRDs returns the CRDs of config/crd with spec.conversion removed
// (transform 1), and the conversion webhooks config/ declared.
func bundleCRDs(objs []object) ([]crd, []conversion, error) {
	var out []crd
	var conv []conversion
	for _, o := range objs {
		if o["kind"] != "CustomResourceDefinition" {
			return nil, nil, fmt.Errorf("config/crd: unexpected %v %s", o["kind"], str(o, "metadata", "name"))
		}
		o = deepCopy(o)
		spec := mapAt(o, "spec")
		c := crd{
			group: str(o, "spec", "group"),
			kind:  str(o, "spec", "names", "kind"),
			name:  str(o, "metadata", "name"),
			obj:   o,
		}
		c.file = c.group + "_" + str(o, "spec", "names", "plural") + ".yaml"
		if cv := mapAt(spec, "conversion"); cv != nil {
			if cv["strategy"] == "Webhook" {
				wh := mapAt(cv, "webhook")
				x := conversion{crd: c.name, path: str(wh, "clientConfig", "service", "path")}
				versions, _ := wh["conversionReviewVersions"].([]any)
				for _, v := range versions {
					s, _ := v.(string)
					x.reviewVersions = append(x.reviewVersions, s)
				}
				if x.path == "" || len(x.reviewVersions) == 0 {
					return nil, nil, fmt.Errorf("config/crd: %s: the conversion webhook needs clientConfig.service.path and conversionReviewVersions", c.name)
				}
				conv = append(conv, x)
			}
			delete(spec, "conversion")
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file < out[j].file })
	return out, conv, nil
}

// isOwnNamespaceRule is the leader-election rule (transform 3).
func isOwnNamespaceRule(r rbacv1.PolicyRule) bool {
	return len(r.APIGroups) == 1 && r.APIGroups[0] == "coordination.k8s.io" &&
		len(r.Resources) == 1 && r.Resources[0] == "leases" &&
		len(r.ResourceNames) == 0 && len(r.NonResourceURLs) == 0
}

// olmDeploymentSpec is config/'s Deployment spec with transform 2 applied.
func olmDeploymentSpec(spec object, image string) (object, error) {
	spec = deepCopy(spec)
	c := container(spec, operatorContainer)
	if c == nil {
		return nil, fmt.Errorf("no container %q", operatorContainer)
	}
	c["image"] = image
	args, _ := c["args"].([]any)
	for _, a := range oLMArgs {
		flagName, _, _ := strings.Cut(a, "=")
		for _, have := range args {
			if s, _ := have.(string); s == flagName || strings.HasPrefix(s, flagName+"=") {
				return nil, fmt.Errorf("config/manager already sets %s; decide which value OLM needs in hack/olm", flagName)
			}
		}
		args = append(args, a)
	}
	c["args"] = args
	// The operator deploys its backup agent and nginx-reloader from its own
	// image (NGINX_OPERATOR_IMAGE, which config/manager copies from the
	// container's), so a catalog mirrored to another registry brings those
	// along.
	if err := setOwnImage(c, image); err != nil {
		return nil, err
	}
	return spec, nil
}

// webhookServicePort is the port of the Service OLM creates for the webhook;
// it forwards to the container's webhook port.
const webhookServicePort = 443

// conversionWebhook declares config/'s conversion webhooks to OLM. They share
// one endpoint (the operator's /convert), so they are one definition.
func conversionWebhook(conv []conversion, dep deployment) (webhookDefinition, error) {
	if dep.webhookPort == 0 {
		return webhookDefinition{}, errors.New("config/manager: the operator container has no port named webhook for the conversion webhook")
	}
	wh := webhookDefinition{
		Type:                    "ConversionWebhook",
		GenerateName:            "conversion." + conv[0].crd,
		DeploymentName:          dep.name,
		ContainerPort:           webhookServicePort,
		TargetPort:              dep.webhookPort,
		WebhookPath:             conv[0].path,
		AdmissionReviewVersions: conv[0].reviewVersions,
		SideEffects:             "None",
	}
	for _, c := range conv {
		if c.path != wh.WebhookPath || strings.Join(c.reviewVersions, ",") != strings.Join(wh.AdmissionReviewVersions, ",") {
			return wh, fmt.Errorf("config/crd: %s's conversion webhook differs from %s's; give it its own webhook definition in hack/olm", c.crd, conv[0].crd)
		}
		wh.ConversionCRDs = append(wh.ConversionCRDs, c.crd)
	}
	sort.Strings(wh.ConversionCRDs)
	return wh, nil
}

// almExamples are the first example of every owned group/version/kind in
// example/*.yaml (files in name order), without a namespace: the console
// creates an example in the namespace the user is looking at.
func almExamples(examples []object, crds []crd) (string, error) {
	owned := map[string]bool{} // apiVersion/kind
	for _, c := range crds {
		versions, _ := mapAt(c.obj, "spec")["versions"].([]any)
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			owned[c.group+"/"+vm["name"].(string)+"/"+c.kind] = true
		}
	}
	seen := map[string]bool{}
	out := []object{}
	for _, e := range examples {
		key := fmt.Sprintf("%v/%v", e["apiVersion"], e["kind"])
		if !owned[key] || seen[key] {
			continue
		}
		seen[key] = true
		e = deepCopy(e)
		delete(mapAt(e, "metadata"), "namespace")
		out = append(out, e)
	}
	if len(out) == 0 {
		return "", errors.New("example/: no custom resource of the bundle's CRDs to use as alm-examples")
	}
	b, err := json.MarshalIndent(out, "", "  ")
	return string(b), err
}

func setOwnImage(c object, image string) error {
	env, _ := c["env"].([]any)
	for _, e := range env {
		if v, ok := e.(map[string]any); ok && v["name"] == ownImageEnv {
			v["value"] = image
			return nil
		}
	}
	return errors.New("config/manager: the operator container has no " + ownImageEnv + " variable")
}

// ownImageEnv is pkg/operator's OwnImageEnv, which config/manager sets.
const ownImageEnv = "NGINX_OPERATOR_IMAGE"
