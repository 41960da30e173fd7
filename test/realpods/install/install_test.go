package install

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// The two installs run one after the other on one cluster: bundle.yaml's
// is removed before Helm's, as both take the same cluster-wide names.
func TestAReleaseInstallsFromItsRegistryWithBundleYAMLAndWithHelm(t *testing.T) {
	realcluster.Require(t)
	c := env.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	n := realcluster.NodeOf(c)
	imgs, err := realcluster.BuildImages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := publish(t, n)
	cs, cl := realcluster.Clients(t, c)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(realcluster.Describe(ctx, cs, realcluster.OperatorNamespace))
		}
	})

	t.Run("kubectl create -f bundle.yaml", func(t *testing.T) {
		installFromBundle(ctx, t, c, cs, cl, p, imgs)
	})
	if t.Failed() {
		return
	}
	t.Run("helm install, upgrade, test and uninstall", func(t *testing.T) {
		helmLifecycle(ctx, t, c, cs, cl, p, imgs)
	})
}

// installFromBundle creates the release's bundle.yaml, whose operator image
// the node pulls from the registry, serves a client from an instance, and
// removes it all again.
func installFromBundle(ctx context.Context, t *testing.T, c *framework.Cluster, cs kubernetes.Interface, cl client.Client,
	p published, imgs *realcluster.Images) {
	manifest, err := realcluster.BundleFileManifest(filepath.Join(p.dir, "bundle.yaml"), testImageArgs(imgs)...)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := c.Kubectl(ctx, string(manifest), "create", "-f", "-"); err != nil {
		t.Fatalf("kubectl create -f bundle.yaml: %v\n%s", err, out)
	}
	if err := realcluster.WaitOperatorAvailable(ctx, cs, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	wantImage := p.operatorImage(releaseVersion)
	operatorPullsFrom(ctx, t, cs, wantImage)

	ns := realcluster.RestrictedNamespace(t, cs)
	key := site(ctx, t, cl, ns, "web")
	waitStatefulSetReady(ctx, t, cs, key, 3*time.Minute)
	// The reloader comes from the operator's own image, which bundle.yaml's
	// NGINX_OPERATOR_IMAGE names: the release's registry, not ghcr.io.
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("the instance's pods: %v (%d)", err, len(pods.Items))
	}
	for _, pod := range pods.Items {
		if img := initImage(pod); img != wantImage {
			t.Errorf("pod %s: the reloader's init container runs %q, want %q", pod.Name, img, wantImage)
		}
	}
	serves(ctx, t, realcluster.NodeOf(c), framework.ServiceAddr(ctx, t, cs, key, "http"))

	// Removed as documented: instances first, while the operator still
	// runs to let go of them, then everything bundle.yaml created.
	if err := cl.Delete(ctx, &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		return apierrors.IsNotFound(cl.Get(ctx, key, &v1beta1.NginxOperator{}))
	}) {
		t.Fatalf("%s was not deleted", key)
	}
	if out, err := c.Kubectl(ctx, string(manifest), "delete", "-f", "-", "--wait", "--timeout=3m"); err != nil {
		t.Fatalf("kubectl delete -f bundle.yaml: %v\n%s", err, out)
	}
}

// operatorPullsFrom waits until the operator's pods that are not stopping
// all run image, as the node pulled it (the node imported no operator image
// of that name): a rollout's old pods may still be terminating.
func operatorPullsFrom(ctx context.Context, t *testing.T, cs kubernetes.Interface, image string) {
	t.Helper()
	var last []string
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		pods, err := cs.CoreV1().Pods(realcluster.OperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=nginx-operator"})
		if err != nil {
			return false
		}
		last = nil
		running := 0
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp != nil {
				continue
			}
			for _, s := range pod.Status.ContainerStatuses {
				if s.Name == "operator" {
					last = append(last, fmt.Sprintf("%s: %s (%s)", pod.Name, s.Image, s.ImageID))
					if s.Image == image && strings.Contains(s.ImageID, "@sha256:") {
						running++
					}
				}
			}
		}
		return running == realcluster.OperatorReplicas && len(last) == running
	}) {
		t.Fatalf("the operator's pods do not all run %s pulled from the registry: %q", image, last)
	}
}

func initImage(pod corev1.Pod) string {
	for _, c := range pod.Spec.InitContainers {
		return c.Image
	}
	return ""
}

// serves waits until the Service at addr answers from the node, then
// checks 20 answers in a row are the site.
func serves(ctx context.Context, t *testing.T, nd *node.Node, addr string) {
	t.Helper()
	l := realcluster.StartLoad(ctx, t, nd, addr, 1)
	l.WaitServed(ctx, t, 20)
	l.Finish(t)
}

