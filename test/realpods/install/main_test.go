// Package install publishes a release of the operator as `make release`
// does (hack/release.sh: the operator image index, the Helm chart as an OCI
// artifact, bundle.yaml, all stamped with one version) to a registry the
// test serves, and installs it from there as users do, on a local cluster
// whose node pulls the images for real:
//
//   - with `kubectl create -f bundle.yaml`: the operator's pods and the
//     nginx pods' reloader come from the registry, and an instance serves a
//     client through its Service;
//   - with `helm install oci://…` of the previous release's operator
//     (test/framework/releases, published to the same registry), then
//     `helm upgrade` to this release under a steady client load on two
//     instances: no request fails and each instance rolls at most once;
//     `helm test` passes; `helm uninstall` leaves the CRDs and the instances,
//     which keep serving.
//
// The package has a cluster and a node of its own, as both installs take
// the cluster-wide names (CRDs, ClusterRoles) the other real-pod packages'
// bundle.yaml install holds.
package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/framework/releases"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var env = framework.NewEnv(realcluster.FrameworkOptions(realcluster.Options{}))

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(env.Main(m))
}

// releaseVersion is the version the test publishes this tree as; the
// chart's version is its semver.
const releaseVersion = "v0.3.0-test"

// published is what hack/release.sh and hack/images put in the registry.
type published struct {
	registry string // host:port, the same from the host and the node
	dir      string // hack/release.sh's output: bundle.yaml, the chart, ...
	chart    string // oci://<registry>/charts/nginx-operator
	// previous is the tag of the previous release's operator image.
	previous string
}

// operatorImage is the operator image of tag in the registry.
func (p published) operatorImage(tag string) string {
	return p.registry + "/nginx-operator:" + tag
}

// publish starts the registry and publishes this tree as releaseVersion
// (for this machine's platform only: the index of both is hack/images'
// test) and the previous release's operator image.
func publish(t *testing.T, n *node.Node) published {
	t.Helper()
	p := published{registry: realcluster.StartRegistry(t, n), dir: t.TempDir()}
	p.chart = "oci://" + p.registry + "/charts/nginx-operator"
	platform := "linux/" + runtime.GOARCH
	began := time.Now()
	runInRepo(t, []string{"VERSION=" + releaseVersion, "REGISTRY=" + p.registry, "PLATFORMS=" + platform, "INSECURE=1", "OUT=" + p.dir},
		"bash", "hack/release.sh")
	t.Logf("make release VERSION=%s REGISTRY=%s took %s", releaseVersion, p.registry, time.Since(began).Round(time.Second))

	prev := releases.Build(t, releases.Previous)
	p.previous = prev.Version
	runInRepo(t, nil, "go", "run", "./hack/images", "-src", prev.Src, "-version", prev.Version, "-revision", prev.Commit,
		"-only", "operator", "-platforms", platform, "-registry", p.registry, "-tag", prev.Version, "-push", "-insecure")
	return p
}

func runInRepo(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// helm runs the cached helm against c, with its configuration, cache and
// data in the test's own directories (nothing of the user's is read or
// written).
type helm struct {
	bin, kubeconfig string
	env             []string
}

func newHelm(t *testing.T, c *framework.Cluster) *helm {
	t.Helper()
	home := t.TempDir()
	return &helm{bin: tools.Helm(t), kubeconfig: c.Kubeconfig, env: []string{
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"), "KUBECONFIG=" + c.Kubeconfig,
	}}
}

func (h *helm) run(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	began := time.Now()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = append(os.Environ(), h.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("helm %s (%s)", args[0], time.Since(began).Round(100*time.Millisecond))
	return string(out)
}

// testImageArgs are the operator's flags for the nginx and exporter images
// the node imported (hack/images' test images; the release does not
// publish them). The agent and the reloader are the operator's own image,
// from the registry.
func testImageArgs(imgs *realcluster.Images) []string {
	return []string{"--nginx-image=" + imgs.Ref(realcluster.Nginx), "--exporter-image=" + imgs.Ref(realcluster.Exporter)}
}

// site serves "hello\n" (what realcluster.Load expects) from a ConfigMap on
// port 8080 with two replicas on the real node: the shape every release
// since v0.2.0 understands.
func site(ctx context.Context, t *testing.T, cl client.Client, ns, name string) client.ObjectKey {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-site", Namespace: ns}, Data: map[string]string{"index.html": "hello\n"}}
	n := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](2),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Content:  v1beta1.Content{ConfigMaps: []v1beta1.ConfigMapContent{{Name: cm.Name}}},
			Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
				{Path: "/", Static: &v1beta1.StaticLocation{}},
			}}}},
		},
	}
	n.Spec.Pod.NodeSelector = map[string]string{node.LabelKey: node.LabelValue}
	n.Spec.Pod.Tolerations = []corev1.Toleration{{Key: node.LabelKey, Operator: corev1.TolerationOpEqual, Value: node.LabelValue, Effect: corev1.TaintEffectNoSchedule}}
	for _, o := range []client.Object{cm, n} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return client.ObjectKeyFromObject(n)
}

// waitStatefulSetReady waits until the instance's StatefulSet has its
// replicas ready and updated: what serving needs, whichever release
// reconciles it (an older one may not set the same conditions).
func waitStatefulSetReady(ctx context.Context, t *testing.T, cs kubernetes.Interface, key client.ObjectKey, timeout time.Duration) *appsv1.StatefulSet {
	t.Helper()
	var sts *appsv1.StatefulSet
	ok := framework.WaitFor(ctx, timeout, func(ctx context.Context) bool {
		var err error
		sts, err = cs.AppsV1().StatefulSets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		s := sts.Status
		return s.ObservedGeneration == sts.Generation && s.ReadyReplicas == 2 && s.UpdatedReplicas == 2 &&
			s.Replicas == 2 && s.CurrentRevision == s.UpdateRevision
	})
	if !ok {
		t.Fatalf("the StatefulSet of %s is not ready: %+v\n%s", key, statusOf(sts), realcluster.Describe(ctx, cs, key.Namespace))
	}
	return sts
}

func statusOf(sts *appsv1.StatefulSet) any {
	if sts == nil {
		return "none"
	}
	return sts.Status
}

// revisions counts the ControllerRevisions of the instance's StatefulSet:
// one per pod template it has had.
func revisions(ctx context.Context, t *testing.T, cs kubernetes.Interface, key client.ObjectKey) int {
	t.Helper()
	list, err := cs.AppsV1().ControllerRevisions(key.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range list.Items {
		if ref := metav1.GetControllerOf(&r); ref != nil && ref.Kind == "StatefulSet" && ref.Name == key.Name {
			n++
		}
	}
	return n
}
