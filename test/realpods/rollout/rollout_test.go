package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// A configuration change rolls both pods while a client on the node sends
// requests through the ClusterIP Service without pause: not one fails, and
// the new configuration answers by the end.
func TestConfigChangeRollsThePodsWithoutAFailedRequest(t *testing.T) {
	t.Parallel()
	ctx, ns, _, cl, n := setup(t)
	site(ctx, t, cl, ns)
	web := webInstance(ns)
	if err := cl.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(web)
	before := waitRolledOut(ctx, t, cl, key, 90*time.Second)

	l := startLoad(ctx, t, n, serviceAddr(ctx, t, cl, ns), 4)
	defer l.finish(t)
	l.waitServed(ctx, t, 20)

	update(ctx, t, cl, key, func(n *v1beta1.NginxOperator) {
		n.Spec.Config.Servers[0].Locations[0].Headers[0].Value = "2"
	})
	after := waitRolledOut(ctx, t, cl, key, 90*time.Second)
	if after.Status.ConfigHash == before.Status.ConfigHash {
		t.Fatalf("config hash %s unchanged by a new header", after.Status.ConfigHash)
	}
	// Rolled out: from now on every answer is the new configuration's.
	from := l.served("2")
	l.waitServed(ctx, t, 40)
	if l.served("2")-from < 40 {
		t.Errorf("after the rollout, %d of the last answers came from the new configuration", l.served("2")-from)
	}
}

// A configuration nginx refuses (a proxied Service whose name does not
// resolve: an ExternalName Service naming an unknown host) makes the first
// new pod crash: the rollout halts, the old pod keeps answering every
// request, and the instance is Degraded quoting nginx. Pointing the
// location at a Service that resolves rolls the pods and clears it.
func TestAConfigNginxRefusesHaltsTheRolloutWithTheOldPodsServing(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, cl, n := setup(t)
	site(ctx, t, cl, ns)
	ghost := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "nowhere.invalid"},
	}
	if err := cl.Create(ctx, ghost); err != nil {
		t.Fatal(err)
	}
	web := webInstance(ns)
	if err := cl.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(web)
	waitRolledOut(ctx, t, cl, key, 90*time.Second)

	l := startLoad(ctx, t, n, serviceAddr(ctx, t, cl, ns), 4)
	defer l.finish(t)
	l.waitServed(ctx, t, 20)

	update(ctx, t, cl, key, func(n *v1beta1.NginxOperator) {
		n.Spec.Config.Servers[0].Locations = append(n.Spec.Config.Servers[0].Locations,
			v1beta1.Location{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "ghost", Port: 80}})
	})
	var inst v1beta1.NginxOperator
	var degraded *metav1.Condition
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		if cl.Get(ctx, key, &inst) != nil {
			return false
		}
		degraded = meta.FindStatusCondition(inst.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Reason == nginx.ReasonConfigRejected
	}) {
		t.Fatalf("not Degraded %s: %+v", nginx.ReasonConfigRejected, inst.Status.Conditions)
	}
	const emerg = `host not found in upstream "ghost.`
	if degraded.Status != metav1.ConditionTrue || !strings.Contains(degraded.Message, emerg) {
		t.Errorf("Degraded = %s %q, want True quoting nginx's %q", degraded.Status, degraded.Message, emerg)
	}
	t.Logf("Degraded: %s", degraded.Message)
	if !framework.EventRecorded(ctx, cs, ns, "web", corev1.EventTypeWarning, nginx.ReasonConfigRejected, emerg, 10*time.Second) {
		t.Errorf("no Warning Event %s quoting nginx", nginx.ReasonConfigRejected)
	}

	// The rollout is halted: one pod of the previous configuration still
	// runs, ready, and answers (the load checks every answer).
	var sts appsv1.StatefulSet
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: nginx.NamesFor("web").StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}
	if sts.Status.UpdatedReplicas > 1 || sts.Status.ReadyReplicas < 1 || sts.Status.CurrentRevision == sts.Status.UpdateRevision {
		t.Errorf("StatefulSet status %+v: want the rollout halted on one pod, the other ready", sts.Status)
	}
	if c := meta.FindStatusCondition(inst.Status.Conditions, v1beta1.ConditionProgressing); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Progressing = %+v, want True while the rollout is halted", c)
	}
	l.waitServed(ctx, t, 40)

	// The fix: proxy to a Service that resolves (the instance's own).
	update(ctx, t, cl, key, func(n *v1beta1.NginxOperator) {
		n.Spec.Config.Servers[0].Locations[1].Proxy.Service = nginx.NamesFor("web").Service
		n.Spec.Config.Servers[0].Locations[1].Proxy.Port = 8080
	})
	waitRolledOut(ctx, t, cl, key, 2*time.Minute)
	l.waitServed(ctx, t, 20)
}
