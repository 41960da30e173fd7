package realpods

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// In a namespace that denies every connection to its pods by default (a
// NetworkPolicy the node enforces), spec.networkPolicy lets clients and the
// operator in: a client of another namespace gets the instance's page
// through its Service, and the status counts the replicas that loaded the
// configuration, which the operator reads from each pod's reloader. An
// instance without it still becomes Available as soon (the kubelet probes
// from the node, which policies admit), but its clients are refused and
// its status names the pods whose reloader does not answer.
func TestNetworkPolicyAdmitsClientsAndTheOperatorWhereTheNamespaceDeniesByDefault(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	t.Logf("the node's NetworkPolicy dataplane: %s", realcluster.NodeOf(c).NetworkPolicyDataplane)
	denyIngress(ctx, t, cs, ns)
	apply(ctx, t, c, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: site
data:
  index.html: "served through a NetworkPolicy\n"
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: admitted
spec:
  replicas: 2
  ports: [{name: http, containerPort: 8080}]
  content: {configMaps: [{name: site}]}
  networkPolicy: {}
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: refused
spec:
  replicas: 2
  ports: [{name: http, containerPort: 8080}]
  content: {configMaps: [{name: site}]}
`)
	// The kubelet probes readiness every 5 seconds: either instance may be
	// Available a period after the other.
	began := time.Now()
	for name, after := range framework.WaitAvailable(ctx, t, cl, 2*time.Minute, ns, "admitted", "refused") {
		t.Logf("%s: Available %s after it was applied", name, after.Sub(began).Round(100*time.Millisecond))
	}

	loaded := waitStatus(ctx, t, cl, ns, "admitted", "loadedReplicas 2", func(nginx *v1beta1.NginxOperator) bool {
		return nginx.Status.LoadedReplicas != nil && *nginx.Status.LoadedReplicas == 2
	})
	t.Logf("admitted: loadedReplicas 2 %s after it was applied", time.Since(began).Round(time.Millisecond))
	if loaded.Status.ConfigHash == "" {
		t.Errorf("admitted: no configHash in its status")
	}
	pods := strings.Join(instancePods(ctx, t, cs, ns, "refused"), ", ")
	unanswered := waitStatus(ctx, t, cl, ns, "refused", "Progressing message saying the reloaders of "+pods+" do not answer", func(nginx *v1beta1.NginxOperator) bool {
		return unansweredPods(progressingMessage(nginx)) == pods
	})
	t.Logf("refused: %s after it was applied: %q (loadedReplicas %v)", time.Since(began).Round(time.Millisecond),
		progressingMessage(unanswered), loadedString(unanswered.Status.LoadedReplicas))
	if l := unanswered.Status.LoadedReplicas; l == nil || *l != 0 {
		t.Errorf("refused: loadedReplicas %s, want 0: the operator cannot read its pods", loadedString(l))
	}

	// The node, which policies admit, is served through both Services
	// first: a Service's endpoints reach kube-proxy's rules some time after
	// its pods are ready (seconds, on a busy machine), and until they do a
	// client is refused by kube-proxy, not by a policy. (A clean-clone make
	// test saw a client of admitted refused so, 3 s after Available.)
	hc := realcluster.NodeOf(c).HTTPClient()
	for _, name := range []string{"admitted", "refused"} {
		get(ctx, t, hc, "http://"+clusterIP(ctx, t, cs, ns, name)+":80/", want(http.StatusOK, "served through a NetworkPolicy"))
	}

	// Clients of another namespace, through each instance's Service.
	clients := realcluster.RestrictedNamespace(t, cs)
	for _, instance := range []struct {
		name     string
		admitted bool
	}{{"admitted", true}, {"refused", false}} {
		url := "http://" + instance.name + "." + ns + ".svc." + node.ClusterDomain + ":80/"
		asked := time.Now()
		logs := realcluster.RunProbe(ctx, t, cs, clients, "client-of-"+instance.name, nil, url)
		t.Logf("a client of %s, %s after it was created:\n%s", instance.name, time.Since(asked).Round(time.Millisecond), logs)
		if served := strings.Contains(logs, "GET "+url+": served through a NetworkPolicy"); served != instance.admitted {
			t.Errorf("a client of %s was served: %v, want %v", instance.name, served, instance.admitted)
		}
	}
}

// denyIngress gives ns the default-deny ingress policy teams use: no pod
// of ns accepts a connection that no other policy admits.
func denyIngress(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "default-deny-ingress"},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}, metav1.CreateOptions{})
	tools.Must(t, err)
}

// waitStatus waits until the NginxOperator ns/name satisfies done (what
// says what it waits for) and returns it.
func waitStatus(ctx context.Context, t *testing.T, cl client.Client, ns, name, what string, done func(*v1beta1.NginxOperator) bool) *v1beta1.NginxOperator {
	t.Helper()
	var nginx v1beta1.NginxOperator
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		return cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &nginx) == nil && done(&nginx)
	}) {
		t.Fatalf("%s: no %s; status %+v", name, what, nginx.Status)
	}
	return &nginx
}

func progressingMessage(nginx *v1beta1.NginxOperator) string {
	for _, c := range nginx.Status.Conditions {
		if c.Type == v1beta1.ConditionProgressing {
			return c.Message
		}
	}
	return ""
}

// unansweredPods is the list of pods whose reloader did not answer, as the
// Progressing condition's message gives it ("pod-0, pod-1").
func unansweredPods(msg string) string {
	_, rest, _ := strings.Cut(msg, "no answer from the reloader of pod ")
	list, _, _ := strings.Cut(rest, " (")
	return list
}

// instancePods are the names of the NginxOperator ns/name's pods, sorted.
func instancePods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) []string {
	t.Helper()
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + name})
	tools.Must(t, err)
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// loadedString is a status' loadedReplicas, which may be unset.
func loadedString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
