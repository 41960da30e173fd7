// Package routetable hands the servers a Gateway's routes make from the
// Gateway controller (pkg/gateway) to the nginx controller (pkg/nginx), in
// the operator's memory.
//
// A Gateway's instance is an NginxOperator, but its routes are not in that
// object's spec: the CRD holds 32 servers of 64 locations, a bound its CEL
// rules' cost budget sets and no Gateway with 1,000 routes fits in. The
// Gateway controller applies the instance's ports and settings, checks
// the servers its routes make against every rule of the CRD in Go
// (validation.RoutedNginxOperator), and publishes them here; the nginx
// controller renders the instance from both. Both controllers run in the
// one operator that holds the leader lease, and the Gateway controller
// publishes every Gateway it serves after a restart before the nginx
// controller renders its instance: until then, the instance is left as it
// is (its pods keep serving the last configuration).
package routetable

import (
	"context"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// GatewayGroup is the API group of the Gateway that owns a routed instance.
const GatewayGroup = "gateway.networking.k8s.io"

// Table is the servers of every routed instance, by instance.
type Table struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]entry
	events  chan event.GenericEvent
}

// entry is what the Gateway whose UID is owner publishes for its instance.
type entry struct {
	owner   types.UID
	servers []v1beta1.Server
}

// New returns an empty table.
func New() *Table {
	return &Table{entries: map[types.NamespacedName]entry{}, events: make(chan event.GenericEvent, eventBuffer)}
}

// eventBuffer is how many changed instances wait for the nginx controller
// before Publish blocks (its source reads the channel as it comes).
const eventBuffer = 1024

// Publish makes servers the servers of instance, the NginxOperator of the
// Gateway whose UID is owner, and tells the nginx controller when they
// changed. It returns whether they did. servers are what
// validation.RoutedNginxOperator returned for the instance without an
// error: the nginx controller checks only how they fit the instance
// (validation.RoutedNginxOperatorOfCheckedServers). They must not be
// changed afterwards: the table keeps them, not a copy.
func (t *Table) Publish(ctx context.Context, instance types.NamespacedName, owner types.UID, servers []v1beta1.Server) bool {
	t.mu.Lock()
	old, ok := t.entries[instance]
	// reflect's DeepEqual, not apimachinery's semantic one, which is
	// slower: servers hold no quantities, and the translation makes the
	// same servers the same way (nil or empty alike).
	changed := !ok || old.owner != owner || !reflect.DeepEqual(old.servers, servers)
	if changed {
		t.entries[instance] = entry{owner: owner, servers: servers}
	}
	t.mu.Unlock()
	if changed {
		t.notify(ctx, instance)
	}
	return changed
}

// Forget drops instance's servers: its Gateway is gone or no longer
// served by this operator.
func (t *Table) Forget(instance types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, instance)
}

// Servers are the servers published for nginx. routed reports whether a
// Gateway controls nginx (its servers come from here, not from its spec);
// published whether that Gateway published them.
func (t *Table) Servers(nginx *v1beta1.NginxOperator) (servers []v1beta1.Server, routed, published bool) {
	owner := metav1.GetControllerOf(nginx)
	if owner == nil || owner.Kind != "Gateway" {
		return nil, false, false
	}
	if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != GatewayGroup {
		return nil, false, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}]
	if !ok || e.owner != owner.UID {
		return nil, true, false
	}
	return e.servers, true, true
}

// Events names each instance whose servers changed, for the nginx
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
