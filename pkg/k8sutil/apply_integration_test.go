//go:build !unit

package k8sutil_test

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

// newApplier returns an Applier whose client and reader go straight to the
// apiserver, counting every request.
func newApplier(t *testing.T) (*k8sutil.Applier, *inprocess.RequestCounter) {
	t.Helper()
	counter := &inprocess.RequestCounter{}
	cfg := rest.CopyConfig(env.Cluster(t).Config)
	cfg.WrapTransport = counter.Wrap
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &k8sutil.Applier{Client: c, Reader: c, Scheme: scheme}, counter
}

func desiredService(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: naming.Labels("nginx", "web", "server")},
		Spec: corev1.ServiceSpec{
			Selector: naming.SelectorLabels("nginx", "web", "server"),
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
}

func TestApplySecondApplyOfTheSameObjectSendsNoMutatingRequest(t *testing.T) {
	ctx := context.Background()
	ns, _ := env.Namespace(t)
	applier, counter := newApplier(t)

	outcome, err := applier.Apply(ctx, desiredService(ns))
	if err != nil || outcome != k8sutil.Created {
		t.Fatalf("first apply = %v, %v; want Created", outcome, err)
	}
	before := len(counter.Writes())
	outcome, err = applier.Apply(ctx, desiredService(ns))
	if err != nil || outcome != k8sutil.Unchanged {
		t.Fatalf("second apply = %v, %v; want Unchanged", outcome, err)
	}
	if n := len(counter.Writes()) - before; n != 0 {
		t.Errorf("second apply of an unchanged object sent %d mutating requests, want 0", n)
	}
}

func TestApplyCorrectsDriftAndDroppedFields(t *testing.T) {
	ctx := context.Background()
	ns, cs := env.Namespace(t)
	applier, _ := newApplier(t)

	svc := desiredService(ns)
	svc.Annotations = map[string]string{"team": "a"}
	if _, err := applier.Apply(ctx, svc); err != nil {
		t.Fatal(err)
	}

	// A user edits a field the operator owns: the next apply restores it.
	live, err := cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Spec.Selector[naming.LabelInstance] = "someone-else"
	if _, err := cs.CoreV1().Services(ns).Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if outcome, err := applier.Apply(ctx, svc); err != nil || outcome != k8sutil.Updated {
		t.Fatalf("apply after drift = %v, %v; want Updated", outcome, err)
	}
	live, err = cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := live.Spec.Selector[naming.LabelInstance]; got != "web" {
		t.Errorf("selector after re-apply = %q, want %q restored", got, "web")
	}

	// The desired state drops the annotation: apply removes it from the live object.
	svc.Annotations = nil
	if outcome, err := applier.Apply(ctx, svc); err != nil || outcome != k8sutil.Updated {
		t.Fatalf("apply without the annotation = %v, %v; want Updated", outcome, err)
	}
	live, err = cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Annotations["team"]; ok {
		t.Errorf("annotation the operator stopped setting is still there: %v", live.Annotations)
	}
	if live.Annotations[k8sutil.AppliedHashAnnotation] == "" {
		t.Error("applied-hash annotation missing")
	}

	// Deleted child: recreated.
	if err := cs.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if outcome, err := applier.Apply(ctx, svc); err != nil || outcome != k8sutil.Created {
		t.Fatalf("apply after delete = %v, %v; want Created", outcome, err)
	}
}

func TestApplyLeavesFieldsOwnedByOthersAlone(t *testing.T) {
	ctx := context.Background()
	ns, cs := env.Namespace(t)
	applier, counter := newApplier(t)

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns, Labels: naming.Labels("nginx", "web", "config")},
		Data:       map[string]string{"owned": "by-operator"},
	}
	if _, err := applier.Apply(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// Someone else adds a key and a label with their own field manager.
	live, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Data["extra"] = "by-user"
	live.Labels["owner"] = "user"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	before := len(counter.Writes())
	if outcome, err := applier.Apply(ctx, cm); err != nil || outcome != k8sutil.Unchanged {
		t.Fatalf("apply after a foreign addition = %v, %v; want Unchanged", outcome, err)
	}
	if len(counter.Writes()) != before {
		t.Error("fields added by someone else triggered a write")
	}
	// A real change keeps the foreign fields.
	cm.Data["owned"] = "v2"
	if _, err := applier.Apply(ctx, cm); err != nil {
		t.Fatal(err)
	}
	live, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Data["extra"] != "by-user" || live.Labels["owner"] != "user" || live.Data["owned"] != "v2" {
		t.Errorf("after apply: data=%v labels=%v; want the user's key and label kept and owned=v2", live.Data, live.Labels)
	}
}

// ApplyOwnedAnswer hands back what the API server answered a write with
// (an assigned ClusterIP, a resourceVersion), and nothing when it wrote
// nothing.
func TestApplyOwnedAnswerIsTheAPIServersAnswer(t *testing.T) {
	ctx := context.Background()
	ns, _ := env.Namespace(t)
	applier, _ := newApplier(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := applier.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	var events eventLog
	for _, tc := range []struct {
		name    string
		svc     *corev1.Service
		outcome k8sutil.Outcome
	}{
		{"create", desiredService(ns), k8sutil.Created},
		{"update", func() *corev1.Service { s := desiredService(ns); s.Spec.Ports[0].Port = 8080; return s }(), k8sutil.Updated},
		{"unchanged", func() *corev1.Service { s := desiredService(ns); s.Spec.Ports[0].Port = 8080; return s }(), k8sutil.Unchanged},
	} {
		var answer corev1.Service
		outcome, err := applier.ApplyOwnedAnswer(ctx, &events, owner, tc.svc, &answer)
		if err != nil || outcome != tc.outcome {
			t.Fatalf("%s: %v, %v; want %v", tc.name, outcome, err, tc.outcome)
		}
		var live corev1.Service
		if err := applier.Client.Get(ctx, client.ObjectKeyFromObject(tc.svc), &live); err != nil {
			t.Fatal(err)
		}
		if tc.outcome == k8sutil.Unchanged {
			if answer.ResourceVersion != "" {
				t.Errorf("%s: answer %+v, want none", tc.name, answer.ObjectMeta)
			}
			continue
		}
		if answer.ResourceVersion != live.ResourceVersion || answer.Spec.ClusterIP == "" || answer.Spec.Ports[0].Port != tc.svc.Spec.Ports[0].Port {
			t.Errorf("%s: answer at version %s with ClusterIP %q and port %d, want the live object's: %s, %q, %d", tc.name,
				answer.ResourceVersion, answer.Spec.ClusterIP, answer.Spec.Ports[0].Port, live.ResourceVersion, live.Spec.ClusterIP, live.Spec.Ports[0].Port)
		}
	}
}
