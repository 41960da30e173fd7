package validation_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// routed is an instance as a Gateway with routes routes makes it: a
// hostname each (a server each), or a path each (locations of one server).
func routed(routes int, hostnames bool) *v1beta1.NginxOperator {
	proxy := func(path string) v1beta1.Location {
		return v1beta1.Location{Path: path, PathType: v1beta1.PathPrefixElements,
			Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}}
	}
	notFound := v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}}
	var servers []v1beta1.Server
	if hostnames {
		for i := range routes {
			servers = append(servers, v1beta1.Server{Port: "http", ServerNames: []string{"route-" + strconv.Itoa(i) + ".example.com"},
				Locations: []v1beta1.Location{proxy("/")}})
		}
		servers = append(servers, v1beta1.Server{Port: "http", DefaultServer: true, Locations: []v1beta1.Location{notFound}})
	} else {
		var locations []v1beta1.Location
		for i := range routes {
			locations = append(locations, proxy("/route-"+strconv.Itoa(i)))
		}
		servers = []v1beta1.Server{{Port: "http", DefaultServer: true, Locations: append(locations, notFound)}}
	}
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web-gateway", Namespace: "team-a"},
		Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
			Config: v1beta1.NginxConfig{Servers: servers}},
	}
}

// TestOnlyRoutedInstancesGoBeyondTheCRDsRoom: an instance holds the
// CRD's 32 servers of 64 locations, with the apiserver's words past them,
// while the one a Gateway's 1,000 routes make is checked in full (every
// rule, the rules on pairs of servers in Go) and accepted.
func TestOnlyRoutedInstancesGoBeyondTheCRDsRoom(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		hostnames bool
		tooMany   string
	}{
		{"a hostname each", true, "spec.config.servers: Too many: 1001: must have at most 32 items"},
		{"a path each", false, "spec.config.servers[0].locations: Too many: 1001: must have at most 64 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := routed(1000, tc.hostnames)
			if _, errs := validation.NginxOperator(ctx, obj); !strings.Contains(errs.ToAggregate().Error(), tc.tooMany) {
				t.Errorf("an instance of 1,000 routes: got %v, want %q", errs, tc.tooMany)
			}
			began := time.Now()
			if _, errs := validation.RoutedNginxOperator(ctx, obj); len(errs) > 0 {
				t.Fatalf("a Gateway's instance of 1,000 routes is refused: %v", errs.ToAggregate())
			}
			t.Logf("1,000 routes, %s: checked in %s", tc.name, time.Since(began).Round(time.Millisecond))

			bad := routed(1000, tc.hostnames)
			last := &bad.Spec.Config.Servers[len(bad.Spec.Config.Servers)-1]
			last.Locations[0].RequestHeaders = &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "Connection", Value: "close"}}}
			bad.Spec.Config.Servers = append(bad.Spec.Config.Servers, v1beta1.Server{Port: "http", DefaultServer: true, ServerNames: []string{"x.example.com"}})
			_, errs := validation.RoutedNginxOperator(ctx, bad)
			for _, want := range []string{
				"spec.config.servers[" + strconv.Itoa(len(bad.Spec.Config.Servers)-2) + "].locations[0].requestHeaders",
				"spec.config: Invalid value: a port can have only one server with defaultServer: true",
			} {
				if !strings.Contains(errs.ToAggregate().Error(), want) {
					t.Errorf("a Gateway's instance with a header nginx manages and two default servers: got %v, want %q", errs, want)
				}
			}
		})
	}
}

// The bounds room restates are the CRD's maxItems.
func TestTheInstanceBoundsAreTheCRDs(t *testing.T) {
	props, err := validation.ShippedSchema("NginxOperator", "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	servers := props.Properties["spec"].Properties["config"].Properties["servers"]
	locations := servers.Items.Schema.Properties["locations"]
	if servers.MaxItems == nil || *servers.MaxItems != v1beta1.MaxServers || locations.MaxItems == nil || *locations.MaxItems != v1beta1.MaxLocations {
		t.Errorf("the CRD's maxItems: servers %v, locations %v; v1beta1.MaxServers %d, MaxLocations %d", servers.MaxItems, locations.MaxItems, v1beta1.MaxServers, v1beta1.MaxLocations)
	}
	streams := props.Properties["spec"].Properties["config"].Properties["streams"]
	names := streams.Items.Schema.Properties["serverNames"]
	if streams.MaxItems == nil || *streams.MaxItems != v1beta1.MaxStreams || names.MaxItems == nil || *names.MaxItems != v1beta1.MaxStreamServerNames {
		t.Errorf("the CRD's maxItems: streams %v, their serverNames %v; v1beta1.MaxStreams %d, MaxStreamServerNames %d", streams.MaxItems, names.MaxItems, v1beta1.MaxStreams, v1beta1.MaxStreamServerNames)
	}
}
