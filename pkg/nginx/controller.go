// Package nginx is the NginxOperator controller. Its files follow one
// reconcile: controller.go sets it up and runs it (sync); plan.go validates
// the spec and builds the children that should exist from it and from
// resolve.go's resolved model, what the spec references as read once from
// the cluster (Secrets, ConfigMaps, the proxied Services and their
// endpoints, the instance's own Service), which nginx.conf is rendered
// from (pkg/nginx/render) and status.upstreams reads; files.go lays the
// files nginx reads of the references out over the files Secrets; apply.go
// dry-runs and applies the children; objects.go and pod.go build them
// (pure functions of the spec); routed.go takes a Gateway's instance's
// spec from the route table (pkg/routetable); certificates.go asks
// cert-manager for the certificates a spec names and reports on them;
// reload.go nudges the pods after a new configuration; podconfigs.go sorts
// what each pod's reloader loaded, as the prober (pkg/nginx/prober) last
// read it; status.go builds the status from all of it (setStatus, and
// setPaused and setAwaitingRoutes for an instance it leaves as it is);
// restore.go seeds content from a backup; upgrade.go clears what earlier
// operators left. The watches: referencewatch.go maps a referenced object
// to the instances naming it, certificatewatch.go a cert-manager
// Certificate to its instance, endpoints.go the EndpointSlices of proxied
// Services (paced), metrics.go the instances' gauges.
package nginx

import (
	"context"
	"maps"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
	"github.com/nginx-operator/nginx-operator/pkg/routetable"
)

// ControllerName labels the controller's metrics and logs.
const ControllerName = "nginxoperator"

// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators,verbs=list;watch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch

// Reconciler reconciles NginxOperator objects.
type Reconciler struct {
	k8sutil.Deps
	// Images are the operator's default nginx image and its exporter image.
	Images Images
	// Prober reads what each pod's reloader serves, off the reconcile
	// workers; nil reports no status.loadedReplicas (--read-pod-status=false).
	Prober *prober.Prober
	// Operator are the pods a NetworkPolicy admits to the reloaders.
	Operator OperatorPods
	// Endpoints reads the EndpointSlices of proxied Services (the
	// references cache, see watchEndpoints); nil proxies to each Service's
	// own address.
	Endpoints client.Reader
	// endpointsPacer paces the reconciles of endpoint changes.
	endpointsPacer *endpointsPacer
	// references watches the namespaces of what instances name (see
	// watchNamed); nil watches none.
	references *k8sutil.NamespaceCaches
	// Grants decide on backends in other namespaces; nil refuses them.
	Grants ServiceGrants
	// Routes are the servers of the instances Gateways control; nil
	// serves every instance from its own spec.
	Routes *routetable.Table
	// routedReferences are what the servers of routed instances name,
	// which the cache's reference index cannot see (see instancesIndexed).
	routedReferences routedReferences
	// certificates applies and watches cert-manager Certificates; nil
	// applies none.
	certificates *certificateAPI
	// newPushKeys are the push keys generated for instances whose config
	// Secret the cache does not show with one yet (see pushKey).
	newPushKeys sync.Map
}

// Images are the images the operator deploys: nginx for instances that do not
// name one (--nginx-image), the nginx-prometheus-exporter sidecar of
// instances with spec.metrics.enabled (--exporter-image), the backup agent
// that restores spec.restore (--agent-image; empty refuses restores) and
// the image the nginx-reloader is copied from (--reloader-image).
type Images struct {
	Nginx, Exporter, Agent, Reloader string
}

// Setup is what the controller is built with besides the manager.
type Setup struct {
	Images Images
	// PodConfig reads the pods' reloaders: with one, a Prober reads them in
	// the background, and an instance whose pods answer something new is
	// reconciled again; nil reads none (--read-pod-status=false).
	PodConfig prober.PodConfigReader
	// References caches the Secrets', ConfigMaps' and Services' metadata
	// (see TrimReference) and the EndpointSlices (see TrimEndpointSlice)
	// of the namespaces instances name objects in, one namespace at a
	// time, and is added to the manager by the caller: the objects
	// instances name, and the endpoints of the Services they proxy to,
	// are watched there.
	References *k8sutil.NamespaceCaches
	// Operator are the pods a NetworkPolicy admits to the reloaders.
	Operator OperatorPods
	// Grants decide on backends in other namespaces; nil refuses them.
	Grants ServiceGrants
	// Routes are the servers of the instances Gateways control
	// (pkg/gateway publishes them); nil serves every instance from its
	// own spec.
	Routes *routetable.Table
	// CertificateCache builds the cache of the operator's cert-manager
	// Certificates, once an instance asks for one and the API is served;
	// nil applies none (tls.issuerRef then reports CertManagerNotInstalled).
	CertificateCache func() (cache.Cache, error)
}

