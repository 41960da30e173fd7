package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// A proxied Service's upstream lists its endpoints; weighted backends share
// their weight among their endpoints, so a Service with more pods draws no
// more than its weight; a backend without endpoints draws nothing, and a
// location none of whose backends has one answers 503. A Service the
// caller resolves no endpoints for, or a backend with useClusterIP, is
// reached at the Service's own address; the Services with endpoints are
// the backups of a round-robin or least-connections upstream.
func TestUpstreamServersAreTheEndpoints(t *testing.T) {
	pods := func(name string, addrs ...string) Service {
		return Service{Address: name + ".team-a.svc", AtEndpoints: true, Endpoints: map[int32][]string{80: addrs}}
	}
	opts := Options{Namespace: "team-a", Services: map[string]Service{
		"v1":    pods("v1", "10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080"),
		"v2":    pods("v2", "10.0.1.1:8080"),
		"empty": pods("empty"),
		// A Service of another namespace (Backend.Namespace) is resolved
		// under its ServiceKey; "v2" there is not team-a's.
		"team-b/v2": {Address: "v2.team-b.svc", AtEndpoints: true, Endpoints: map[int32][]string{80: {"10.0.2.1:8080"}}},
	}}
	split := func(backends ...v1beta1.Backend) *v1beta1.ProxyLocation {
		return &v1beta1.ProxyLocation{Backends: backends}
	}
	backend := func(service string, weight int32) v1beta1.Backend {
		return v1beta1.Backend{Service: service, Port: 80, Weight: ptr.To(weight)}
	}
	server := func(args ...string) conf.Directive { return conf.D("server", args...) }
	for _, tc := range []struct {
		name  string
		proxy *v1beta1.ProxyLocation
		want  []conf.Directive
	}{
		{"one Service", &v1beta1.ProxyLocation{Service: "v1", Port: 80},
			[]conf.Directive{server("10.0.0.1:8080", "max_fails=0"), server("10.0.0.2:8080", "max_fails=0"), server("10.0.0.3:8080", "max_fails=0"),
				server("v1.team-a.svc:80", "backup", "max_fails=0")}},
		{"90/10 over 3 and 1 endpoints", split(backend("v1", 90), backend("v2", 10)),
			[]conf.Directive{server("10.0.0.1:8080", "max_fails=0", "weight=90"), server("10.0.0.2:8080", "max_fails=0", "weight=90"), server("10.0.0.3:8080", "max_fails=0", "weight=90"),
				server("10.0.1.1:8080", "max_fails=0", "weight=30"), server("v1.team-a.svc:80", "backup", "max_fails=0"), server("v2.team-a.svc:80", "backup", "max_fails=0")}},
		{"a backend without endpoints", split(backend("empty", 50), backend("v2", 50)),
			[]conf.Directive{server("10.0.1.1:8080", "max_fails=0", "weight=50"), server("v2.team-a.svc:80", "backup", "max_fails=0")}},
		{"an ExternalName or unresolved Service", split(backend("external", 1), backend("v2", 1)),
			[]conf.Directive{server("external.team-a.svc:80", "weight=1"), server("10.0.1.1:8080", "max_fails=0", "weight=1"), server("v2.team-a.svc:80", "backup", "max_fails=0")}},
		{"no endpoints at all", &v1beta1.ProxyLocation{Service: "empty", Port: 80}, nil},
		{"useClusterIP", &v1beta1.ProxyLocation{Service: "v1", Port: 80, UseClusterIP: true},
			[]conf.Directive{server("v1.team-a.svc:80")}},
		{"useClusterIP on one backend", split(backend("v2", 1), v1beta1.Backend{Service: "v1", Port: 80, Weight: ptr.To[int32](1), UseClusterIP: true}),
			[]conf.Directive{server("10.0.1.1:8080", "max_fails=0", "weight=1"), server("v1.team-a.svc:80", "weight=1"), server("v2.team-a.svc:80", "backup", "max_fails=0")}},
		{"a Service of another namespace", split(backend("v2", 1), v1beta1.Backend{Service: "v2", Namespace: "team-b", Port: 80, Weight: ptr.To[int32](1)}),
			[]conf.Directive{server("10.0.1.1:8080", "max_fails=0", "weight=1"), server("10.0.2.1:8080", "max_fails=0", "weight=1"),
				server("v2.team-a.svc:80", "backup", "max_fails=0"), server("v2.team-b.svc:80", "backup", "max_fails=0")}},
		{"an unresolved Service of another namespace", &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "api", Namespace: "team-c", Port: 80, Weight: ptr.To[int32](1)}}},
			[]conf.Directive{server("api.team-c.svc:80", "weight=1")}},
		{"no backup beside a hash", &v1beta1.ProxyLocation{Service: "v2", Port: 80, LoadBalancingMethod: "ip_hash"},
			[]conf.Directive{server("10.0.1.1:8080", "max_fails=0")}},
	} {
		r := &renderer{opts: opts.withDefaults()}
		if diff := cmp.Diff(tc.want, r.upstreamServers(tc.proxy)); diff != "" {
			t.Errorf("%s: servers (-want +got):\n%s", tc.name, diff)
		}
	}

	r := &renderer{opts: opts.withDefaults()}
	empty := v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "empty", Port: 80}}
	got := r.proxy("s0_l0", empty, nil)
	if diff := cmp.Diff([]conf.Directive{conf.D("return", "503")}, got); diff != "" {
		t.Errorf("a location without endpoints (-want +got):\n%s", diff)
	}
	if blocks := r.locationBlocks("s0_l0", empty); len(blocks) != 0 {
		t.Errorf("a location without endpoints has http blocks: %v", blocks)
	}
}

// Per-endpoint weights are whole numbers that keep the backends' ratio,
// rounded once the endpoint counts' common multiple passes maxWeightScale.
func TestWeightScale(t *testing.T) {
	for _, tc := range []struct {
		counts []int64
		want   int64
	}{
		{nil, 1}, {[]int64{1, 1}, 1}, {[]int64{3, 1}, 3}, {[]int64{4, 6}, 12}, {[]int64{97, 89, 83}, maxWeightScale},
	} {
		if got := weightScale(tc.counts); got != tc.want {
			t.Errorf("weightScale(%v) = %d, want %d", tc.counts, got, tc.want)
		}
	}
}
