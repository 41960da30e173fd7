package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// The tests run in hack/bundle; the repository root is two levels up.
const root = "../.."

func repo(p string) string { return filepath.Join(root, p) }

func mustKustomize(t *testing.T, dir string) resmap.ResMap {
	t.Helper()
	res, err := kustomize(dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return res
}

// idsOf returns "Kind/namespace/name" of every object, in output order.
func idsOf(res resmap.ResMap) []string {
	var ids []string
	for _, r := range res.Resources() {
		ids = append(ids, r.GetKind()+"/"+r.GetNamespace()+"/"+r.GetName())
	}
	return ids
}

func TestCommittedBundleYAMLMatchesConfigDefault(t *testing.T) {
	want, err := bundle(mustKustomize(t, repo("config/default")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(repo("bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("bundle.yaml is stale; run make bundle. Diff (-committed +built):\n%s", cmp.Diff(string(got), string(want)))
	}
}

func TestCommittedJsonnetCRDsMatchConfigDefault(t *testing.T) {
	want, err := crdsJSON(mustKustomize(t, repo("config/default")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(repo("jsonnet/nginx-operator/crds.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("jsonnet/nginx-operator/crds.json is stale; run make bundle (%d bytes committed, %d built)", len(got), len(want))
	}
}

func TestCommittedJsonnetRBACMatchesControllerGenRole(t *testing.T) {
	want, err := rbacJSON(repo("config/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(repo("jsonnet/nginx-operator/rbac.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("jsonnet/nginx-operator/rbac.json is stale; run make bundle (-generated +committed):\n%s", diff)
	}
}

func TestCommittedNamespacedRBACMatchesControllerGenRole(t *testing.T) {
	files, err := namespacedRBACFiles(repo("config/rbac/role.yaml"), repo("config/namespaced"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The header names its source relative to where make runs.
		want = bytes.Replace(want, []byte(filepath.ToSlash(repo("config/rbac/role.yaml"))), []byte("config/rbac/role.yaml"), 1)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale; run make bundle (-generated +committed):\n%s", path, diff)
		}
	}
}

// clusterScopedKinds are the kinds the manifests may hold without a namespace.
var clusterScopedKinds = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
}

func TestEveryObjectIsNamespacedOrClusterScoped(t *testing.T) {
	for _, dir := range []string{"config/default", "config/namespaced"} {
		t.Run(dir, func(t *testing.T) {
			for _, r := range mustKustomize(t, repo(dir)).Resources() {
				ns, kind := r.GetNamespace(), r.GetKind()
				switch {
				case clusterScopedKinds[kind] && ns != "":
					t.Errorf("cluster-scoped %s/%s has namespace %q", kind, r.GetName(), ns)
				case !clusterScopedKinds[kind] && ns == "":
					t.Errorf("%s/%s has no namespace", kind, r.GetName())
				}
			}
		})
	}
}

// decode converts a kustomize resource into a typed object.
func decode(t *testing.T, res resmap.ResMap, kind, namespace, name string, into any) {
	t.Helper()
	for _, r := range res.Resources() {
		if r.GetKind() == kind && r.GetNamespace() == namespace && r.GetName() == name {
			b, err := r.AsYAML()
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict(b, into); err != nil {
				t.Fatalf("%s %s/%s: %v", kind, namespace, name, err)
			}
			return
		}
	}
	t.Fatalf("no %s %s/%s in %v", kind, namespace, name, idsOf(res))
}

// typedKinds are what the manifests may hold, by apiVersion and kind. Strict
// decoding into the API types catches a misspelt or misplaced field, which
// kubectl only reports against a live server.
var typedKinds = map[string]func() any{
	"v1/Namespace":                                     func() any { return &corev1.Namespace{} },
	"v1/ServiceAccount":                                func() any { return &corev1.ServiceAccount{} },
	"v1/Service":                                       func() any { return &corev1.Service{} },
	"apps/v1/Deployment":                               func() any { return &appsv1.Deployment{} },
	"policy/v1/PodDisruptionBudget":                    func() any { return &policyv1.PodDisruptionBudget{} },
	"rbac.authorization.k8s.io/v1/Role":                func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding":         func() any { return &rbacv1.RoleBinding{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":         func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding":  func() any { return &rbacv1.ClusterRoleBinding{} },
	"apiextensions.k8s.io/v1/CustomResourceDefinition": func() any { return &apiextensionsv1.CustomResourceDefinition{} },
}

func TestEveryObjectDecodesStrictlyIntoItsAPIType(t *testing.T) {
	for _, dir := range []string{"config/default", "config/namespaced"} {
		t.Run(dir, func(t *testing.T) {
			for _, r := range mustKustomize(t, repo(dir)).Resources() {
				gvk := r.GetApiVersion() + "/" + r.GetKind()
				newObj, ok := typedKinds[gvk]
				if !ok {
					t.Errorf("%s %s: not a kind the install is expected to hold", gvk, r.GetName())
					continue
				}
				b, err := r.AsYAML()
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.UnmarshalStrict(b, newObj()); err != nil {
					t.Errorf("%s %s: %v", gvk, r.GetName(), err)
				}
			}
		})
	}
}

func TestOperatorDeploymentIsHighlyAvailableAndRestricted(t *testing.T) {
	res := mustKustomize(t, repo("config/default"))
	var dep appsv1.Deployment
	decode(t, res, "Deployment", "nginx-operator", "nginx-operator", &dep)
	pod := dep.Spec.Template.Spec
	// The operator calls the apiserver with its ServiceAccount token, so that
	// one rule of the project's restricted check is expected to be broken.
	if diff := cmp.Diff([]string{"the service account token is mounted"}, framework.RestrictedViolations(pod)); diff != "" {
		t.Errorf("restricted Pod Security violations (-want +got):\n%s", diff)
	}
	if c := pod.Containers[0].SecurityContext; c.RunAsNonRoot == nil || !*c.RunAsNonRoot {
		t.Errorf("container securityContext.runAsNonRoot is not true: %+v", c)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 || !slices.Contains(pod.Containers[0].Args, "--leader-elect") {
		t.Errorf("replicas %v, args %q: want at least 2 replicas with --leader-elect", dep.Spec.Replicas, pod.Containers[0].Args)
	}
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil || len(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("affinity %+v: want replicas spread over nodes by preference", pod.Affinity)
	}
	if pod.Containers[0].LivenessProbe == nil || pod.Containers[0].ReadinessProbe == nil {
		t.Error("the operator container has no liveness or readiness probe")
	}

	// The PodDisruptionBudget must select the Deployment's pods and keep one.
	var pdb policyv1.PodDisruptionBudget
	decode(t, res, "PodDisruptionBudget", "nginx-operator", "nginx-operator", &pdb)
	if diff := cmp.Diff(dep.Spec.Selector, pdb.Spec.Selector); diff != "" {
		t.Errorf("PodDisruptionBudget selector differs from the Deployment's (-deployment +pdb):\n%s", diff)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget minAvailable %v, want 1", pdb.Spec.MinAvailable)
	}
}

func TestNamespacedOverlayGrantsNoNamespacedResourceClusterWide(t *testing.T) {
	res := mustKustomize(t, repo("config/namespaced"))
	var clusterRoles int
	for _, r := range res.Resources() {
		if r.GetKind() != "ClusterRole" {
			continue
		}
		clusterRoles++
		var cr rbacv1.ClusterRole
		decode(t, res, "ClusterRole", "", r.GetName(), &cr)
		for _, rule := range cr.Rules {
			for _, resource := range rule.Resources {
				cluster, err := isClusterScoped(rule.APIGroups, resource)
				if err != nil || !cluster {
					t.Errorf("ClusterRole %s grants namespaced %q in %q (err %v)", cr.Name, resource, rule.APIGroups, err)
				}
			}
		}
	}
	if clusterRoles == 0 {
		t.Fatal("no ClusterRole: the operator could not read namespaces or review tokens")
	}
}

func TestNamespacedOverlayGrantsExactlyTheWatchedAndOwnNamespaces(t *testing.T) {
	res := mustKustomize(t, repo("config/namespaced"))
	var dep appsv1.Deployment
	decode(t, res, "Deployment", "nginx-operator", "nginx-operator", &dep)
	var watched []string
	for _, arg := range dep.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(arg, "--namespaces="); ok {
			if watched != nil {
				t.Errorf("--namespaces given twice: %q", dep.Spec.Template.Spec.Containers[0].Args)
			}
			watched = strings.Split(v, ",")
		}
	}
	if diff := cmp.Diff([]string{"team-a", "team-b"}, watched); diff != "" {
		t.Errorf("--namespaces of the Deployment (-want +got):\n%s", diff)
	}

	var roles, bindings []string
	for _, r := range res.Resources() {
		switch r.GetKind() {
		case "Role":
			roles = append(roles, r.GetNamespace())
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			decode(t, res, "RoleBinding", r.GetNamespace(), r.GetName(), &rb)
			want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nginx-operator", Namespace: "nginx-operator"}}
			if diff := cmp.Diff(want, rb.Subjects); diff != "" {
				t.Errorf("RoleBinding %s/%s subjects (-want +got):\n%s", rb.Namespace, rb.Name, diff)
			}
			bindings = append(bindings, r.GetNamespace())
		}
	}
	want := append(slices.Clone(watched), "nginx-operator")
	sort.Strings(want)
	sort.Strings(roles)
	sort.Strings(bindings)
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("namespaces with a Role (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, bindings); diff != "" {
		t.Errorf("namespaces with a RoleBinding (-want +got):\n%s", diff)
	}
}

// The namespaced overlay must not lose a permission by the split: every
// (group, resource, verb, resourceName) the controller-gen role grants is
// granted by the overlay's ClusterRole or by its Role.
func TestNamespacedOverlayKeepsEveryPermission(t *testing.T) {
	var full rbacv1.ClusterRole
	decode(t, mustKustomize(t, repo("config/default")), "ClusterRole", "", "nginx-operator", &full)
	res := mustKustomize(t, repo("config/namespaced"))
	var cr rbacv1.ClusterRole
	var role rbacv1.Role
	decode(t, res, "ClusterRole", "", "nginx-operator", &cr)
	decode(t, res, "Role", "team-a", "nginx-operator", &role)
	if diff := cmp.Diff(permissions(full.Rules), permissions(append(cr.Rules, role.Rules...))); diff != "" {
		t.Errorf("permissions (-controller-gen +namespaced overlay):\n%s", diff)
	}
}

func permissions(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, u := range r.NonResourceURLs {
			for _, v := range r.Verbs {
				out = append(out, "url "+u+" "+v)
			}
		}
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{"*"}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out = append(out, fmt.Sprintf("%s/%s %s %s", g, res, v, n))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func TestSplitRulesSeparatesScopes(t *testing.T) {
	tests := []struct {
		name                  string
		rules                 []rbacv1.PolicyRule
		wantCluster, wantNsed []rbacv1.PolicyRule
		wantErr               string
	}{
		{
			name:     "namespaced resources and subresources go to the Role",
			rules:    []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"statefulsets", "statefulsets/status"}, Verbs: []string{"get"}}},
			wantNsed: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"statefulsets", "statefulsets/status"}, Verbs: []string{"get"}}},
		},
		{
			name:        "non-resource URLs go to the ClusterRole",
			rules:       []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
			wantCluster: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		},
		{
			name:        "a rule of both scopes is split keeping verbs and resource names",
			rules:       []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces", "secrets"}, ResourceNames: []string{"x"}, Verbs: []string{"get", "watch"}}},
			wantCluster: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"x"}, Verbs: []string{"get", "watch"}}},
			wantNsed:    []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"x"}, Verbs: []string{"get", "watch"}}},
		},
		{
			name:        "review APIs and CRDs are cluster-scoped",
			rules:       []rbacv1.PolicyRule{{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}, {APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get"}}},
			wantCluster: []rbacv1.PolicyRule{{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}, {APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get"}}},
		},
		{
			name:    "a wildcard resource has no scope",
			rules:   []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: []string{"get"}}},
			wantErr: "wildcard",
		},
		{
			name:    "a resource of different scopes across the rule's groups is refused",
			rules:   []rbacv1.PolicyRule{{APIGroups: []string{"", "example.com"}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}},
			wantErr: "separate markers",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster, nsed, err := splitRules(tt.rules)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantCluster, cluster); diff != "" {
				t.Errorf("cluster rules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNsed, nsed); diff != "" {
				t.Errorf("namespaced rules (-want +got):\n%s", diff)
			}
		})
	}
}

