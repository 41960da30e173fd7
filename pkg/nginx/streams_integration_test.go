//go:build !unit

package nginx_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// DNS over UDP and TCP on one number, as a cluster serves it: the streams
// relay each protocol to the endpoints of the Service port of that
// protocol (which the EndpointSlices give different target ports here, so
// a mix-up shows), the status counts each, and the instance's Service, pod
// ports and NetworkPolicy carry the UDP port as UDP.
func TestStreamsRelayEachProtocolToItsOwnEndpoints(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	dns := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(5353)},
			{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(5354)},
		}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, dns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "dns-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "dns"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("dns-udp"), Port: ptr.To[int32](5353), Protocol: &udp},
			{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](5354), Protocol: &tcp}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.244.1.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gw := instance(ns, "dns-edge")
	gw.Spec.Ports = []v1beta1.Port{{Name: "dns", ContainerPort: 5353, ServicePort: 53, Protocol: udp}, {Name: "dns-tcp", ContainerPort: 5353, ServicePort: 53}}
	gw.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{}
	backends := []v1beta1.Backend{{Service: "dns", Port: 53}}
	gw.Spec.Config.Streams = []v1beta1.Stream{{Port: "dns", Backends: backends, ExpectedResponses: ptr.To[int32](1)}, {Port: "dns-tcp", Backends: backends}}
	if err := c.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}

	config := func(ctx context.Context) string {
		var cfg corev1.Secret
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("dns-edge").ConfigSecret}, &cfg) != nil {
			return ""
		}
		return strings.Join(strings.Fields(string(cfg.Data[layout.ConfigFile])), " ")
	}
	wantConfig := []string{
		"upstream stream_0 { server 10.244.1.1:5353 max_fails=0 weight=1; server 10.244.1.2:5353 max_fails=0 weight=1; server",
		"upstream stream_1 { server 10.244.1.1:5354 max_fails=0 weight=1; server 10.244.1.2:5354 max_fails=0 weight=1; server",
		"server { listen 5353 udp; proxy_pass stream_0;",
		"server { listen 5353; proxy_pass stream_1;",
		"proxy_responses 1;",
	}
	wantStatus := []v1beta1.UpstreamStatus{{Service: "dns", Port: 53, Endpoints: 2}, {Service: "dns", Port: 53, Protocol: udp, Endpoints: 2}}
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		var n v1beta1.NginxOperator
		cfg := config(ctx)
		return !slices.ContainsFunc(wantConfig, func(w string) bool { return !strings.Contains(cfg, w) }) &&
			c.Get(ctx, client.ObjectKeyFromObject(gw), &n) == nil && slices.Equal(n.Status.Upstreams, wantStatus)
	}) {
		var n v1beta1.NginxOperator
		_ = c.Get(ctx, client.ObjectKeyFromObject(gw), &n)
		t.Fatalf("nginx.conf %q\nstatus.upstreams %+v\nwant %q and %+v", config(ctx), n.Status.Upstreams, wantConfig, wantStatus)
	}
	assertUDPChildren(ctx, t, c, ns)
}

// assertUDPChildren: the dns-edge instance's Service, pods and
// NetworkPolicy carry its port dns as UDP, beside dns-tcp as TCP.
func assertUDPChildren(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	names := layout.NamesFor("dns-edge")
	var svc corev1.Service
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Service}, &svc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range svc.Spec.Ports {
		got = append(got, p.Name+" "+string(p.Protocol)+" "+p.TargetPort.String())
	}
	if want := []string{"dns UDP dns", "dns-tcp TCP dns-tcp"}; !slices.Equal(got, want) {
		t.Errorf("Service ports %q, want %q (both on port 53: %+v)", got, want, svc.Spec.Ports)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.StatefulSet}, &sts); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sts.Spec.Template.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool {
		return p.Name == "dns" && p.Protocol == corev1.ProtocolUDP && p.ContainerPort == 5353
	}) {
		t.Errorf("nginx's container ports %+v lack dns 5353/UDP", sts.Spec.Template.Spec.Containers[0].Ports)
	}
	var policy networkingv1.NetworkPolicy
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.NetworkPolicy}, &policy) == nil
	}) {
		t.Fatal("no NetworkPolicy")
	}
	if !slices.ContainsFunc(policy.Spec.Ingress[0].Ports, func(p networkingv1.NetworkPolicyPort) bool {
		return *p.Protocol == corev1.ProtocolUDP && p.Port.IntValue() == 5353
	}) {
		t.Errorf("the NetworkPolicy's nginx ports %+v lack 5353/UDP", policy.Spec.Ingress[0].Ports)
	}
}
