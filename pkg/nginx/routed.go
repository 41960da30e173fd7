package nginx

// Routed instances: the NginxOperators Gateways control, whose whole spec
// the Gateway controller publishes in memory (pkg/routetable): the object's
// spec is a record of it without the servers.

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// awaitingRoutes reports a routed instance whose Gateway has not published
// its spec yet (the operator just started, or the Gateway is not
// served): rendering it now would drop its routes.
func (r *Reconciler) awaitingRoutes(nginx *v1beta1.NginxOperator) bool {
	if r.Routes == nil {
		return false
	}
	_, routed, published := r.Routes.Published(nginx)
	return routed && !published
}

// validated is nginx as plan builds from it (validation.NginxOperator):
// for a routed instance, its metadata with the spec its Gateway published,
// and the room its servers need, and what that publication says it
// serves (status.routing; nil for an instance no Gateway controls), read
// from the one publication so that the two agree. The servers' references
// join the reference index first, so that a change to a Service they name
// after resolve reads it reaches the instance.
func (r *Reconciler) validated(ctx context.Context, nginx *v1beta1.NginxOperator) (*v1beta1.NginxOperator, *v1beta1.RoutingStatus, field.ErrorList) {
	if r.Routes == nil {
		desired, errs := validation.NginxOperator(ctx, nginx)
		return desired, nil, errs
	}
	published, routed, _ := r.Routes.Published(nginx)
	if !routed {
		desired, errs := validation.NginxOperator(ctx, nginx)
		return desired, nil, errs
	}
	composed := *nginx
	composed.Spec = published.Spec
	r.routedReferences.set(types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}, referenceKeys(&composed))
	desired, errs := validation.RoutedNginxOperatorOfCheckedServers(ctx, &composed)
	return desired, published.Routing, errs
}

// routedReferences index the routed instances by what their servers name,
// as referenceIndex does the others by their specs.
type routedReferences struct {
	mu        sync.Mutex
	keys      map[types.NamespacedName][]string
	instances map[string]map[types.NamespacedName]bool
}

func (x *routedReferences) set(instance types.NamespacedName, keys []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slices.Equal(x.keys[instance], keys) {
		return
	}
	x.dropLocked(instance)
	if x.keys == nil {
		x.keys, x.instances = map[types.NamespacedName][]string{}, map[string]map[types.NamespacedName]bool{}
	}
	x.keys[instance] = keys
	for _, k := range keys {
		if x.instances[k] == nil {
			x.instances[k] = map[types.NamespacedName]bool{}
		}
		x.instances[k][instance] = true
	}
}

func (x *routedReferences) forget(instance types.NamespacedName) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dropLocked(instance)
}

func (x *routedReferences) dropLocked(instance types.NamespacedName) {
	for _, k := range x.keys[instance] {
		delete(x.instances[k], instance)
		if len(x.instances[k]) == 0 {
			delete(x.instances, k)
		}
	}
	delete(x.keys, instance)
}

// naming are the routed instances whose servers name key.
func (x *routedReferences) naming(key string) []types.NamespacedName {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(x.instances[key]))
	for instance := range x.instances[key] {
		out = append(out, instance)
	}
	return out
}
