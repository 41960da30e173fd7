package nginx

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch

// EndpointsBatch paces the reconciles that changes to a Service's
// endpoints bring to the instances proxying to it: a backend's rollout
// changes its EndpointSlices several times per pod within seconds, and each
// reconcile that changes nginx.conf reloads nginx. The first change after a
// quiet batch reaches an instance at once (a pod that left is out of
// nginx.conf as soon as can be); those that follow within a batch gather
// until its end, so endpoint changes reload an instance at most once a
// batch.
const EndpointsBatch = time.Second

// endpointsPacer says when each instance should be reconciled for an
// endpoint change (see EndpointsBatch).
type endpointsPacer struct {
	now func() time.Time
	mu  sync.Mutex
	// due is when each instance was last reconciled, or will be, for one.
	due map[types.NamespacedName]time.Time
}

func newEndpointsPacer() *endpointsPacer {
	return &endpointsPacer{now: time.Now, due: map[types.NamespacedName]time.Time{}}
}

// delay is how long from now instance's reconcile for an endpoint change
// should wait.
func (p *endpointsPacer) delay(instance types.NamespacedName) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now, last := p.now(), p.due[instance]
	switch {
	case !now.Before(last.Add(EndpointsBatch)):
		p.due[instance] = now
		return 0
	case last.After(now):
		return last.Sub(now) // one is due already
	default:
		p.due[instance] = last.Add(EndpointsBatch)
		return p.due[instance].Sub(now)
	}
}

// forget drops a deleted instance.
func (p *endpointsPacer) forget(instance types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.due, instance)
}

// endpointServiceIndex indexes the cached EndpointSlices by the Service
// they belong to (their kubernetes.io/service-name label).
const endpointServiceIndex = "nginx.operator.dev/endpoints-of"

// TrimEndpointSlice keeps of an EndpointSlice what an upstream is made of:
// the Service it belongs to, its address type and ports, and each
// endpoint's addresses and conditions. Hostnames, zones, hints, nodes and
// target references are what kube-proxy and DNS use, not nginx.
func TrimEndpointSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	trimmed := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion,
			Labels: map[string]string{discoveryv1.LabelServiceName: s.Labels[discoveryv1.LabelServiceName]}},
		AddressType: s.AddressType,
		Ports:       s.Ports,
	}
	for _, e := range s.Endpoints {
		trimmed.Endpoints = append(trimmed.Endpoints, discoveryv1.Endpoint{Addresses: e.Addresses, Conditions: e.Conditions})
	}
	return trimmed, nil
}

// watchEndpoints indexes the EndpointSlices of references by Service and
// reconciles the instances that proxy to a Service when its endpoints
// change, paced by EndpointsBatch.
func (r *Reconciler) watchEndpoints(ctx context.Context, references *k8sutil.NamespaceCaches) (source.Source, error) {
	if err := references.IndexField(ctx, &discoveryv1.EndpointSlice{}, endpointServiceIndex, func(obj client.Object) []string {
		if name := obj.GetLabels()[discoveryv1.LabelServiceName]; name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	later := func(ctx context.Context, slice *discoveryv1.EndpointSlice, q queue) {
		for _, req := range r.instancesNamingObject(ctx, "Service", slice.Namespace, slice.Labels[discoveryv1.LabelServiceName]) {
			q.AddAfter(req, r.endpointsPacer.delay(req.NamespacedName))
		}
	}
	return k8sutil.NamespacedKind(references, &discoveryv1.EndpointSlice{}, handler.TypedFuncs[*discoveryv1.EndpointSlice, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*discoveryv1.EndpointSlice], q queue) {
			later(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*discoveryv1.EndpointSlice], q queue) {
			later(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*discoveryv1.EndpointSlice], q queue) {
			later(ctx, e.Object, q)
		},
	}, predicate.TypedResourceVersionChangedPredicate[*discoveryv1.EndpointSlice]{}), nil
}

// serviceEndpoints are the cached EndpointSlices of the Service name in
// namespace.
func (r *Reconciler) serviceEndpoints(ctx context.Context, namespace, name string) ([]discoveryv1.EndpointSlice, error) {
	if r.Endpoints == nil {
		return nil, nil
	}
	var list discoveryv1.EndpointSliceList
	if err := r.Endpoints.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{endpointServiceIndex: name}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// endpointAddresses are the "address:port" nginx sends a Service's port
// of protocol to, sorted (nginx.conf changes only when they do): its ready endpoints,
// at the target port the EndpointSlices give for the Service port of that
// number (a named targetPort differs from pod to pod); where none is
// ready, those still serving while they terminate, as kube-proxy does.
// An endpoint that a Service's slices list twice (while the controller
// moves it) is sent to once. Only the slices of the Service's first IP
// family count, the family of the address clients used before (a pod of a
// single-stack instance cannot reach the other); FQDN slices are for
// kube-proxy's eyes only.
func endpointAddresses(svc *corev1.Service, port int32, protocol corev1.Protocol, endpointSlices []discoveryv1.EndpointSlice) []string {
	// An unset protocol is TCP, in the Service as in its slices.
	is := func(p *corev1.Protocol) bool {
		if p == nil || *p == "" {
			return protocol == corev1.ProtocolTCP
		}
		return *p == protocol
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
		return p.Port == port && is(&p.Protocol)
	})
	if i < 0 {
		return nil
	}
	name := svc.Spec.Ports[i].Name
	var ready, terminating []string
	for _, s := range endpointSlices {
		if !servesFamily(svc, s.AddressType) {
			continue
		}
		j := slices.IndexFunc(s.Ports, func(p discoveryv1.EndpointPort) bool {
			return ptr.Deref(p.Name, "") == name && is(p.Protocol) && p.Port != nil
		})
		if j < 0 {
			continue
		}
		target := strconv.Itoa(int(*s.Ports[j].Port))
		for _, e := range s.Endpoints {
			c := e.Conditions
			isReady := c.Ready == nil || *c.Ready
			serving := isReady
			if c.Serving != nil {
				serving = *c.Serving
			}
			for _, addr := range e.Addresses {
				hostPort := net.JoinHostPort(addr, target)
				switch {
				case isReady && (c.Terminating == nil || !*c.Terminating):
					ready = append(ready, hostPort)
				case serving && c.Terminating != nil && *c.Terminating:
					terminating = append(terminating, hostPort)
				}
			}
		}
	}
	if len(ready) == 0 {
		ready = terminating
	}
	slices.Sort(ready)
	return slices.Compact(ready)
}

// servesFamily tells whether nginx sends to svc's endpoints of an address
// type: IPv4 or IPv6, and the first of svc's IP families if it has any.
func servesFamily(svc *corev1.Service, t discoveryv1.AddressType) bool {
	if t != discoveryv1.AddressTypeIPv4 && t != discoveryv1.AddressTypeIPv6 {
		return false
	}
	return len(svc.Spec.IPFamilies) == 0 || string(svc.Spec.IPFamilies[0]) == string(t)
}
