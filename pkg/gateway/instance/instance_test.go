package instance

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/randfill"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// Every setting of NginxGatewayParameters reaches the instance's spec
// field of the same name (config: the settings beside the servers), as
// the parameters state it.
func TestEveryParameterReachesTheInstance(t *testing.T) {
	for seed := range 20 {
		var p v1beta1.NginxGatewayParametersSpec
		randfill.New().NilChance(0).NumElements(1, 2).RandSource(rand.NewSource(int64(seed))).Fill(&p)
		spec := v1beta1.NginxOperatorSpec{Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http"}}}}
		applyParameters(&spec, &p)
		params, inst := reflect.ValueOf(p), reflect.ValueOf(spec)
		for i := range params.NumField() {
			name := params.Type().Field(i).Name
			got := inst.FieldByName(name)
			if name == "Config" {
				got = inst.FieldByName("Config").FieldByName("NginxSettings")
			}
			if !got.IsValid() {
				t.Fatalf("the instance's spec has no field %s", name)
			}
			want := params.Field(i)
			if want.Kind() == reflect.Pointer && got.Kind() != reflect.Pointer {
				want = want.Elem()
			}
			if !equality.Semantic.DeepEqual(want.Interface(), got.Interface()) {
				t.Errorf("seed %d: %s is %+v in the parameters, %+v in the instance", seed, name, want.Interface(), got.Interface())
			}
		}
		if len(spec.Config.Servers) != 1 {
			t.Errorf("seed %d: parameters changed the servers: %+v", seed, spec.Config.Servers)
		}
	}
}

// A Gateway's parameters replace its class's field by field, whole: what
// the Gateway's leave unset stays the class's.
func TestAGatewaysParametersReplaceItsClassesFieldByField(t *testing.T) {
	class := &v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](3), Image: "registry.example/nginx:1.27",
		Pod:    &v1beta1.PodSettings{NodeSelector: map[string]string{"pool": "edge"}, PriorityClassName: "high"},
		Config: &v1beta1.NginxSettings{ClientMaxBodySize: "8m"},
	}
	gw := &v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](2),
		Pod:      &v1beta1.PodSettings{NodeSelector: map[string]string{"pool": "team-a"}},
		Service:  &v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	want := &v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](2), Image: "registry.example/nginx:1.27",
		Pod:     &v1beta1.PodSettings{NodeSelector: map[string]string{"pool": "team-a"}},
		Config:  &v1beta1.NginxSettings{ClientMaxBodySize: "8m"},
		Service: &v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	if diff := cmp.Diff(want, Overlaid(Overlaid(nil, class), gw)); diff != "" {
		t.Errorf("the Gateway's over the class's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(class, Overlaid(nil, class)); diff != "" {
		t.Errorf("the class's alone (-want +got):\n%s", diff)
	}
	if class.Replicas == nil || *class.Replicas != 3 {
		t.Error("overlaying changed the class's parameters")
	}
}

// A Gateway's instance has one replica unless its parameters say, where a
// hand-written NginxOperator without replicas leaves its StatefulSet's to
// whoever scales it.
func TestAGatewaysInstanceHasOneReplicaUnlessItsParametersSay(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "infra"}}
	for _, tc := range []struct {
		name       string
		parameters *v1beta1.NginxGatewayParametersSpec
		want       int32
	}{
		{"no parameters", nil, 1},
		{"parameters without replicas", &v1beta1.NginxGatewayParametersSpec{Image: "registry.example/nginx:1.27"}, 1},
		{"parameters with 3", &v1beta1.NginxGatewayParametersSpec{Replicas: ptr.To[int32](3)}, 3},
		{"parameters with 0", &v1beta1.NginxGatewayParametersSpec{Replicas: ptr.To[int32](0)}, 0},
	} {
		spec := Spec(graph.Graph{Gateway: gw, Parameters: graph.Parameters{Spec: tc.parameters}})
		if spec.Replicas == nil || *spec.Replicas != tc.want {
			t.Errorf("%s: replicas %v, want %d", tc.name, spec.Replicas, tc.want)
		}
	}
}

// Routing counts what the instance serves and lists what each route
// placed, by name, the first v1beta1.MaxRoutingRoutes of them: a route
// that placed nothing (refused, or overridden by older routes) is not
// listed, and a route's name is kubectl's.
func TestRoutingSaysWhatEachRoutePlaced(t *testing.T) {
	route := func(kind gatewayv1.Kind, name string, placed graph.Placement) graph.Route {
		return graph.Route{Kind: kind, Key: types.NamespacedName{Namespace: "team-a", Name: name}, Placed: placed}
	}
	g := graph.Graph{Routes: []graph.Route{
		route(graph.KindHTTPRoute, "shop", graph.Placement{Servers: 2, Locations: 3}),
		route(graph.KindHTTPRoute, "overridden", graph.Placement{}),
		route(graph.KindTLSRoute, "db", graph.Placement{Streams: 1}),
	}}
	spec := v1beta1.NginxOperatorSpec{Config: v1beta1.NginxConfig{
		Servers: []v1beta1.Server{{Locations: make([]v1beta1.Location, 2)}, {Locations: make([]v1beta1.Location, 3)}},
		Streams: []v1beta1.Stream{{Port: "p443"}},
	}}
	want := &v1beta1.RoutingStatus{Routes: 2, Servers: 2, Locations: 5, Streams: 1, ByRoute: []v1beta1.RouteRouting{
		{Name: "httproute/team-a/shop", Servers: 2, Locations: 3},
		{Name: "tlsroute/team-a/db", Streams: 1},
	}}
	if diff := cmp.Diff(want, Routing(g, spec)); diff != "" {
		t.Errorf("routing (-want +got):\n%s", diff)
	}
	g.Routes = nil
	for i := range v1beta1.MaxRoutingRoutes + 5 {
		g.Routes = append(g.Routes, route(graph.KindHTTPRoute, fmt.Sprintf("r%03d", v1beta1.MaxRoutingRoutes+5-i), graph.Placement{Servers: 1, Locations: 1}))
	}
	got := Routing(g, spec)
	if got.Routes != v1beta1.MaxRoutingRoutes+5 || len(got.ByRoute) != v1beta1.MaxRoutingRoutes || got.ByRoute[0].Name != "httproute/team-a/r001" {
		t.Errorf("%d routes, %d listed, the first %q; want %d, %d, httproute/team-a/r001", got.Routes, len(got.ByRoute), got.ByRoute[0].Name,
			v1beta1.MaxRoutingRoutes+5, v1beta1.MaxRoutingRoutes)
	}
}

// The instance stage adds the Gateway's own 404 to every HTTP server after
// the graph checked the routes' locations, and the instance's check takes
// every location as checked (validation.RoutedNginxOperatorOfCheckedLocations):
// so it must be as the NginxOperator's rules leave it, defaults included.
func TestTheGatewaysOwn404IsALocationAsTheRulesLeaveIt(t *testing.T) {
	checked, errs := validation.RoutedLocation(t.Context(), graph.NotFoundLocation)
	if len(errs) > 0 {
		t.Fatalf("the NginxOperator's rules refuse it: %v", errs.ToAggregate())
	}
	if diff := cmp.Diff(graph.NotFoundLocation, checked); diff != "" {
		t.Errorf("the schema's defaults change it (-as added +as checked):\n%s", diff)
	}
}
