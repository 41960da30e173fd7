package node

import (
	"context"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The node enforces NetworkPolicies: under a default-deny ingress policy the
// server still becomes Ready (the kubelet's probes come from the node), a
// pod an allow policy selects gets its page, and another pod is refused.
func TestRealNodeEnforcesNetworkPoliciesButAdmitsTheKubeletsProbes(t *testing.T) {
	Require(t)
	dir := testDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rn := New(Options{Images: []string{buildTestImage(ctx, t, dir)}})
	c, err := framework.Start(ctx, framework.Options{Dir: dir, RealNode: rn})
	tools.Must(t, err)
	defer c.Stop()
	t.Logf("the enforcer's dataplane: %s", rn.NetworkPolicyDataplane)
	cs, err := kubernetes.NewForConfig(c.Config)
	tools.Must(t, err)

	ns := "netpol"
	createNamespace(ctx, t, cs, ns)
	for _, p := range []*networkingv1.NetworkPolicy{
		{ObjectMeta: metav1.ObjectMeta{Name: "default-deny"}, Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "clients"}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "server"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}},
			}}}},
		}},
	} {
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, p, metav1.CreateOptions{})
		tools.Must(t, err)
	}
	// Created after the policies: it becomes Ready only if they admit the
	// kubelet's probes.
	began := time.Now()
	_, err = cs.CoreV1().Pods(ns).Create(ctx, serverPod(), metav1.CreateOptions{})
	tools.Must(t, err)
	server := waitPod(ctx, t, cs, ns, "server", framework.PodReady)
	t.Logf("server Ready under a default deny %s after it was created", time.Since(began).Round(time.Millisecond))

	url := "http://" + server.Status.PodIP + ":8080/"
	for _, client := range []struct {
		name     string
		labels   map[string]string
		admitted bool
	}{
		{"client", map[string]string{"role": "client"}, true},
		{"stranger", nil, false},
	} {
		began := time.Now()
		_, logs, err := RunProbe(ctx, cs, ns, client.name, testImage, client.labels, url)
		tools.Must(t, err)
		t.Logf("%s ended %s after it was created:\n%s", client.name, time.Since(began).Round(time.Millisecond), logs)
		if served := strings.Contains(logs, "GET "+url+": hello from server"); served != client.admitted {
			t.Errorf("%s served: %v, want %v", client.name, served, client.admitted)
		}
	}
}
