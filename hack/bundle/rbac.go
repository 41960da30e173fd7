package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// clusterScoped lists the cluster-scoped resources of the Kubernetes API by
// "group/resource". A resource missing here is treated as namespaced: were a
// new cluster-scoped resource forgotten, the namespaced overlay would put it
// in a Role, where it grants nothing, so the mistake fails closed (the
// operator gets a Forbidden) instead of widening access.
var clusterScoped = map[string]bool{
	"/namespaces":        true,
	"/nodes":             true,
	"/persistentvolumes": true,
	"/componentstatuses": true,
	"admissionregistration.k8s.io/mutatingwebhookconfigurations":     true,
	"admissionregistration.k8s.io/validatingwebhookconfigurations":   true,
	"admissionregistration.k8s.io/validatingadmissionpolicies":       true,
	"admissionregistration.k8s.io/validatingadmissionpolicybindings": true,
	"apiextensions.k8s.io/customresourcedefinitions":                 true,
	"apiregistration.k8s.io/apiservices":                             true,
	"authentication.k8s.io/tokenreviews":                             true,
	"authentication.k8s.io/selfsubjectreviews":                       true,
	"authorization.k8s.io/subjectaccessreviews":                      true,
	"authorization.k8s.io/selfsubjectaccessreviews":                  true,
	"authorization.k8s.io/selfsubjectrulesreviews":                   true,
	"certificates.k8s.io/certificatesigningrequests":                 true,
	"flowcontrol.apiserver.k8s.io/flowschemas":                       true,
	"flowcontrol.apiserver.k8s.io/prioritylevelconfigurations":       true,
	"networking.k8s.io/ingressclasses":                               true,
	"node.k8s.io/runtimeclasses":                                     true,
	"rbac.authorization.k8s.io/clusterroles":                         true,
	"rbac.authorization.k8s.io/clusterrolebindings":                  true,
	"scheduling.k8s.io/priorityclasses":                              true,
	"storage.k8s.io/csidrivers":                                      true,
	"storage.k8s.io/csinodes":                                        true,
	"storage.k8s.io/storageclasses":                                  true,
	"storage.k8s.io/volumeattachments":                               true,
}

// isClusterScoped reports the scope of resource (possibly "name/subresource")
// in every one of groups; a resource whose scope differs between the groups
// of one rule cannot be split and is an error.
func isClusterScoped(groups []string, resource string) (bool, error) {
	base, _, _ := strings.Cut(resource, "/")
	if base == "*" {
		return false, fmt.Errorf("resource %q: a wildcard has no single scope", resource)
	}
	var cluster, namespaced bool
	for _, g := range groups {
		if g == "*" {
			return false, fmt.Errorf("resource %q: a wildcard API group has no single scope", resource)
		}
		if clusterScoped[g+"/"+base] {
			cluster = true
		} else {
			namespaced = true
		}
	}
	if cluster && namespaced {
		return false, fmt.Errorf("resource %q is cluster-scoped in some of the API groups %q and namespaced in others: write separate markers", resource, groups)
	}
	return cluster, nil
}

// splitRules divides rules into those a ClusterRole must grant (cluster-scoped
// resources and non-resource URLs) and those a Role in each watched namespace
// can grant. A rule naming resources of both scopes becomes one rule on each
// side, with the same groups, verbs and resource names.
func splitRules(rules []rbacv1.PolicyRule) (cluster, namespaced []rbacv1.PolicyRule, err error) {
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			if len(r.Resources) > 0 {
				return nil, nil, fmt.Errorf("rule %v mixes resources and non-resource URLs", r)
			}
			cluster = append(cluster, r)
			continue
		}
		var c, n []string
		for _, res := range r.Resources {
			isCluster, err := isClusterScoped(r.APIGroups, res)
			if err != nil {
				return nil, nil, err
			}
			if isCluster {
				c = append(c, res)
			} else {
				n = append(n, res)
			}
		}
		if len(c) > 0 {
			cr := *r.DeepCopy()
			cr.Resources = c
			cluster = append(cluster, cr)
		}
		if len(n) > 0 {
			nr := *r.DeepCopy()
			nr.Resources = n
			namespaced = append(namespaced, nr)
		}
	}
	return cluster, namespaced, nil
}

