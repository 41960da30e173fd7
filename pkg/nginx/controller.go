package nginx

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
)

// ControllerName labels the controller's metrics and logs.
const ControllerName = "nginxoperator"

// missingReferenceRetry is how often an instance waiting for a Secret or
// ConfigMap it references looks again. The operator does not watch (and so
// does not cache) every Secret of the cluster to be told.
const missingReferenceRetry = 15 * time.Second

// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators,verbs=list;watch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list

// Reconciler reconciles NginxOperator objects.
type Reconciler struct {
	// Client reads from the cache (the instance and its children) and writes.
	Client client.Client
	// APIReader reads referenced Secrets and ConfigMaps directly: they are
	// the users' objects and not in the operator's cache.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  recorder.EventRecorder
	Applier   *k8sutil.Applier
	// Images are the operator's default nginx image and its exporter image.
	Images Images
	// Restore builds the restore init container of instances with
	// spec.restore; nil refuses such instances.
	Restore RestoreBuilder
}

// RestoreBuilder makes the init container (and the extra volumes it needs)
// that seeds the content volume, mounted as content, from run id of an
// NginxBackup. pkg/backup provides it: its builders import this package for
// the instance's names, so this package cannot import them.
type RestoreBuilder func(backup *v1beta1.NginxBackup, id string, content corev1.VolumeMount) (corev1.Container, []corev1.Volume)

// Images are the images the operator deploys: nginx for instances that do not
// name one (--nginx-image), and the nginx-prometheus-exporter sidecar of
// instances with spec.metrics.enabled (--exporter-image).
type Images struct {
	Nginx, Exporter string
}

// SetupWithManager registers the controller: it reconciles NginxOperator
// objects and owns their children, so a deleted or edited child is restored.
func SetupWithManager(mgr ctrl.Manager, images Images, restore RestoreBuilder) error {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("nginx-operator"),
		Applier:   &k8sutil.Applier{Client: mgr.GetClient(), Reader: mgr.GetClient(), Scheme: mgr.GetScheme()},
		Images:    images,
		Restore:   restore,
	}
	registerMetrics()
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1beta1.NginxOperator{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(metrics.Instrument(ControllerName, r))
}

// Reconcile brings one instance's children in line with its spec and reports
// what it observed in the status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var nginx v1beta1.NginxOperator
	if err := r.Client.Get(ctx, req.NamespacedName, &nginx); err != nil {
		// Deleted: the children go with it through their owner references.
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !nginx.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := nginx.Status.DeepCopy()
	defer func() { updateMetrics(&nginx) }()

	if nginx.Spec.Paused {
		setPaused(&nginx)
		return ctrl.Result{}, r.writeStatus(ctx, &nginx, before)
	}

	sts, result, err := r.apply(ctx, &nginx)
	observe(&nginx, sts, err)
	if err == nil {
		r.observeRestore(ctx, &nginx, sts)
	}
	if statusErr := r.writeStatus(ctx, &nginx, before); statusErr != nil {
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	var userErr *referenceError
	var cfgErr *ConfigError
	switch {
	case errors.As(err, &userErr):
		// The user must create the object; look again later without an error
		// backoff storm. Degraded says what is missing.
		logger.Info("waiting for a referenced object", "reason", userErr.reason, "detail", userErr.Error())
		return ctrl.Result{RequeueAfter: missingReferenceRetry}, nil
	case errors.As(err, &cfgErr):
		// Retrying cannot help until the spec changes, which triggers a reconcile.
		return ctrl.Result{}, nil
	}
	if err == nil && restoreUnderway(&nginx) {
		// A restore init container failing does not change the StatefulSet,
		// so nothing would wake the controller to report it: look again.
		result.RequeueAfter = restorePollInterval
	}
	return result, err
}

// apply builds and applies every child. It returns the live StatefulSet for
// the status, when there is one.
func (r *Reconciler) apply(ctx context.Context, nginx *v1beta1.NginxOperator) (*appsv1.StatefulSet, ctrl.Result, error) {
	if err := r.checkReferences(ctx, nginx); err != nil {
		return r.liveStatefulSet(ctx, nginx), ctrl.Result{}, err
	}
	config, err := Render(&nginx.Spec, RenderOptions{Paths: PodPaths(), Namespace: nginx.Namespace})
	if err != nil {
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Render", "%v", err)
		return r.liveStatefulSet(ctx, nginx), ctrl.Result{}, err
	}
	image := nginx.Spec.Image
	if image == "" {
		image = r.Images.Nginx
	}
	in := Inputs{Config: config, ConfigHash: k8sutil.Hash(string(config))[:16], Image: image, ExporterImage: r.Images.Exporter}
	if in.Restore, err = r.restoreInit(ctx, nginx); err != nil {
		return r.liveStatefulSet(ctx, nginx), ctrl.Result{}, err
	}
	nginx.Status.ConfigHash = in.ConfigHash

	children := []client.Object{
		ServiceAccount(nginx),
		ConfigSecret(nginx, in),
		HeadlessService(nginx),
		Service(nginx),
		StatefulSet(nginx, in),
	}
	if pdb := PodDisruptionBudget(nginx); pdb != nil {
		children = append(children, pdb)
	} else if err := r.deletePDB(ctx, nginx); err != nil {
		return nil, ctrl.Result{}, err
	}
	for _, child := range children {
		if err := k8sutil.SetOwner(nginx, child, r.Scheme); err != nil {
			return nil, ctrl.Result{}, &applyError{err: err}
		}
		outcome, err := r.Applier.Apply(ctx, child)
		if err != nil {
			r.Recorder.Eventf(nginx, child, corev1.EventTypeWarning, ReasonApplyFailed, "Apply", "%v", err)
			return r.liveStatefulSet(ctx, nginx), ctrl.Result{}, &applyError{err: err}
		}
		if outcome != k8sutil.Unchanged {
			gvk, _ := apiutil.GVKForObject(child, r.Scheme)
			r.Recorder.Eventf(nginx, child, corev1.EventTypeNormal, string(outcome), "Apply", "%s %s %s", outcome, gvk.Kind, child.GetName())
		}
	}
	return r.liveStatefulSet(ctx, nginx), ctrl.Result{}, nil
}

// deletePDB removes a PodDisruptionBudget the spec no longer asks for.
func (r *Reconciler) deletePDB(ctx context.Context, nginx *v1beta1.NginxOperator) error {
	var pdb policyv1.PodDisruptionBudget
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: NamesFor(nginx.Name).PodDisruptionBudget}
	if err := r.Client.Get(ctx, key, &pdb); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !isOwnedBy(&pdb, nginx) {
		return nil
	}
	if err := r.Client.Delete(ctx, &pdb); err != nil && !apierrors.IsNotFound(err) {
		return &applyError{err: err}
	}
	return nil
}

