package gateway

import (
	"context"
	"maps"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
	"github.com/nginx-operator/nginx-operator/pkg/routetable"
)

// Controller names, for metrics and logs.
const (
	GatewayControllerName      = "gateway"
	GatewayClassControllerName = "gatewayclass"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses;gateways;httproutes;grpcroutes;tlsroutes;tcproutes;udproutes;referencegrants,verbs=list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses/status;gateways/status;httproutes/status;grpcroutes/status;tlsroutes/status;tcproutes/status;udproutes/status,verbs=patch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators,verbs=create;patch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxgatewayparameters;nginxexternalauths,verbs=list;watch

// Setup is what the Gateway controllers need besides the manager.
type Setup struct {
	// References is the cache of Services' and Secrets' metadata (the
	// NginxOperator controller's), which watches a namespace once a
	// Gateway's reconcile reads a reference there (exists): a backend or
	// a certificate appearing or going reaches the Gateways that name it.
	References *k8sutil.NamespaceCaches
	// Routes receive the servers of each Gateway's instance, which the
	// NginxOperator controller renders it with.
	Routes *routetable.Table
}

// CanRun reports whether the Gateway controllers can run, and if not why:
// the API server must serve Gateway API's v1 kinds (its CRDs installed),
// and the operator must be allowed to watch GatewayClasses, which are
// cluster-scoped (an install limited to some namespaces has Roles only).
func CanRun(ctx context.Context, mgr ctrl.Manager) (bool, string) {
	for _, kind := range []string{"Gateway", "HTTPRoute", "GRPCRoute"} {
		if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: kind}, "v1"); err != nil {
			return false, "Gateway API is not served: no " + kind + " v1 (install the standard channel's CRDs, v1.1 or later)"
		}
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: gatewayv1.GroupName, Resource: "gatewayclasses", Verb: "watch"}}}
	if err := mgr.GetClient().Create(ctx, review); err != nil {
		return false, "cannot ask whether the operator may watch GatewayClasses: " + err.Error()
	}
	if !review.Status.Allowed {
		return false, "the operator may not watch GatewayClasses (cluster-scoped; an install limited to namespaces grants Roles only)"
	}
	return true, ""
}

// SetupWithManager registers the GatewayClass and Gateway controllers on a
// manager whose scheme knows Gateway API's kinds. The caller checks CanRun
// first.
func SetupWithManager(mgr ctrl.Manager, s Setup) error {
	kinds := ServedRouteKinds(mgr)
	if err := indexRoutes(mgr, kinds); err != nil {
		return err
	}
	deps := k8sutil.NewDeps(mgr)
	classes := &classReconciler{Client: deps.Client}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named(GatewayClassControllerName).
		For(&gatewayv1.GatewayClass{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A class is accepted only while the parameters it names exist.
		Watches(&v1beta1.NginxGatewayParameters{}, handler.EnqueueRequestsFromMapFunc(classes.naming)).
		Complete(metrics.Instrument(GatewayClassControllerName, &k8sutil.StatusReconciler[*gatewayv1.GatewayClass]{
			Client: deps.Client,
			New:    func() *gatewayv1.GatewayClass { return &gatewayv1.GatewayClass{} },
			Sync:   classes.sync,
		})); err != nil {
		return err
	}
	r := &gatewayReconciler{Deps: deps, references: s.References, routes: s.Routes, backendTLS: servesBackendTLSPolicies(mgr), kinds: kinds}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(GatewayControllerName).
		// The Gateway's and the routes' status is the controller's own
		// writing: a change of it alone asks nothing new (each would
		// translate every route of the Gateway again).
		For(&gatewayv1.Gateway{}, builder.WithPredicates(specOrMetadataChanged)).
		Owns(&v1beta1.NginxOperator{}).
		// Copies of certificates of other namespaces (certcopy.go).
		Owns(&corev1.Secret{}).
		// The instance's Service holds the Gateway's addresses.
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.gatewayOfService)).
		Watches(&gatewayv1.GatewayClass{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfClass)).
		Watches(&gatewayv1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(r.allGateways)).
		Watches(&v1beta1.NginxGatewayParameters{}, handler.EnqueueRequestsFromMapFunc(r.allGateways)).
		// Filters change seldom; each Gateway reads those its routes name.
		Watches(&v1beta1.NginxExternalAuth{}, handler.EnqueueRequestsFromMapFunc(r.allGateways), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allGateways),
			builder.OnlyMetadata, builder.WithPredicates(predicate.LabelChangedPredicate{}))
	for _, kind := range kinds {
		b = b.Watches(newRoute(kind), handler.EnqueueRequestsFromMapFunc(gatewaysOfRoute), builder.WithPredicates(specOrMetadataChanged))
	}
	referenced := map[string]handler.TypedMapFunc[*metav1.PartialObjectMetadata, reconcile.Request]{
		"Service": r.gatewaysReferring("Service"), "Secret": r.gatewaysReferring("Secret")}
	if r.backendTLS {
		if err := indexPolicies(mgr); err != nil {
			return err
		}
		// A policy's status is this controller's writing, as a route's.
		b = b.Watches(&gatewayv1.BackendTLSPolicy{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfPolicy), builder.WithPredicates(specOrMetadataChanged))
		referenced["ConfigMap"] = r.gatewaysOfCAConfigMap
	}
	for _, kind := range slices.Sorted(maps.Keys(referenced)) {
		obj := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}}
		b = b.WatchesRawSource(k8sutil.NamespacedKind(s.References, obj,
			handler.TypedEnqueueRequestsFromMapFunc(referenced[kind]),
			predicate.TypedResourceVersionChangedPredicate[*metav1.PartialObjectMetadata]{}))
	}
	mgr.GetLogger().Info("Gateway API is served: the GatewayClass and Gateway controllers run", "controllerName", graph.ControllerName, "backendTLSPolicy", r.backendTLS,
		"routeKinds", kinds)
	return b.Complete(metrics.Instrument(GatewayControllerName, reconcile.Func(r.reconcile)))
}

