// Package routetable is the one road from a front (the Gateway controller,
// pkg/gateway) to the nginx controller (pkg/nginx): the whole spec of each
// instance a front controls, in the operator's memory.
//
// A Gateway's instance is an NginxOperator, but what its routes make does
// not fit that object's spec: the CRD holds 32 servers of 64 locations, a
// bound its CEL rules' cost budget sets and no Gateway with 1,000 routes
// fits in. So the Gateway controller checks the instance's spec against
// every rule of the CRD in Go (validation.RoutedNginxOperator's family,
// which also gives it the CRD's defaults) and publishes it here, whole: ports,
// settings, servers and streams; the nginx controller renders what was
// published, and reads of the NginxOperator object only its metadata. The
// object carries the same spec but its servers, for kubectl and for the
// children's owner; a change made to it by hand is not served (the
// Gateway and its parameters say what its instance is). Both controllers
// run in the one operator that holds the leader lease, and the Gateway
// controller publishes every Gateway it serves after a restart before the
// nginx controller renders its instance: until then, the instance is left
// as it is (its pods keep serving the last configuration).
package routetable

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// GatewayGroup is the API group of the Gateway that owns a routed instance.
const GatewayGroup = "gateway.networking.k8s.io"

// Table is the spec of every routed instance, by instance.
type Table struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]entry
	events  chan event.GenericEvent
}

// Instance is what a front publishes for one instance: its whole spec,
// and what it serves, for the instance's status.routing.
type Instance struct {
	Spec    v1beta1.NginxOperatorSpec
	Routing *v1beta1.RoutingStatus
}

// entry is what the Gateway whose UID is owner publishes for its instance.
type entry struct {
	owner    types.UID
	instance Instance
}

// New returns an empty table.
func New() *Table {
	return &Table{entries: map[types.NamespacedName]entry{}, events: make(chan event.GenericEvent, eventBuffer)}
}

// eventBuffer is how many changed instances wait for the nginx controller
// before Publish blocks (its source reads the channel as it comes).
const eventBuffer = 1024

// Publish makes published what the nginx controller serves as key, the
// NginxOperator of the Gateway whose UID is owner, and tells the nginx
// controller when it changed. It returns whether it did. Its spec is what
// validation.RoutedNginxOperator (or RoutedNginxOperatorOfCheckedLocations,
// the same verdict) returned for the instance without an error: the nginx
// controller checks only how its servers fit the rest
// (validation.RoutedNginxOperatorOfCheckedServers). It must not be changed
// afterwards: the table keeps it, not a copy.
func (t *Table) Publish(ctx context.Context, key types.NamespacedName, owner types.UID, published Instance) bool {
	t.mu.Lock()
	old, ok := t.entries[key]
	changed := !ok || old.owner != owner || !sameSpec(old.instance.Spec, published.Spec) ||
		!equality.Semantic.DeepEqual(old.instance.Routing, published.Routing)
	if changed {
		t.entries[key] = entry{owner: owner, instance: published}
	}
	t.mu.Unlock()
	if changed {
		t.notify(ctx, key)
	}
	return changed
}

// sameSpec compares two published specs: the servers, which may be
// thousands, with reflect's DeepEqual (they hold no quantities, and the
// graph makes the same servers the same way, nil or empty alike), the rest
// semantically (resource quantities of the parameters).
func sameSpec(a, b v1beta1.NginxOperatorSpec) bool {
	if !reflect.DeepEqual(a.Config.Servers, b.Config.Servers) {
		return false
	}
	a.Config.Servers, b.Config.Servers = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// Forget drops instance's spec: its Gateway is gone or no longer
// served by this operator.
func (t *Table) Forget(instance types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, instance)
}

// Published is what was published for nginx. routed reports whether a
// Gateway controls nginx (its spec comes from here, not from the
// object's); published whether that Gateway published it.
func (t *Table) Published(nginx *v1beta1.NginxOperator) (instance Instance, routed, published bool) {
	owner := metav1.GetControllerOf(nginx)
	if owner == nil || owner.Kind != "Gateway" {
		return instance, false, false
	}
	if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != GatewayGroup {
		return instance, false, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}]
	if !ok || e.owner != owner.UID {
		return instance, true, false
	}
	return e.instance, true, true
}

// Events names each instance whose spec changed, for the nginx
// controller's watch (source.Channel).
func (t *Table) Events() <-chan event.GenericEvent { return t.events }

func (t *Table) notify(ctx context.Context, instance types.NamespacedName) {
	obj := &v1beta1.NginxOperator{}
	obj.Namespace, obj.Name = instance.Namespace, instance.Name
	select {
	case t.events <- event.GenericEvent{Object: client.Object(obj)}:
	case <-ctx.Done():
	}
}
