package nginx

import (
	"context"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
)

// referenceIndex indexes the cached instances by the objects their specs
// name (render.ReferencesOf), as referenceKey: a change to a Secret,
// ConfigMap or Service finds the instances it concerns without a list of
// them all.
const referenceIndex = "nginx.operator.dev/reference"

// referenceKinds are the kinds a spec can name, as empty metadata-only
// objects: the references cache holds their metadata, never a Secret's data
// (plan reads the data of the objects an instance names, and only those).
func referenceKinds() []*metav1.PartialObjectMetadata {
	var out []*metav1.PartialObjectMetadata
	for _, kind := range slices.Sorted(maps.Keys(referenceReasons)) {
		out = append(out, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}})
	}
	return out
}

// referenceKey is how referenceIndex names an object of kind in namespace.
func referenceKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// namespaceKey is how referenceIndex names another namespace an instance
// sends into (Backend.Namespace): a ReferenceGrant there concerns it.
func namespaceKey(namespace string) string { return referenceKey("Namespace", "", namespace) }

// referenceKeys are the index values of an instance: each object its spec
// names, once, and each other namespace it names objects in.
func referenceKeys(obj client.Object) []string {
	nginx, ok := obj.(*v1beta1.NginxOperator)
	if !ok {
		return nil
	}
	var keys []string
	for _, ref := range render.ReferencesOf(&nginx.Spec) {
		namespace := ref.In(nginx.Namespace)
		if namespace != nginx.Namespace {
			keys = append(keys, namespaceKey(namespace))
		}
		keys = append(keys, referenceKey(ref.Kind, namespace, ref.Name))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// watchReferences indexes the instances by what they name and reconciles
// the instances that name an object of references (a cache of Secrets,
// ConfigMaps and Services' metadata in the namespaces instances name
// objects in, see namespacesNamed) when it is created, changed or deleted:
// a rotated certificate, a re-created Service or a deleted ConfigMap
// reaches the instances at once, and nothing is polled.
func (r *Reconciler) watchReferences(mgr ctrl.Manager, references *k8sutil.NamespaceCaches, b *ctrl.Builder) (*ctrl.Builder, error) {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1beta1.NginxOperator{}, referenceIndex, referenceKeys); err != nil {
		return nil, err
	}
	for _, obj := range referenceKinds() {
		b = b.WatchesRawSource(k8sutil.NamespacedKind(references, obj,
			handler.TypedEnqueueRequestsFromMapFunc(r.instancesNaming(obj.Kind)),
			// Every write of an object changes its resourceVersion; a
			// resync does not.
			predicate.TypedResourceVersionChangedPredicate[*metav1.PartialObjectMetadata]{}))
	}
	r.endpointsPacer = newEndpointsPacer()
	endpoints, err := r.watchEndpoints(context.Background(), references)
	if err != nil {
		return nil, err
	}
	r.Endpoints, r.references = references, references
	return b.WatchesRawSource(endpoints), nil
}

// watchNamed makes the references cache watch every namespace refs, the
// objects nginx's spec names, are in, before resolve reads them: a change
// made after that read reaches the instance. A namespace where no instance
// names anything is not watched at all (k8sutil.NamespaceCaches).
func (r *Reconciler) watchNamed(ctx context.Context, nginx *v1beta1.NginxOperator, refs render.References) error {
	if r.references == nil || len(refs) == 0 {
		return nil
	}
	var namespaces []string
	for _, ref := range refs {
		namespaces = append(namespaces, ref.In(nginx.Namespace))
	}
	slices.Sort(namespaces)
	return r.references.Watch(ctx, slices.Compact(namespaces)...)
}

// instancesNaming maps an object of kind to the instances in its namespace
// whose spec names it.
func (r *Reconciler) instancesNaming(kind string) handler.TypedMapFunc[*metav1.PartialObjectMetadata, reconcile.Request] {
	return func(ctx context.Context, obj *metav1.PartialObjectMetadata) []reconcile.Request {
		return r.instancesNamingObject(ctx, kind, obj.Namespace, obj.Name)
	}
}

// instancesNamingObject are the instances whose spec names the object of
// kind called name in namespace (from any namespace: a backend may be in
// another, Backend.Namespace).
func (r *Reconciler) instancesNamingObject(ctx context.Context, kind, namespace, name string) []reconcile.Request {
	return r.instancesIndexed(ctx, referenceKey(kind, namespace, name))
}

// instancesSendingInto are the instances that send to Services of obj's
// namespace from another: a ReferenceGrant there may have granted or
// revoked their backends.
func (r *Reconciler) instancesSendingInto(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.instancesIndexed(ctx, namespaceKey(obj.GetNamespace()))
}

// instancesIndexed are the instances with key under referenceIndex, and
// the routed ones whose servers name it (routedReferences).
func (r *Reconciler) instancesIndexed(ctx context.Context, key string) []reconcile.Request {
	var list v1beta1.NginxOperatorList
	if err := r.Client.List(ctx, &list, client.MatchingFields{referenceIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
		// The cache is the manager's own and indexed at setup: a failure
		// here is a programming error, not the user's.
		log.FromContext(ctx).Error(err, "listing the instances that name an object", "key", key)
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for _, nginx := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}})
	}
	for _, instance := range r.routedReferences.naming(key) {
		requests = append(requests, reconcile.Request{NamespacedName: instance})
	}
	return requests
}

// TrimReference keeps of a watched object's metadata what the references
// cache needs to map it to instances and notice a change (a Secret's
// annotations, such as kubectl's last-applied copy of its data, would
// otherwise sit in memory for every Secret of the cluster).
func TrimReference(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}
	return m, nil
}