// specOrMetadataChanged passes every change but one of the status alone.
var specOrMetadataChanged = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})

// Indexes of the cache.
const (
	// routeParentIndex indexes HTTPRoutes by the Gateways they name, in
	// their spec and in their status entries of this controller.
	routeParentIndex = "gateway.nginx.operator.dev/parent"
	// routeBackendIndex indexes HTTPRoutes by the Services they name.
	routeBackendIndex = "gateway.nginx.operator.dev/backend"
	// gatewaySecretIndex indexes Gateways by the Secrets they name.
	gatewaySecretIndex = "gateway.nginx.operator.dev/secret"
)

func indexRoutes(mgr ctrl.Manager, kinds RouteKinds) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	for _, kind := range kinds {
		obj := newRoute(kind)
		if err := idx.IndexField(ctx, obj, routeParentIndex, func(o client.Object) []string { return keys(parentsOf(o)) }); err != nil {
			return err
		}
		if err := idx.IndexField(ctx, obj, routeBackendIndex, func(o client.Object) []string { return keys(backendsOf(o)) }); err != nil {
			return err
		}
	}
	return idx.IndexField(ctx, &gatewayv1.Gateway{}, gatewaySecretIndex, func(o client.Object) []string {
		return keys(secretsOf(o.(*gatewayv1.Gateway)))
	})
}

func keys(names []types.NamespacedName) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n.String())
	}
	return out
}

// parentsOf are the Gateways route rt names
// in its spec, and those this controller wrote a status entry for (so
// that an entry left behind when a parentRef goes is found and removed).
func parentsOf(rt client.Object) []types.NamespacedName {
	p := graph.PartsOf(rt)
	var out []types.NamespacedName
	add := func(ref gatewayv1.ParentReference) {
		if (ref.Group == nil || *ref.Group == graph.Group) && (ref.Kind == nil || *ref.Kind == "Gateway") {
			out = append(out, types.NamespacedName{Namespace: string(ptr.Deref(ref.Namespace, gatewayv1.Namespace(rt.GetNamespace()))), Name: string(ref.Name)})
		}
	}
	for _, ref := range p.Parents {
		add(ref)
	}
	for _, entry := range p.Status.Parents {
		if entry.ControllerName == graph.ControllerName {
			add(entry.ParentRef)
		}
	}
	return out
}