// rbacDoc is a Role or ClusterRole as written to the overlay: no empty
// metadata fields, so the files stay as short as hand-written ones.
type rbacDoc struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   rbacMeta            `json:"metadata"`
	Rules      []rbacv1.PolicyRule `json:"rules"`
}

type rbacMeta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// splitRole reads controller-gen's ClusterRole at rolePath and splits its rules.
func splitRole(rolePath string) (full rbacv1.ClusterRole, cluster, namespaced []rbacv1.PolicyRule, err error) {
	raw, err := os.ReadFile(rolePath)
	if err != nil {
		return full, nil, nil, err
	}
	if err := yaml.UnmarshalStrict(raw, &full); err != nil {
		return full, nil, nil, fmt.Errorf("%s: %w", rolePath, err)
	}
	if full.Kind != "ClusterRole" || full.Name == "" {
		return full, nil, nil, fmt.Errorf("%s: want one named ClusterRole, got kind %q name %q", rolePath, full.Kind, full.Name)
	}
	cluster, namespaced, err = splitRules(full.Rules)
	if err != nil {
		return full, nil, nil, fmt.Errorf("%s: %w", rolePath, err)
	}
	return full, cluster, namespaced, nil
}

// rbacJSON renders the rules of controller-gen's ClusterRole, whole and split
// by scope, for the jsonnet library, which builds the same ClusterRole (or,
// when it watches some namespaces, the same narrowed ClusterRole and Roles)
// as config/default and config/namespaced.
func rbacJSON(rolePath string) ([]byte, error) {
	full, cluster, namespaced, err := splitRole(rolePath)
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(struct {
		Name            string              `json:"name"`
		Rules           []rbacv1.PolicyRule `json:"rules"`
		ClusterRules    []rbacv1.PolicyRule `json:"clusterRules"`
		NamespacedRules []rbacv1.PolicyRule `json:"namespacedRules"`
	}{full.Name, full.Rules, cluster, namespaced}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// namespacedRBACFiles reads controller-gen's ClusterRole at rolePath and
// returns, by path under overlayDir, the overlay's generated files: the Role
// bound in every watched namespace and the patch that narrows the ClusterRole
// to what is cluster-scoped.
func namespacedRBACFiles(rolePath, overlayDir string) (map[string][]byte, error) {
	full, cluster, namespaced, err := splitRole(rolePath)
	if err != nil {
		return nil, err
	}
	role, err := renderRBAC(rolePath, "# The permissions the operator needs in every namespace it watches (and in\n# its own, for the leader-election Lease, the webhook certificate Secret and\n# Events); role_binding.yaml grants them to its ServiceAccount.\n", rbacDoc{
		APIVersion: "rbac.authorization.k8s.io/v1",
		Kind:       "Role",
		Metadata:   rbacMeta{Name: full.Name, Labels: map[string]string{"app.kubernetes.io/name": "nginx-operator"}},
		Rules:      namespaced,
	})
	if err != nil {
		return nil, err
	}
	// A patch, not a new ClusterRole: config/default's ClusterRoleBinding keeps
	// pointing at the same name, and rules (a list without a merge key) is
	// replaced as a whole by the strategic merge.
	clusterRole, err := renderRBAC(rolePath, "# Patch: narrows config/default's ClusterRole to the cluster-scoped resources\n# and non-resource URLs; the namespaced rules are in role/role.yaml.\n", rbacDoc{
		APIVersion: "rbac.authorization.k8s.io/v1",
		Kind:       "ClusterRole",
		Metadata:   rbacMeta{Name: full.Name},
		Rules:      cluster,
	})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		filepath.Join(overlayDir, "role", "role.yaml"): role,
		filepath.Join(overlayDir, "cluster_role.yaml"): clusterRole,
	}, nil
}

func renderRBAC(source, comment string, doc rbacDoc) ([]byte, error) {
	body, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Generated by \"make bundle\" (hack/bundle) from %s; do not edit.\n", filepath.ToSlash(source))
	buf.WriteString(comment)
	buf.Write(body)
	return buf.Bytes(), nil
}