func isOwnedBy(obj client.Object, owner client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

func (r *Reconciler) liveStatefulSet(ctx context.Context, nginx *v1beta1.NginxOperator) *appsv1.StatefulSet {
	var sts appsv1.StatefulSet
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: NamesFor(nginx.Name).StatefulSet}
	if err := r.Client.Get(ctx, key, &sts); err != nil {
		return nil
	}
	return &sts
}

// checkReferences makes sure every Secret and ConfigMap the spec names exists,
// so a missing one is reported by name rather than as pods stuck in
// ContainerCreating.
func (r *Reconciler) checkReferences(ctx context.Context, nginx *v1beta1.NginxOperator) error {
	for _, name := range TLSSecrets(&nginx.Spec) {
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: name}, &corev1.Secret{}); err != nil {
			if apierrors.IsNotFound(err) {
				return &referenceError{reason: ReasonSecretNotFound, msg: fmt.Sprintf("TLS Secret %q not found in namespace %s", name, nginx.Namespace)}
			}
			return err
		}
	}
	// nginx resolves proxied Services when it starts and refuses to start
	// when one does not resolve: wait for them rather than crash-loop the pods.
	for _, svc := range proxiedServices(&nginx.Spec) {
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: svc}, &corev1.Service{}); err != nil {
			if apierrors.IsNotFound(err) {
				return &referenceError{reason: ReasonServiceNotFound, msg: fmt.Sprintf("proxied Service %q not found in namespace %s", svc, nginx.Namespace)}
			}
			return err
		}
	}
	for _, cm := range nginx.Spec.Content.ConfigMaps {
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: cm.Name}, &corev1.ConfigMap{}); err != nil {
			if apierrors.IsNotFound(err) {
				return &referenceError{reason: ReasonConfigMapNotFound, msg: fmt.Sprintf("content ConfigMap %q not found in namespace %s", cm.Name, nginx.Namespace)}
			}
			return err
		}
	}
	return nil
}

// proxiedServices are the distinct Services the locations proxy to.
func proxiedServices(spec *v1beta1.NginxOperatorSpec) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range spec.Config.Servers {
		for _, l := range s.Locations {
			if l.Proxy != nil && !seen[l.Proxy.Service] {
				seen[l.Proxy.Service] = true
				out = append(out, l.Proxy.Service)
			}
		}
	}
	return out
}

// writeStatus patches the status subresource only when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, nginx *v1beta1.NginxOperator, before *v1beta1.NginxOperatorStatus) error {
	return k8sutil.PatchStatus(ctx, r.Client, nginx, &v1beta1.NginxOperator{ObjectMeta: nginx.ObjectMeta, Status: *before})
}