// backendsOf are the Services route rt names: its backends and mirrors.
func backendsOf(rt client.Object) []types.NamespacedName {
	var refs []gatewayv1.BackendRef
	switch rt := rt.(type) {
	case *gatewayv1.HTTPRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendRef)
			}
			for _, f := range rule.Filters {
				if f.RequestMirror != nil {
					refs = append(refs, gatewayv1.BackendRef{BackendObjectReference: f.RequestMirror.BackendRef})
				}
			}
		}
	case *gatewayv1.GRPCRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendRef)
			}
		}
	default:
		refs = graph.PartsOf(rt).BackendRefs
	}
	out := make([]types.NamespacedName, 0, len(refs))
	for _, b := range refs {
		out = append(out, types.NamespacedName{Namespace: string(ptr.Deref(b.Namespace, gatewayv1.Namespace(rt.GetNamespace()))), Name: string(b.Name)})
	}
	return out
}

func secretsOf(gw *gatewayv1.Gateway) []types.NamespacedName {
	var out []types.NamespacedName
	for _, l := range gw.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, ref := range l.TLS.CertificateRefs {
			out = append(out, types.NamespacedName{Namespace: string(ptr.Deref(ref.Namespace, gatewayv1.Namespace(gw.Namespace))), Name: string(ref.Name)})
		}
	}
	return out
}

func requestsFor(names []types.NamespacedName) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		out = append(out, reconcile.Request{NamespacedName: n})
	}
	return out
}

// gatewaysOfRoute maps a route to the Gateways it names (for an update,
// controller-runtime maps the old object too, so a Gateway the route left
// is reconciled as well).
func gatewaysOfRoute(_ context.Context, obj client.Object) []reconcile.Request {
	return requestsFor(parentsOf(obj))
}

func (r *gatewayReconciler) gatewaysOfClass(ctx context.Context, obj client.Object) []reconcile.Request {
	var list gatewayv1.GatewayList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing Gateways for a GatewayClass change")
		return nil
	}
	var out []reconcile.Request
	for _, gw := range list.Items {
		if string(gw.Spec.GatewayClassName) == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&gw)})
		}
	}
	return out
}

// allGateways maps a change that may concern any Gateway (a
// ReferenceGrant, a namespace's labels, parameters): all are rare.
func (r *gatewayReconciler) allGateways(ctx context.Context, _ client.Object) []reconcile.Request {
	var list gatewayv1.GatewayList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing Gateways")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, gw := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&gw)})
	}
	return out
}

// gatewaysReferring maps a Service to the Gateways of the routes that name
// it, and a Secret to the Gateways that serve it.
func (r *gatewayReconciler) gatewaysReferring(kind string) func(context.Context, *metav1.PartialObjectMetadata) []reconcile.Request {
	return func(ctx context.Context, obj *metav1.PartialObjectMetadata) []reconcile.Request {
		key := client.ObjectKeyFromObject(obj).String()
		if kind == "Secret" {
			var gws gatewayv1.GatewayList
			if err := r.Client.List(ctx, &gws, client.MatchingFields{gatewaySecretIndex: key}); err != nil {
				log.FromContext(ctx).Error(err, "listing Gateways by Secret")
				return nil
			}
			var out []reconcile.Request
			for _, gw := range gws.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&gw)})
			}
			return out
		}
		return r.gatewaysOfService(ctx, client.ObjectKeyFromObject(obj))
	}
}

// gatewaysOfService are the Gateways of the routes that name Service svc.
func (r *gatewayReconciler) gatewaysOfService(ctx context.Context, svc types.NamespacedName) []reconcile.Request {
	routes, err := listRoutes(ctx, r.Client, r.kinds, client.MatchingFields{routeBackendIndex: svc.String()})
	if err != nil {
		log.FromContext(ctx).Error(err, "listing routes by Service")
		return nil
	}
	var out []reconcile.Request
	for _, rt := range routes {
		out = append(out, requestsFor(parentsOf(rt))...)
	}
	return out
}

// gatewayOfService maps a Service the operator manages to the Gateway
// whose instance owns it.
func (r *gatewayReconciler) gatewayOfService(ctx context.Context, obj client.Object) []reconcile.Request {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.Kind != "NginxOperator" {
		return nil
	}
	var instance v1beta1.NginxOperator
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: owner.Name}, &instance); err != nil {
		return nil
	}
	gw := metav1.GetControllerOf(&instance)
	if gw == nil || gw.Kind != "Gateway" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: gw.Name}}}
}