// kubectl create sends each CRD whole: the apiserver takes requests up to
// 3 MiB and etcd values up to 1.5 MiB, so 900 KiB leaves room for growth.
// Client-side kubectl apply also copies the object into an annotation capped
// at 256 KiB; the bundle header recommends server-side apply, so that limit
// is reported, not enforced.
const (
	crdSizeLimit     = 900 << 10
	annotationsLimit = 256 << 10
)

func TestCRDsFitInOneRequest(t *testing.T) {
	for _, r := range mustKustomize(t, repo("config/default")).Resources() {
		if r.GetKind() != "CustomResourceDefinition" {
			continue
		}
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes of JSON (%.1f KiB); fits client-side apply's annotation: %v", r.GetName(), len(b), float64(len(b))/1024, len(b) < annotationsLimit)
		if len(b) >= crdSizeLimit {
			t.Errorf("%s is %d bytes, over %d: trim field descriptions", r.GetName(), len(b), crdSizeLimit)
		}
	}
}

// The ServiceMonitor component is optional; it is built here the way its
// kustomization tells users to add it.
// withComponent builds config/default with the kustomize component in the
// repository directory component, as a user's overlay would.
func withComponent(t *testing.T, component string) resmap.ResMap {
	t.Helper()
	dir := t.TempDir()
	// kustomize refuses absolute paths: refer to the repository relatively.
	rel := func(p string) string {
		a, err := filepath.Abs(repo(p))
		if err != nil {
			t.Fatal(err)
		}
		r, err := filepath.Rel(dir, a)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	k := fmt.Sprintf("resources:\n- %s\ncomponents:\n- %s\n", rel("config/default"), rel(component))
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return mustKustomize(t, dir)
}

func TestPrometheusComponentAddsServiceMonitorToDefault(t *testing.T) {
	res := withComponent(t, "config/prometheus")
	var sm struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port            string `json:"port"`
				Scheme          string `json:"scheme"`
				BearerTokenFile string `json:"bearerTokenFile"`
				TLSConfig       struct {
					InsecureSkipVerify bool `json:"insecureSkipVerify"`
				} `json:"tlsConfig"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	for _, r := range res.Resources() {
		if r.GetKind() == "ServiceMonitor" {
			b, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &sm); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sm.Metadata.Namespace != "nginx-operator" || len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("ServiceMonitor missing or malformed: %+v", sm)
	}
	// The selector and port must name the metrics Service's labels and port.
	var svc corev1.Service
	decode(t, res, "Service", "nginx-operator", "nginx-operator-metrics", &svc)
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, the metrics Service has %q", k, v, svc.Labels)
		}
	}
	ep := sm.Spec.Endpoints[0]
	if len(svc.Spec.Ports) != 1 || ep.Port != svc.Spec.Ports[0].Name {
		t.Errorf("ServiceMonitor port %q, metrics Service ports %+v", ep.Port, svc.Spec.Ports)
	}
	if ep.Scheme != "https" || ep.BearerTokenFile == "" || !ep.TLSConfig.InsecureSkipVerify {
		t.Errorf("endpoint %+v: want https with Prometheus' token and the self-signed certificate accepted", ep)
	}
}

// The cert-manager component hands the webhook certificate to cert-manager:
// the operator's flags parse and say external, the Certificate's Secret is
// mounted where the operator reads it, its names are the webhook Service's as
// the CRD calls it, and the CRD asks for that Certificate's CA.
func TestCertManagerComponentWiresTheCertificateToTheWebhook(t *testing.T) {
	res := withComponent(t, "config/cert-manager")

	var dep appsv1.Deployment
	decode(t, res, "Deployment", "nginx-operator", "nginx-operator", &dep)
	c := dep.Spec.Template.Spec.Containers[0]
	var opts operator.Options
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	opts.BindFlags(fs, "test")
	if err := fs.Parse(c.Args[1:]); err != nil {
		t.Fatalf("operator args %v: %v", c.Args, err)
	}
	if opts.WebhookCertManagement != operator.CertManagementExternal || opts.WebhookCertDir == "" {
		t.Fatalf("args %v: want --webhook-cert-management=external and a --webhook-cert-dir", c.Args)
	}
	var secretName string
	for _, m := range c.VolumeMounts {
		if m.MountPath == opts.WebhookCertDir {
			for _, v := range dep.Spec.Template.Spec.Volumes {
				if v.Name == m.Name && v.Secret != nil {
					secretName = v.Secret.SecretName
				}
			}
		}
	}

	var cert struct {
		Metadata struct{ Name, Namespace string } `json:"metadata"`
		Spec     struct {
			SecretName string   `json:"secretName"`
			DNSNames   []string `json:"dnsNames"`
		} `json:"spec"`
	}
	for _, r := range res.Resources() {
		if r.GetKind() == "Certificate" {
			b, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &cert); err != nil {
				t.Fatal(err)
			}
		}
	}
	if secretName == "" || secretName != cert.Spec.SecretName {
		t.Errorf("the cert dir %s mounts Secret %q, the Certificate writes %q", opts.WebhookCertDir, secretName, cert.Spec.SecretName)
	}

	var crd apiextensionsv1.CustomResourceDefinition
	decode(t, res, "CustomResourceDefinition", "", "nginxoperators.nginx.operator.dev", &crd)
	if got, want := crd.Annotations["cert-manager.io/inject-ca-from"], cert.Metadata.Namespace+"/"+cert.Metadata.Name; got != want {
		t.Errorf("CRD inject-ca-from = %q, want %q", got, want)
	}
	svc := crd.Spec.Conversion.Webhook.ClientConfig.Service
	if want := svc.Name + "." + svc.Namespace + ".svc"; !slices.Contains(cert.Spec.DNSNames, want) {
		t.Errorf("Certificate dnsNames %v lack %s, the name the apiserver calls", cert.Spec.DNSNames, want)
	}
}