// SetupWithManager registers the controller: it reconciles NginxOperator
// objects and owns their children, so a deleted or edited child is restored.
func SetupWithManager(mgr ctrl.Manager, s Setup) error {
	r := &Reconciler{Deps: k8sutil.NewDeps(mgr), Images: s.Images, Operator: s.Operator, Grants: s.Grants, Routes: s.Routes}
	if s.CertificateCache != nil {
		r.certificates = &certificateAPI{mgr: mgr, newCache: s.CertificateCache}
	}
	registerMetrics()
	b, err := r.watchReferences(mgr, s.References, ctrl.NewControllerManagedBy(mgr))
	if err != nil {
		return err
	}
	if s.PodConfig != nil {
		r.Prober = prober.New(s.PodConfig)
		if err := mgr.Add(r.Prober); err != nil {
			return err
		}
		b = b.WatchesRawSource(source.Channel(r.Prober.Events(), &handler.EnqueueRequestForObject{}))
	}
	if s.Grants != nil {
		b = b.Watches(s.Grants.Watched(), handler.EnqueueRequestsFromMapFunc(r.instancesSendingInto))
	}
	if s.Routes != nil {
		b = b.WatchesRawSource(source.Channel(s.Routes.Events(), &handler.EnqueueRequestForObject{}))
	}
	c, err := b.
		Named(ControllerName).
		// The controller's own status writes would wake it once more each:
		// only a spec change (generation), a deletion, or a change of the
		// metadata (how users ask for a fresh look, kubectl annotate) does.
		For(&v1beta1.NginxOperator{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&networkingv1.NetworkPolicy{}).
		// The pods' owner is the StatefulSet, not the instance: they are
		// mapped by their instance label, and only changes the status reads
		// (nginx's container state, the configuration a pod runs) wake it.
		Watches(&corev1.Pod{}, r.podHandler(), builder.WithPredicates(podStatusChanged())).
		// A new instance's reconcile waits on about seven API round trips
		// in a row; with 4 workers, 1,000 new instances converged 15%
		// slower than with 8 (test/bench), the CPU being the apiserver's.
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		Build(metrics.Instrument(ControllerName, &k8sutil.StatusReconciler[*v1beta1.NginxOperator]{
			Client: r.Client,
			New:    func() *v1beta1.NginxOperator { return &v1beta1.NginxOperator{} },
			Forget: r.forget,
			Sync:   r.sync,
		}))
	if err != nil {
		return err
	}
	if r.certificates != nil {
		r.certificates.watch = c.Watch
	}
	return nil
}

// sync brings one instance's children in line with its spec, observes
// them, and sets the status from what it observed in one place
// (setStatus); the shared loop (k8sutil.StatusReconciler) writes the
// status, once and only when it changed, and classifies the error.
func (r *Reconciler) sync(ctx context.Context, nginx *v1beta1.NginxOperator) (ctrl.Result, error) {
	defer updateMetrics(nginx)
	if nginx.Spec.Paused {
		setPaused(nginx)
		return ctrl.Result{}, nil
	}
	if r.awaitingRoutes(nginx) {
		// Its Gateway's servers come with the Gateway controller's next
		// reconcile (routetable); until then it stays as it is, and one
		// never rendered says why.
		if nginx.Status.ConfigHash == "" {
			setAwaitingRoutes(nginx)
		}
		return ctrl.Result{}, nil
	}
	// A Certificate cert-manager has yet to issue, or one it cannot, does
	// not stop the rest: the instance serves what it can.
	certificates, certResult, certErr := r.syncCertificates(ctx, nginx)
	if certErr != nil && asksForCertificates(nginx) {
		// The condition says what stopped the Certificates, rather than
		// leaving an instance that asks for them without a word.
		certificates = &certificateReport{metav1.ConditionFalse, k8sutil.ReasonOf(certErr, ReasonCertificateNotReady), certErr.Error()}
	}
	p, sts, result, err := r.apply(ctx, nginx)
	if err == nil {
		err = certErr
	}
	result.RequeueAfter = sooner(result.RequeueAfter, certResult.RequeueAfter)
	o := observed{plan: p, err: err, sts: sts, pods: r.pods(ctx, nginx, sts), certificates: certificates}
	if err == nil {
		o.configs = r.podConfigs(nginx, sts, o.pods, p.inputs, nginx.Status.ConfigHash)
		o.restoreFailure = r.restoreFailure(ctx, nginx, sts)
	}
	wasDegradedBy := degradedBy(nginx)
	setStatus(nginx, o)
	r.announce(nginx, wasDegradedBy)
	if err != nil {
		return result, err
	}
	if restoreUnderway(nginx) {
		// A restore init container failing does not change the StatefulSet,
		// so nothing would wake the controller to report it: look again.
		result.RequeueAfter = sooner(result.RequeueAfter, restorePollInterval)
	}
	return result, nil
}

// degradedBy is the reason of the instance's Degraded condition, "" when
// it is not degraded.
func degradedBy(nginx *v1beta1.NginxOperator) string {
	if c := meta.FindStatusCondition(nginx.Status.Conditions, v1beta1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}

// announce sends the warnings the Degraded condition alone would not bring
// to kubectl's attention, once per transition from wasDegradedBy (the name
// conflict is retried every k8sutil.ReferenceRetry).
func (r *Reconciler) announce(nginx *v1beta1.NginxOperator, wasDegradedBy string) {
	c := meta.FindStatusCondition(nginx.Status.Conditions, v1beta1.ConditionDegraded)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason == wasDegradedBy {
		return
	}
	switch c.Reason {
	case ReasonConfigRejected:
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonConfigRejected, "Reload", "%s", c.Message)
	case ReasonNameConflict:
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonNameConflict, "Apply", "%s", c.Message)
	}
}

