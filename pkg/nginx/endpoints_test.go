package nginx

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// A Service's port goes to the target port each EndpointSlice gives for it
// (by the Service port's name), on the endpoints that are ready; where none
// is, to those still serving while they terminate, as kube-proxy does.
func TestEndpointAddressesAreTheReadyEndpointsAtTheirTargetPort(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
		{Name: "http", Port: 80, TargetPort: intstr.FromString("web")},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
	}}}
	ep := func(addr string, ready, serving, terminating *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: serving, Terminating: terminating}}
	}
	yes, no := ptr.To(true), ptr.To(false)
	slice := func(typ discoveryv1.AddressType, port int32, endpoints ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{AddressType: typ, Endpoints: endpoints,
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	}
	for _, tc := range []struct {
		name   string
		port   int32
		slices []discoveryv1.EndpointSlice
		want   []string
	}{
		{"ready, and unset conditions count as ready", 80, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.2", yes, yes, no), ep("10.0.0.1", nil, nil, nil), ep("10.0.0.3", no, no, no)),
		}, []string{"10.0.0.1:8080", "10.0.0.2:8080"}},
		{"a named target port differs by slice; IPv6 is bracketed", 80, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", yes, yes, no)),
			slice(discoveryv1.AddressTypeIPv6, 9090, ep("fd00::1", yes, yes, no)),
		}, []string{"10.0.0.1:8080", "[fd00::1]:9090"}},
		{"terminating endpoints only while none is ready", 80, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", no, yes, yes), ep("10.0.0.2", no, no, yes)),
		}, []string{"10.0.0.1:8080"}},
		{"terminating endpoints not beside ready ones", 80, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", no, yes, yes), ep("10.0.0.2", yes, yes, no)),
		}, []string{"10.0.0.2:8080"}},
		{"an endpoint in two slices once; FQDN slices ignored", 80, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", yes, yes, no)),
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", yes, yes, no)),
			slice(discoveryv1.AddressTypeFQDN, 8080, ep("backend.example.com", yes, yes, no)),
		}, []string{"10.0.0.1:8080"}},
		{"a port the Service does not have", 8080, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", yes, yes, no)),
		}, nil},
		{"a UDP port asked for as TCP", 53, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 53, ep("10.0.0.1", yes, yes, no)),
		}, nil},
		{"a UDP port, from its slices' UDP port", -53, []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", yes, yes, no)),
			{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{ep("10.0.0.2", yes, yes, no)},
				Ports: []discoveryv1.EndpointPort{{Name: ptr.To("dns"), Port: ptr.To[int32](5353), Protocol: ptr.To(corev1.ProtocolUDP)}}},
		}, []string{"10.0.0.2:5353"}},
		{"a slice without the port's name", 80, []discoveryv1.EndpointSlice{
			{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{ep("10.0.0.1", yes, yes, no)},
				Ports: []discoveryv1.EndpointPort{{Name: ptr.To("metrics"), Port: ptr.To[int32](9113)}}},
		}, nil},
	} {
		// A negative port is that port of protocol UDP.
		port, protocol := tc.port, corev1.ProtocolTCP
		if port < 0 {
			port, protocol = -port, corev1.ProtocolUDP
		}
		if diff := cmp.Diff(tc.want, endpointAddresses(svc, port, protocol, tc.slices)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}

	dualStack := []discoveryv1.EndpointSlice{
		slice(discoveryv1.AddressTypeIPv4, 8080, ep("10.0.0.1", yes, yes, no)),
		slice(discoveryv1.AddressTypeIPv6, 8080, ep("fd00::1", yes, yes, no)),
	}
	for family, want := range map[corev1.IPFamily][]string{corev1.IPv4Protocol: {"10.0.0.1:8080"}, corev1.IPv6Protocol: {"[fd00::1]:8080"}} {
		svc := svc.DeepCopy()
		svc.Spec.IPFamilies = []corev1.IPFamily{family, corev1.IPv4Protocol}
		if diff := cmp.Diff(want, endpointAddresses(svc, 80, corev1.ProtocolTCP, dualStack)); diff != "" {
			t.Errorf("a dual-stack Service whose first family is %s (-want +got):\n%s", family, diff)
		}
	}
}

// The cache keeps of an EndpointSlice its Service, address type, ports and
// each endpoint's addresses and conditions.
func TestTrimEndpointSliceKeepsWhatAnUpstreamIsMadeOf(t *testing.T) {
	full := &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			Hostname: ptr.To("web-0"), NodeName: ptr.To("node-1"), Zone: ptr.To("a"),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-0"}}},
	}
	full.Name, full.Namespace, full.ResourceVersion = "api-abcde", "team-a", "7"
	full.Labels = map[string]string{discoveryv1.LabelServiceName: "api", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}
	full.Annotations = map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "2026-11-26T12:00:00Z"}
	got, err := TrimEndpointSlice(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &discoveryv1.EndpointSlice{AddressType: full.AddressType, Ports: full.Ports,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}}
	want.Name, want.Namespace, want.ResourceVersion = full.Name, full.Namespace, full.ResourceVersion
	want.Labels = map[string]string{discoveryv1.LabelServiceName: "api"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed slice (-want +got):\n%s", diff)
	}
}

// The first endpoint change after a quiet batch reconciles at once; those
// within a batch of it wait for the batch's end, one reconcile for all;
// instances are paced apart.
func TestEndpointChangesReconcileAtOnceThenOncePerBatch(t *testing.T) {
	p := newEndpointsPacer()
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := start
	p.now = func() time.Time { return now }
	web, api := types.NamespacedName{Namespace: "team-a", Name: "web"}, types.NamespacedName{Namespace: "team-a", Name: "api"}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, step := range []struct {
		at       time.Duration
		instance types.NamespacedName
		want     time.Duration
	}{
		{0, web, 0},              // quiet: at once
		{ms(300), web, ms(700)},  // within the batch: at its end, 1 s
		{ms(500), web, ms(500)},  // that one is due already
		{ms(500), api, 0},        // another instance is paced apart
		{ms(1200), web, ms(800)}, // after the reconcile at 1 s: at 2 s
		{ms(5000), web, 0},       // quiet again
	} {
		now = start.Add(step.at)
		if got := p.delay(step.instance); got != step.want {
			t.Errorf("a change at %s for %s: delay %s, want %s", step.at, step.instance.Name, got, step.want)
		}
	}
	p.forget(web)
	if _, ok := p.due[web]; ok {
		t.Error("a forgotten instance is still paced")
	}
}
