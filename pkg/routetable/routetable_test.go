package routetable

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The table hands each instance the spec its own Gateway published,
// tells the nginx controller only of changes, and gives nothing to an
// instance another Gateway, or no Gateway, controls.
func TestTheTableHandsAnInstanceOnlyItsOwnGatewaysServers(t *testing.T) {
	ctx := context.Background()
	instance := types.NamespacedName{Namespace: "team-a", Name: "web-gateway"}
	owned := func(apiVersion, kind string, uid types.UID) *v1beta1.NginxOperator {
		n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Namespace: instance.Namespace, Name: instance.Name}}
		if kind != "" {
			n.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "web", UID: uid, Controller: ptr.To(true)}}
		}
		return n
	}
	spec := func(replicas int32) Instance {
		return Instance{Spec: v1beta1.NginxOperatorSpec{Replicas: ptr.To(replicas), Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "p80", DefaultServer: true}}}},
			Routing: &v1beta1.RoutingStatus{Servers: 1, Locations: 1}}
	}
	table := New()
	if _, routed, published := table.Published(owned("gateway.networking.k8s.io/v1", "Gateway", "u1")); !routed || published {
		t.Fatalf("before publishing: routed %v, published %v; want routed, not published", routed, published)
	}
	if !table.Publish(ctx, instance, "u1", spec(1)) {
		t.Fatal("the first publish is not a change")
	}
	if got := (<-table.Events()).Object.GetName(); got != instance.Name {
		t.Fatalf("event for %s, want %s", got, instance.Name)
	}
	if table.Publish(ctx, instance, "u1", spec(1)) {
		t.Error("publishing the same spec again is a change")
	}
	if !table.Publish(ctx, instance, "u1", spec(2)) {
		t.Error("publishing another number of replicas is no change")
	}
	<-table.Events()
	moreRouting := spec(2)
	moreRouting.Routing.Routes = 1
	if !table.Publish(ctx, instance, "u1", moreRouting) {
		t.Error("publishing another routing is no change")
	}
	<-table.Events()
	for _, tc := range []struct {
		name              string
		nginx             *v1beta1.NginxOperator
		routed, published bool
	}{
		{"its Gateway's", owned("gateway.networking.k8s.io/v1", "Gateway", "u1"), true, true},
		{"a Gateway of the same name and another UID", owned("gateway.networking.k8s.io/v1", "Gateway", "u2"), true, false},
		{"another group's Gateway", owned("example.com/v1", "Gateway", "u1"), false, false},
		{"no owner", owned("", "", ""), false, false},
	} {
		got, routed, published := table.Published(tc.nginx)
		if routed != tc.routed || published != tc.published || (published && (len(got.Spec.Config.Servers) != 1 || *got.Spec.Replicas != 2 || got.Routing.Routes != 1)) {
			t.Errorf("%s: %+v, routed %v, published %v; want routed %v, published %v", tc.name, got, routed, published, tc.routed, tc.published)
		}
	}
	table.Forget(instance)
	if _, _, published := table.Published(owned("gateway.networking.k8s.io/v1", "Gateway", "u1")); published {
		t.Error("a forgotten spec is still handed out")
	}
}