// forget drops what the controller keeps of a deleted instance: its metrics,
// its pods in the prober, its endpoint pacing and a push key generated for
// it.
func (r *Reconciler) forget(key types.NamespacedName) {
	forgetMetrics(key.Namespace, key.Name)
	if r.Prober != nil {
		r.Prober.Forget(key)
	}
	if r.endpointsPacer != nil {
		r.endpointsPacer.forget(key)
	}
	r.routedReferences.forget(key)
	r.newPushKeys.Delete(key)
}

// sooner is the shorter of two requeue delays, 0 being none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// pods are the instance's pods from the cache, nil without a StatefulSet or
// when the cache cannot list them (the status then reports no pod problem).
func (r *Reconciler) pods(ctx context.Context, nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet) []corev1.Pod {
	if sts == nil {
		return nil
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(nginx.Namespace), client.MatchingLabels(selector(nginx))); err != nil {
		return nil
	}
	return pods.Items
}

// podInstance maps a pod of an instance's StatefulSet to the instance; other
// pods the operator manages (backup Jobs') map to nothing.
func podInstance(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	owner := metav1.GetControllerOf(obj)
	if l[naming.LabelComponent] != layout.Component || l[naming.LabelInstance] == "" || owner == nil || owner.Kind != "StatefulSet" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[naming.LabelInstance]}}}
}

// podHandler wakes a pod's instance (podInstance) and, with a prober, shows
// the prober the pod at once (Prober.Spot, Prober.Drop).
func (r *Reconciler) podHandler() handler.EventHandler {
	enqueue := handler.EnqueueRequestsFromMapFunc(podInstance)
	if r.Prober == nil {
		return enqueue
	}
	spot := func(ctx context.Context, obj client.Object) {
		pod, ok := obj.(*corev1.Pod)
		if requests := podInstance(ctx, obj); ok && len(requests) == 1 {
			r.Prober.Spot(requests[0].NamespacedName, pod)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			spot(ctx, e.Object)
			enqueue.Create(ctx, e, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			spot(ctx, e.ObjectNew)
			enqueue.Update(ctx, e, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.Prober.Drop(client.ObjectKeyFromObject(e.Object))
			enqueue.Delete(ctx, e, q)
		},
		GenericFunc: enqueue.Generic,
	}
}

// podStatusChanged passes pod creations and deletions, and updates that
// change what observe reads: its IP (where its reloader answers), its
// deletion or its containers' states, and the operator's nudge after a new
// configuration (layout.ConfigHashAnnotation), so the pods' reloaders are read
// soon after it.
func podStatusChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Pod)
		n, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return true
		}
		return !maps.Equal(prober.SyncAnnotations(o), prober.SyncAnnotations(n)) ||
			o.Status.PodIP != n.Status.PodIP ||
			o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() ||
			!equality.Semantic.DeepEqual(o.Status.ContainerStatuses, n.Status.ContainerStatuses)
	}}
}
