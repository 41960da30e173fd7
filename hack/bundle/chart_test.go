package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

const chartDir = "charts/nginx-operator"

func mustBuildChart(t *testing.T) chartFiles {
	t.Helper()
	files, err := buildChart(chartInputs{
		res:           mustKustomize(t, repo("config/default")),
		rolePath:      repo("config/rbac/role.yaml"),
		prometheusDir: repo("config/prometheus"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestCommittedChartMatchesConfig(t *testing.T) {
	for path, want := range mustBuildChart(t) {
		got, err := os.ReadFile(repo(filepath.Join(chartDir, path)))
		if err != nil {
			t.Errorf("%s: %v; run make bundle", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run make bundle. Diff (-committed +built):\n%s", path, cmp.Diff(string(got), string(want)))
		}
	}
}

// helmTemplate renders the committed chart with real helm into release
// namespace ops, with the --set values given.
func helmTemplate(t *testing.T, sets ...string) (map[string][]byte, error) {
	t.Helper()
	args := []string{"template", "r", repo(chartDir), "--namespace", "ops", "--include-crds"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tools.Helm(t), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, &helmError{err: err, stderr: stderr.String()}
	}
	objs, err := framework.DecodeYAML(out)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string][]byte{}
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		byID[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = b
	}
	return byID, nil
}

type helmError struct {
	err    error
	stderr string
}

func (e *helmError) Error() string { return e.err.Error() + ": " + e.stderr }

func mustHelmTemplate(t *testing.T, sets ...string) map[string][]byte {
	t.Helper()
	objs, err := helmTemplate(t, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func decodeRendered(t *testing.T, objs map[string][]byte, id string, into any) {
	t.Helper()
	b, ok := objs[id]
	if !ok {
		t.Fatalf("helm template rendered no %s", id)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", id, err)
	}
}

func TestHelmLintPassesStrictly(t *testing.T) {
	out, err := exec.Command(tools.Helm(t), "lint", "--strict", repo(chartDir)).CombinedOutput()
	if err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
}

// With the default values the chart installs the objects bundle.yaml
// installs, but the Namespace (the release's), in the release's namespace.
func TestHelmTemplateInstallsWhatBundleYAMLInstalls(t *testing.T) {
	rendered := mustHelmTemplate(t)
	bundle := mustKustomize(t, repo("config/default"))
	var want, got []string
	for _, r := range bundle.Resources() {
		if r.GetKind() == "Namespace" {
			continue
		}
		ns := r.GetNamespace()
		if ns != "" {
			ns = "ops"
		}
		want = append(want, r.GetKind()+"/"+ns+"/"+r.GetName())
	}
	// And the helm test's pod, which `helm install` leaves out.
	want = append(want, "Pod/ops/nginx-operator-probe")
	for id := range rendered {
		got = append(got, id)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-bundle.yaml +helm template):\n%s", diff)
	}
	for _, r := range bundle.Resources() {
		if r.GetKind() == "CustomResourceDefinition" {
			assertSameObject(t, r, rendered["CustomResourceDefinition//"+r.GetName()])
		}
	}
	assertDeploymentAsBundle(t, bundle, rendered)
}

func assertSameObject(t *testing.T, r interface{ AsYAML() ([]byte, error) }, rendered []byte) {
	t.Helper()
	want, err := r.AsYAML()
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := yaml.Unmarshal(want, &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(rendered, &b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("(-bundle.yaml +helm template):\n%s", diff)
	}
}

// The Deployment differs from bundle.yaml's only by what Helm must say: its
// namespace, its labels and the image's pull policy.
func assertDeploymentAsBundle(t *testing.T, bundle resmap.ResMap, rendered map[string][]byte) {
	t.Helper()
	var want, got appsv1.Deployment
	decode(t, bundle, "Deployment", "nginx-operator", "nginx-operator", &want)
	decodeRendered(t, rendered, "Deployment/ops/nginx-operator", &got)
	ctr := &want.Spec.Template.Spec.Containers[0]
	ctr.ImagePullPolicy = corev1.PullIfNotPresent
	if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("Deployment spec (-bundle.yaml +helm template):\n%s", diff)
	}
	for k, v := range want.Labels {
		if got.Labels[k] != v {
			t.Errorf("label %s=%q, want bundle.yaml's %q", k, got.Labels[k], v)
		}
	}
}

// The RBAC audit of bundle.yaml (test/e2e checks that the operator uses
// every permission config/rbac/role.yaml grants) holds for the chart: it
// grants exactly those, cluster-wide by default, and split between a
// ClusterRole and Roles in the watched and the release's namespaces when
// watchNamespaces is set, as config/namespaced does.
func TestHelmTemplateGrantsExactlyTheAuditedPermissions(t *testing.T) {
	var audited rbacv1.ClusterRole
	decode(t, mustKustomize(t, repo("config/default")), "ClusterRole", "", "nginx-operator", &audited)
	want := permissions(audited.Rules)

	var all rbacv1.ClusterRole
	decodeRendered(t, mustHelmTemplate(t), "ClusterRole//nginx-operator", &all)
	if diff := cmp.Diff(want, permissions(all.Rules)); diff != "" {
		t.Errorf("default values: ClusterRole permissions (-audited +chart):\n%s", diff)
	}

	scoped := mustHelmTemplate(t, "watchNamespaces={team-a,team-b}")
	var cluster rbacv1.ClusterRole
	decodeRendered(t, scoped, "ClusterRole//nginx-operator", &cluster)
	for _, rule := range cluster.Rules {
		for _, res := range rule.Resources {
			if c, err := isClusterScoped(rule.APIGroups, res); err != nil || !c {
				t.Errorf("watchNamespaces: the ClusterRole grants namespaced %q in %q", res, rule.APIGroups)
			}
		}
	}
	for _, ns := range []string{"team-a", "team-b", "ops"} {
		var role rbacv1.Role
		var binding rbacv1.RoleBinding
		decodeRendered(t, scoped, "Role/"+ns+"/nginx-operator", &role)
		decodeRendered(t, scoped, "RoleBinding/"+ns+"/nginx-operator", &binding)
		if diff := cmp.Diff(want, permissions(append(cluster.Rules, role.Rules...))); diff != "" {
			t.Errorf("watchNamespaces: permissions in %s (-audited +ClusterRole and Role):\n%s", ns, diff)
		}
		wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nginx-operator", Namespace: "ops"}}
		if diff := cmp.Diff(wantSubjects, binding.Subjects); diff != "" {
			t.Errorf("RoleBinding in %s subjects (-want +got):\n%s", ns, diff)
		}
	}
	if n := countKind(scoped, "Role"); n != 3 {
		t.Errorf("watchNamespaces: %d Roles, want 3 (team-a, team-b and the release's)", n)
	}
}

func countKind(objs map[string][]byte, kind string) int {
	n := 0
	for id := range objs {
		if strings.HasPrefix(id, kind+"/") {
			n++
		}
	}
	return n
}

// Values reach the operator's flags and objects as values.yaml says, and
// what the operator would refuse fails the install with the value's name.
func TestHelmValuesBecomeFlagsAndObjects(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sets      []string
		wantArgs  []string // among the operator's args
		notArgs   []string
		wantIDs   []string // rendered
		notIDs    []string
		wantImage string
		wantErr   string
	}{
		{name: "defaults", wantArgs: []string{"--leader-elect", "--metrics-bind-address=:8443"}, notArgs: []string{"--conversion-webhook=false"},
			wantIDs: []string{"Service/ops/nginx-operator-metrics", "Service/ops/nginx-operator-webhook", "PodDisruptionBudget/ops/nginx-operator", "Pod/ops/nginx-operator-probe"},
			notIDs:  []string{"ServiceMonitor/ops/nginx-operator"}, wantImage: "ghcr.io/nginx-operator/nginx-operator:v"},
		{name: "namespaces and images", sets: []string{"denyNamespaces={kube-system,kube-public}", "images.nginx=nginx:1.29", "images.exporter=e:1", "extraArgs={--log-level=debug}"},
			wantArgs: []string{"--deny-namespaces=kube-system,kube-public", "--nginx-image=nginx:1.29", "--exporter-image=e:1", "--log-level=debug"}},
		{name: "metrics and webhook off", sets: []string{"metrics.enabled=false", "webhook.enabled=false", "podDisruptionBudget.enabled=false"},
			wantArgs: []string{"--metrics-bind-address=0", "--conversion-webhook=false"},
			notIDs:   []string{"Service/ops/nginx-operator-metrics", "Service/ops/nginx-operator-webhook", "PodDisruptionBudget/ops/nginx-operator", "Pod/ops/nginx-operator-probe"}},
		{name: "service monitor", sets: []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.prometheusServiceAccount.namespace=mon"},
			wantIDs: []string{"ServiceMonitor/ops/nginx-operator", "ClusterRoleBinding//nginx-operator-metrics-reader"}},
		{name: "single replica without election", sets: []string{"replicaCount=1", "leaderElection.enabled=false"}, notArgs: []string{"--leader-elect"}},
		{name: "image by digest", sets: []string{"image.repository=registry.example.com/ops/nginx-operator", "image.digest=sha256:" + strings.Repeat("a", 64)},
			wantImage: "registry.example.com/ops/nginx-operator@sha256:aaaa"},
		{name: "watch and deny", sets: []string{"watchNamespaces={a}", "denyNamespaces={b}"}, wantErr: "watchNamespaces and denyNamespaces cannot be combined"},
		{name: "two replicas without election", sets: []string{"leaderElection.enabled=false"}, wantErr: "replicaCount > 1 needs leaderElection.enabled"},
		{name: "misspelt value", sets: []string{"replicas=3"}, wantErr: "additional properties 'replicas' not allowed"},
		{name: "an argument that is no flag", sets: []string{"extraArgs={debug}"}, wantErr: "/extraArgs/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := helmTemplate(t, tc.sets...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var dep appsv1.Deployment
			decodeRendered(t, objs, "Deployment/ops/nginx-operator", &dep)
			ctr := dep.Spec.Template.Spec.Containers[0]
			for _, a := range tc.wantArgs {
				if !slices.Contains(ctr.Args, a) {
					t.Errorf("args %q lack %q", ctr.Args, a)
				}
			}
			for _, a := range tc.notArgs {
				if slices.Contains(ctr.Args, a) {
					t.Errorf("args %q hold %q", ctr.Args, a)
				}
			}
			for _, id := range tc.wantIDs {
				if objs[id] == nil {
					t.Errorf("no %s rendered", id)
				}
			}
			for _, id := range tc.notIDs {
				if objs[id] != nil {
					t.Errorf("%s rendered", id)
				}
			}
			if !strings.HasPrefix(ctr.Image, tc.wantImage) {
				t.Errorf("image %q, want it to start with %q", ctr.Image, tc.wantImage)
			}
		})
	}
}

// make release stamps its image (hack/bundle -image) into the Deployment,
// NGINX_OPERATOR_IMAGE, and the chart's values and versions.
func TestAReleaseImageIsStampedEverywhere(t *testing.T) {
	const image = "10.0.0.1:5000/team/nginx-operator:v1.2.3-rc.1"
	res := mustKustomize(t, repo("config/default"))
	if err := stampImage(res, image); err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	decode(t, res, "Deployment", "nginx-operator", "nginx-operator", &dep)
	ctr := dep.Spec.Template.Spec.Containers[0]
	if ctr.Image != image {
		t.Errorf("image %q, want %q", ctr.Image, image)
	}
	// The name the operator reads, not this package's copy of it.
	if i := slices.IndexFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == operator.OwnImageEnv }); i < 0 || ctr.Env[i].Value != image {
		t.Errorf("env %+v: want %s=%s", ctr.Env, operator.OwnImageEnv, image)
	}
	files, err := buildChart(chartInputs{res: res, rolePath: repo("config/rbac/role.yaml"), prometheusDir: repo("config/prometheus")})
	if err != nil {
		t.Fatal(err)
	}
	var chart struct{ Version, AppVersion string }
	var values struct {
		Image struct{ Repository, Tag string }
	}
	if err := yaml.Unmarshal(files["Chart.yaml"], &chart); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(files["values.yaml"], &values); err != nil {
		t.Fatal(err)
	}
	if chart.Version != "1.2.3-rc.1" || chart.AppVersion != "v1.2.3-rc.1" || values.Image.Repository != "10.0.0.1:5000/team/nginx-operator" || values.Image.Tag != "" {
		t.Errorf("Chart.yaml version %q appVersion %q, values image %+v; want 1.2.3-rc.1, v1.2.3-rc.1 and the repository with the tag left to appVersion",
			chart.Version, chart.AppVersion, values.Image)
	}
}