// helmLifecycle installs the previous release's operator with this
// release's chart from the registry, upgrades it to this release under load
// and uninstalls it.
func helmLifecycle(ctx context.Context, t *testing.T, c *framework.Cluster, cs kubernetes.Interface, cl client.Client,
	p published, imgs *realcluster.Images) {
	h := newHelm(t, c)
	ns := realcluster.OperatorNamespace
	chartVersion := strings.TrimPrefix(releaseVersion, "v")
	images := []string{"--set", "images.nginx=" + imgs.Ref(realcluster.Nginx), "--set", "images.exporter=" + imgs.Ref(realcluster.Exporter)}
	// The previous release predates NGINX_OPERATOR_IMAGE: its agent and
	// reloader are named by flags, as its users did.
	prev := p.operatorImage(p.previous)
	h.run(ctx, t, append([]string{"install", "nginx-operator", p.chart, "--version", chartVersion, "--plain-http",
		"-n", ns, "--create-namespace", "--set", "image.tag=" + p.previous,
		"--set", "extraArgs={--agent-image=" + prev + ",--reloader-image=" + prev + "}", "--wait", "--timeout", "4m"}, images...)...)
	operatorPullsFrom(ctx, t, cs, p.operatorImage(p.previous))

	var keys []client.ObjectKey
	for _, name := range []string{"shop", "blog"} {
		keys = append(keys, site(ctx, t, cl, realcluster.RestrictedNamespace(t, cs), name))
	}
	var loads []*realcluster.Load
	before := map[client.ObjectKey]int{}
	for _, key := range keys {
		waitStatefulSetReady(ctx, t, cs, key, 3*time.Minute)
		before[key] = revisions(ctx, t, cs, key)
		loads = append(loads, realcluster.StartLoad(ctx, t, realcluster.NodeOf(c), framework.ServiceAddr(ctx, t, cs, key, "http"), 2))
	}

	// Without image.tag and extraArgs: this release, the chart's appVersion,
	// whose agent and reloader follow NGINX_OPERATOR_IMAGE.
	h.run(ctx, t, append([]string{"upgrade", "nginx-operator", p.chart, "--version", chartVersion, "--plain-http",
		"-n", ns, "--wait", "--timeout", "4m"}, images...)...)
	operatorPullsFrom(ctx, t, cs, p.operatorImage(releaseVersion))
	for i, key := range keys {
		waitTemplateRuns(ctx, t, cs, key, p.operatorImage(releaseVersion))
		waitStatefulSetReady(ctx, t, cs, key, 4*time.Minute)
		loads[i].WaitServed(ctx, t, 100)
		rolls := revisions(ctx, t, cs, key) - before[key]
		if rolls > 1 {
			t.Errorf("%s rolled %d times on the upgrade, want at most once", key, rolls)
		}
		t.Logf("%s: %d new pod templates on the upgrade", key, rolls)
	}
	for _, l := range loads {
		l.Finish(t)
	}

	// The probe exits 0 only on a converted object from a certificate the
	// published CA signed.
	out := h.run(ctx, t, "test", "nginx-operator", "-n", ns, "--timeout", "3m")
	if !strings.Contains(out, "nginx-operator-probe") || !regexp.MustCompile(`Phase:\s+Succeeded`).MatchString(out) {
		t.Errorf("helm test passed without its probe succeeding:\n%s", out)
	}

	h.run(ctx, t, "uninstall", "nginx-operator", "-n", ns, "--wait", "--timeout", "3m")
	leftInPlace(ctx, t, realcluster.NodeOf(c), cs, cl, keys)
}

// waitTemplateRuns waits until the instance's StatefulSet's pod template
// copies the reloader from image: this release's operator has reconciled
// it (the previous one named its own image there).
func waitTemplateRuns(ctx context.Context, t *testing.T, cs kubernetes.Interface, key client.ObjectKey, image string) {
	t.Helper()
	var got string
	if !framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) bool {
		sts, err := cs.AppsV1().StatefulSets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got = initImage(corev1.Pod{Spec: sts.Spec.Template.Spec})
		return got == image
	}) {
		t.Fatalf("%s: the pod template's reloader is %q, want %q", key, got, image)
	}
}

// leftInPlace checks what `helm uninstall` must leave: the CRDs, the
// instances, and their pods serving.
func leftInPlace(ctx context.Context, t *testing.T, nd *node.Node, cs kubernetes.Interface, cl client.Client, keys []client.ObjectKey) {
	t.Helper()
	if _, err := cs.AppsV1().Deployments(realcluster.OperatorNamespace).Get(ctx, realcluster.OperatorDeployment, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the operator's Deployment after helm uninstall: %v, want it gone", err)
	}
	var list v1beta1.NginxOperatorList
	if err := cl.List(ctx, &list); err != nil {
		t.Fatalf("listing NginxOperators after helm uninstall (are the CRDs gone?): %v", err)
	}
	if len(list.Items) != len(keys) {
		t.Errorf("%d NginxOperators after helm uninstall, want %d", len(list.Items), len(keys))
	}
	for _, key := range keys {
		serves(ctx, t, nd, framework.ServiceAddr(ctx, t, cs, key, "http"))
	}
}
