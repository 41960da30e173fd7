package rollout

import (
	"maps"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// A pod template change (forceRedeploy, here with a new configuration)
// rolls both pods while a client on the node sends requests through the
// ClusterIP Service without pause: not one fails, and the new configuration
// answers by the end.
func TestAPodTemplateChangeRollsThePodsWithoutAFailedRequest(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, cl, n := setup(t)
	site(ctx, t, cl, ns)
	web := webInstance(ns)
	if err := cl.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(web)
	before := waitRolledOut(ctx, t, cl, key, 90*time.Second)
	beforePods := podStates(ctx, t, cs, ns)

	l := realcluster.StartLoad(ctx, t, n, framework.ServiceAddr(ctx, t, cs, client.ObjectKey{Namespace: ns, Name: "web"}, "http"), 4)
	defer l.Finish(t)
	l.WaitServed(ctx, t, 20)

	framework.UpdateInstance(ctx, t, cl, key, func(n *v1beta1.NginxOperator) {
		n.Spec.ForceRedeploy = "roll"
		n.Spec.Config.Servers[0].Locations[0].Headers[0].Value = "2"
	})
	after := waitRolledOut(ctx, t, cl, key, 90*time.Second)
	if after.Status.ConfigHash == before.Status.ConfigHash {
		t.Fatalf("config hash %s unchanged by a new header", after.Status.ConfigHash)
	}
	if pods := podStates(ctx, t, cs, ns); maps.Equal(pods, beforePods) {
		t.Fatalf("pods %v unchanged by forceRedeploy", pods)
	}
	// Rolled out: from now on every answer is the new configuration's.
	from := l.Served("2")
	l.WaitServed(ctx, t, 40)
	if l.Served("2")-from < 40 {
		t.Errorf("after the rollout, %d of the last answers came from the new configuration", l.Served("2")-from)
	}
}
