package nginx

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// ControllerName labels the controller's metrics and logs.
const ControllerName = "nginxoperator"

// referencesRecheckInterval is how often an instance with TLS or proxy
// locations reads its TLS Secrets and proxied Services again (they are not
// in the cache): a rotated certificate then reaches the pods at once (see
// TLSHashAnnotation; the kubelet's own periodic sync brings it within about
// a minute anyway), and a Service that moved makes nginx resolve it again
// (see layout.ServicesFile), which nothing else would.
const referencesRecheckInterval = time.Minute

// Polling the pods' reloaders: soon while some pod answered with an older
// configuration (its volume is about to change), seldom while a pod does
// not answer at all.
const (
	reloadPollInterval      = 2 * time.Second
	unreachablePollInterval = 30 * time.Second
)

// recreateRetry is how soon an instance whose StatefulSet is being replaced
// looks again.
const recreateRetry = 2 * time.Second

// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators,verbs=list;watch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch

// Reconciler reconciles NginxOperator objects.
type Reconciler struct {
	k8sutil.Deps
	// Images are the operator's default nginx image and its exporter image.
	Images Images
	// PodConfig reads what each pod's reloader serves; nil reports no
	// status.loadedReplicas (--read-pod-status=false).
	PodConfig PodConfigReader
}

// Images are the images the operator deploys: nginx for instances that do not
// name one (--nginx-image), the nginx-prometheus-exporter sidecar of
// instances with spec.metrics.enabled (--exporter-image), the backup agent
// that restores spec.restore (--agent-image; empty refuses restores) and
// the image the nginx-reloader is copied from (--reloader-image).
type Images struct {
	Nginx, Exporter, Agent, Reloader string
}

// SetupWithManager registers the controller: it reconciles NginxOperator
// objects and owns their children, so a deleted or edited child is restored.
func SetupWithManager(mgr ctrl.Manager, images Images, podConfig PodConfigReader) error {
	r := &Reconciler{Deps: k8sutil.NewDeps(mgr), Images: images, PodConfig: podConfig}
	registerMetrics()
	return ctrl.NewControllerManagedBy(mgr).
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
		// The pods' owner is the StatefulSet, not the instance: they are
		// mapped by their instance label, and only changes the status reads
		// (nginx's container state, the configuration a pod runs) wake it.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podInstance), builder.WithPredicates(podStatusChanged())).
		// A new instance's reconcile waits on about seven API round trips
		// in a row; with 4 workers, 1,000 new instances converged 15%
		// slower than with 8 (test/bench), the CPU being the apiserver's.
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		Complete(metrics.Instrument(ControllerName, &k8sutil.StatusReconciler[*v1beta1.NginxOperator]{
			Client: r.Client,
			New:    func() *v1beta1.NginxOperator { return &v1beta1.NginxOperator{} },
			Forget: func(key types.NamespacedName) { forgetMetrics(key.Namespace, key.Name) },
			Sync:   r.sync,
		}))
}

// sync brings one instance's children in line with its spec and sets the
// status to what it observed; the shared loop (k8sutil.StatusReconciler)
// writes the status and classifies the error.
func (r *Reconciler) sync(ctx context.Context, nginx *v1beta1.NginxOperator) (ctrl.Result, error) {
	defer updateMetrics(nginx)
	if nginx.Spec.Paused {
		setPaused(nginx)
		return ctrl.Result{}, nil
	}
	sts, result, err := r.apply(ctx, nginx)
	before := meta.FindStatusCondition(nginx.Status.Conditions, v1beta1.ConditionDegraded)
	wasDegradedBy := ""
	if before != nil && before.Status == metav1.ConditionTrue {
		wasDegradedBy = before.Reason
	}
	pods := r.pods(ctx, nginx, sts)
	var configs podConfigs
	if err == nil {
		configs = readPodConfigs(ctx, r.PodConfig, pods, nginx.Status.ConfigHash)
	}
	observe(nginx, sts, pods, configs, err)
	// Warnings the condition alone would not bring to kubectl's attention,
	// once per transition (the name conflict is retried every
	// k8sutil.ReferenceRetry).
	if c := meta.FindStatusCondition(nginx.Status.Conditions, v1beta1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue && c.Reason != wasDegradedBy {
		switch c.Reason {
		case ReasonConfigRejected:
			r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonConfigRejected, "Reload", "%s", c.Message)
		case ReasonNameConflict:
			r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonNameConflict, "Apply", "%s", c.Message)
		}
	}
	if err != nil {
		return result, err
	}
	r.observeRestore(ctx, nginx, sts)
	if restoreUnderway(nginx) {
		// A restore init container failing does not change the StatefulSet,
		// so nothing would wake the controller to report it: look again.
		result.RequeueAfter = sooner(result.RequeueAfter, restorePollInterval)
	}
	// A pod loading the configuration changes no object: look again.
	switch {
	case len(configs.behind) > 0:
		result.RequeueAfter = sooner(result.RequeueAfter, reloadPollInterval)
	case len(configs.unreachable) > 0:
		result.RequeueAfter = sooner(result.RequeueAfter, unreachablePollInterval)
	}
	return result, nil
}

// sooner is the shorter of two requeue delays, 0 being none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
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
	if l[k8sutil.LabelComponent] != layout.Component || l[k8sutil.LabelInstance] == "" || owner == nil || owner.Kind != "StatefulSet" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[k8sutil.LabelInstance]}}}
}

// podStatusChanged passes pod creations and deletions, and updates that
// change what observe reads: its IP (where its reloader answers), its
// deletion or its containers' states, and the operator's nudge after a new
// configuration (ConfigHashAnnotation), so the pods' reloaders are read
// soon after it.
func podStatusChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Pod)
		n, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return true
		}
		return !maps.Equal(podSyncAnnotations(o), podSyncAnnotations(n)) ||
			o.Status.PodIP != n.Status.PodIP ||
			o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() ||
			!equality.Semantic.DeepEqual(o.Status.ContainerStatuses, n.Status.ContainerStatuses)
	}}
}

// apply validates the spec, then builds and applies every child. Nothing is
// applied unless the whole spec is valid and every reference resolves; no
// object this instance does not control is ever written, and a child whose
// name is taken stops the apply there (NameConflict). It returns the live
// StatefulSet for the status, when there is one.
func (r *Reconciler) apply(ctx context.Context, nginx *v1beta1.NginxOperator) (*appsv1.StatefulSet, ctrl.Result, error) {
	live, err := r.liveStatefulSet(ctx, nginx)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	// Everything below builds from the spec as admission defaults it (the
	// CRD is the one source of defaults and value rules); the status is
	// written to the object as read.
	desired, errs := validation.NginxOperator(ctx, nginx)
	if len(errs) > 0 {
		err := configErrorf("%v", errs.ToAggregate())
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Validate", "%v", err)
		return live, ctrl.Result{}, err
	}
	refs, err := r.checkReferences(ctx, desired)
	if err != nil {
		return live, ctrl.Result{}, err
	}
	ipv6, err := r.servesIPv6(ctx, desired)
	if err != nil {
		return live, ctrl.Result{}, err
	}
	config, err := Render(&desired.Spec, RenderOptions{Paths: PodPaths(), Namespace: nginx.Namespace, IPv6: ipv6})
	if err != nil {
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Render", "%v", err)
		return live, ctrl.Result{}, err
	}
	image := desired.Spec.Image
	if image == "" {
		image = r.Images.Nginx
	}
	in := Inputs{Config: config, ConfigHash: reloader.ConfigHash(config), Image: image, ExporterImage: r.Images.Exporter, ReloaderImage: r.Images.Reloader, TLSHash: refs.tlsHash, Services: refs.services}
	if in.Restore, err = r.restoreInit(ctx, desired); err != nil {
		return live, ctrl.Result{}, err
	}
	nginx.Status.ConfigHash = in.ConfigHash

	sts := StatefulSet(desired, in)
	// The StatefulSet comes last: should a child's name be taken (see
	// Applier.ApplyOwned), no pod starts without the rest.
	children := []client.Object{
		ServiceAccount(desired),
		ConfigSecret(desired, in),
		HeadlessService(desired),
		Service(desired),
	}
	pdb := PodDisruptionBudget(desired)
	if pdb != nil {
		children = append(children, pdb)
	}
	children = append(children, sts)
	if live != nil && (!live.DeletionTimestamp.IsZero() || claimTemplatesDiffer(sts, live)) {
		return live, ctrl.Result{RequeueAfter: recreateRetry}, r.recreateStatefulSet(ctx, nginx, live)
	}
	if pdb == nil {
		if err := r.deletePDB(ctx, nginx); err != nil {
			return live, ctrl.Result{}, err
		}
	}
	configChanged := false
	for _, child := range children {
		outcome, err := r.applyChild(ctx, nginx, child)
		if err != nil {
			return live, ctrl.Result{}, err
		}
		if _, ok := child.(*corev1.Secret); ok && outcome == k8sutil.Updated {
			configChanged = true
		}
	}
	if configChanged {
		if err := r.nudgePods(ctx, nginx, in); err != nil {
			return live, ctrl.Result{}, err
		}
	}
	live, err = r.liveStatefulSet(ctx, nginx)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if rolledOut(live) && live.Spec.Template.Annotations[PodTemplateAnnotation] == PodTemplateVersion {
		if err := r.deleteLegacyConfigs(ctx, nginx); err != nil {
			return live, ctrl.Result{}, err
		}
	}
	result := ctrl.Result{}
	if refs.tlsHash != "" || len(refs.services) > 0 {
		// A rotated certificate or a moved Service changes no object the
		// operator watches.
		result.RequeueAfter = referencesRecheckInterval
	}
	return live, result, nil
}

// applyChild applies child as the instance's. A child the apiserver refuses
// as invalid is a spec error the validation did not foresee, not worth
// retrying.
func (r *Reconciler) applyChild(ctx context.Context, nginx *v1beta1.NginxOperator, child client.Object) (k8sutil.Outcome, error) {
	outcome, err := r.Applier.ApplyOwned(ctx, r.Recorder, nginx, child)
	if apierrors.IsInvalid(err) {
		return outcome, configErrorf("%v", err)
	}
	return outcome, err
}

// nudgePods sets the new configuration's annotations on every pod of the
// instance after the config Secret changed: the kubelet syncs a pod when
// it changes, and refreshes its Secret volumes then, so the reloaders see
// the new files within seconds rather than at the kubelet's next periodic
// sync (up to about a minute and a half). One patch per pod and change;
// nothing on resync. A pod created after the change mounts the new content
// anyway, and one the operator misses (it stopped in between) gets the
// files at the periodic sync.
func (r *Reconciler) nudgePods(ctx context.Context, nginx *v1beta1.NginxOperator, in Inputs) error {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(nginx.Namespace), client.MatchingLabels(selector(nginx))); err != nil {
		return err
	}
	want := syncAnnotations(in)
	annotations := map[string]any{}
	for _, key := range syncAnnotationKeys {
		annotations[key] = nil // removed unless wanted
		if v, ok := want[key]; ok {
			annotations[key] = v
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !pod.DeletionTimestamp.IsZero() || maps.Equal(podSyncAnnotations(pod), want) {
			continue
		}
		if err := r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return &k8sutil.ApplyError{Err: err}
		}
	}
	return nil
}

// podSyncAnnotations are pod's annotations of syncAnnotations' keys.
func podSyncAnnotations(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, key := range syncAnnotationKeys {
		if v, ok := pod.Annotations[key]; ok {
			out[key] = v
		}
	}
	return out
}

// claimTemplatesDiffer tells whether the StatefulSet's volumeClaimTemplates,
// which the apiserver refuses to change, differ from the desired ones.
func claimTemplatesDiffer(desired, live *appsv1.StatefulSet) bool {
	d, l := desired.Spec.VolumeClaimTemplates, live.Spec.VolumeClaimTemplates
	if len(d) != len(l) {
		return true
	}
	for i := range d {
		ds, ls := d[i].Spec, l[i].Spec
		if d[i].Name != l[i].Name || !slices.Equal(ds.AccessModes, ls.AccessModes) ||
			ptr.Deref(ds.StorageClassName, "") != ptr.Deref(ls.StorageClassName, "") && ds.StorageClassName != nil ||
			ds.Resources.Requests.Storage().Cmp(*ls.Resources.Requests.Storage()) != 0 {
			return true
		}
	}
	return false
}

// recreateStatefulSet deletes the StatefulSet but not its pods or claims, so
// the next reconcile creates it with the new volumeClaimTemplates and adopts
// the running pods: they keep serving throughout. Existing claims keep their
// size and class; replicas created from then on get the new template.
func (r *Reconciler) recreateStatefulSet(ctx context.Context, nginx *v1beta1.NginxOperator, live *appsv1.StatefulSet) error {
	if !live.DeletionTimestamp.IsZero() {
		return nil // being deleted: wait for it to go
	}
	err := r.Client.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationOrphan), client.Preconditions{UID: &live.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return &k8sutil.ApplyError{Err: err}
	}
	r.Recorder.Eventf(nginx, live, corev1.EventTypeNormal, ReasonRecreating, "Recreate",
		"content.volumeClaimTemplate changed, which a StatefulSet cannot: recreating StatefulSet %s; its pods keep running and existing claims keep their size and class", live.Name)
	return nil
}

// rolledOut is true when every replica of sts runs its current template.
func rolledOut(sts *appsv1.StatefulSet) bool {
	if sts == nil {
		return false
	}
	st := sts.Status
	desired := ptr.Deref(sts.Spec.Replicas, 1)
	return st.ObservedGeneration >= sts.Generation && st.UpdatedReplicas == st.Replicas && st.Replicas == desired &&
		(st.UpdateRevision == "" || st.CurrentRevision == st.UpdateRevision)
}

// deleteLegacyConfigs deletes the per-configuration Secrets
// (<name>-config-<hash>) of operators before the reloader, once no pod
// mounts them any more: every replica runs the current pod template. The
// Secrets are read from the cache, selected by the instance's labels.
func (r *Reconciler) deleteLegacyConfigs(ctx context.Context, nginx *v1beta1.NginxOperator) error {
	var secrets corev1.SecretList
	if err := r.Client.List(ctx, &secrets, client.InNamespace(nginx.Namespace), client.MatchingLabels(selector(nginx))); err != nil {
		return err
	}
	names := NamesFor(nginx.Name)
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if !strings.HasPrefix(s.Name, names.ConfigSecretPrefix) || !metav1.IsControlledBy(s, nginx) {
			continue
		}
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
			return &k8sutil.ApplyError{Err: err}
		}
	}
	return nil
}

// deletePDB removes a PodDisruptionBudget the spec no longer asks for.
func (r *Reconciler) deletePDB(ctx context.Context, nginx *v1beta1.NginxOperator) error {
	var pdb policyv1.PodDisruptionBudget
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: NamesFor(nginx.Name).PodDisruptionBudget}
	if err := r.Client.Get(ctx, key, &pdb); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(&pdb, nginx) {
		return nil
	}
	if err := r.Client.Delete(ctx, &pdb); err != nil && !apierrors.IsNotFound(err) {
		return &k8sutil.ApplyError{Err: err}
	}
	return nil
}

// liveStatefulSet is the instance's StatefulSet from the cache, nil when it
// does not exist (yet).
func (r *Reconciler) liveStatefulSet(ctx context.Context, nginx *v1beta1.NginxOperator) (*appsv1.StatefulSet, error) {
	var sts appsv1.StatefulSet
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: NamesFor(nginx.Name).StatefulSet}
	if err := r.Client.Get(ctx, key, &sts); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return &sts, nil
}

// servesIPv6 tells whether nginx should listen on IPv6: when the cluster
// gave the instance's Service an IPv6 address (read from the cache, which
// holds the operator's Services). Before the Service exists, the spec says
// what it will get where it can: an IPv6 family, or RequireDualStack.
// PreferDualStack depends on the cluster, so on a dual-stack cluster the
// first pods roll once when the Service appears.
func (r *Reconciler) servesIPv6(ctx context.Context, nginx *v1beta1.NginxOperator) (bool, error) {
	var svc corev1.Service
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: NamesFor(nginx.Name).Service}
	if err := r.Client.Get(ctx, key, &svc); err != nil {
		if apierrors.IsNotFound(err) {
			svc := nginx.Spec.Service
			return slices.Contains(svc.IPFamilies, corev1.IPv6Protocol) ||
				ptr.Deref(svc.IPFamilyPolicy, "") == corev1.IPFamilyPolicyRequireDualStack, nil
		}
		return false, err
	}
	return ServesIPv6(&svc), nil
}

// references is what the pods get from the objects the spec names.
type references struct {
	// tlsHash digests the TLS Secrets' content; empty without TLS.
	tlsHash string
	// services is layout.ServicesFile; empty without proxy locations.
	services []byte
}

// checkReferences makes sure every Secret, ConfigMap and Service the spec
// names exists, so a missing one is reported by name rather than as pods
// stuck in ContainerCreating or nginx refusing to start.
func (r *Reconciler) checkReferences(ctx context.Context, nginx *v1beta1.NginxOperator) (references, error) {
	var refs references
	var tls []map[string][]byte
	for _, name := range TLSSecrets(&nginx.Spec) {
		var secret corev1.Secret
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: name}, &secret); err != nil {
			if apierrors.IsNotFound(err) {
				return refs, k8sutil.MissingReference(ReasonSecretNotFound, "TLS Secret %q not found in namespace %s", name, nginx.Namespace)
			}
			return refs, err
		}
		tls = append(tls, map[string][]byte{corev1.TLSCertKey: secret.Data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: secret.Data[corev1.TLSPrivateKeyKey]})
	}
	// nginx resolves proxied Services when it starts and refuses to start
	// when one does not resolve: wait for them rather than crash-loop the pods.
	for _, svc := range proxiedServices(&nginx.Spec) {
		var service corev1.Service
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: svc}, &service); err != nil {
			if apierrors.IsNotFound(err) {
				return refs, k8sutil.MissingReference(ReasonServiceNotFound, "proxied Service %q not found in namespace %s", svc, nginx.Namespace)
			}
			return refs, err
		}
		refs.services = append(refs.services, svc+" "+serviceAddress(&service)+"\n"...)
	}
	// The pods mount the htpasswd files: without the Secret they never
	// start; without the key nginx answers every request with 500.
	for _, a := range BasicAuths(&nginx.Spec) {
		var secret corev1.Secret
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: a.SecretName}, &secret); err != nil {
			if apierrors.IsNotFound(err) {
				return refs, k8sutil.MissingReference(ReasonSecretNotFound, "basic auth Secret %q not found in namespace %s", a.SecretName, nginx.Namespace)
			}
			return refs, err
		}
		if _, ok := secret.Data[a.Key]; !ok {
			return refs, k8sutil.MissingReference(ReasonSecretNotFound, "basic auth Secret %q has no key %q", a.SecretName, a.Key)
		}
	}
	// The pods mount the CA certificates: without one they never start.
	for _, ref := range CACertificates(&nginx.Spec) {
		var obj client.Object = &corev1.ConfigMap{}
		reason := ReasonConfigMapNotFound
		if ref.Kind == "Secret" {
			obj, reason = &corev1.Secret{}, ReasonSecretNotFound
		}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: ref.Name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return refs, k8sutil.MissingReference(reason, "CA certificate %s %q not found in namespace %s", ref.Kind, ref.Name, nginx.Namespace)
			}
			return refs, err
		}
	}
	for _, cm := range nginx.Spec.Content.ConfigMaps {
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: cm.Name}, &corev1.ConfigMap{}); err != nil {
			if apierrors.IsNotFound(err) {
				return refs, k8sutil.MissingReference(ReasonConfigMapNotFound, "content ConfigMap %q not found in namespace %s", cm.Name, nginx.Namespace)
			}
			return refs, err
		}
	}
	if len(tls) > 0 {
		refs.tlsHash = k8sutil.Hash(tls)[:16]
	}
	return refs, nil
}

// proxiedServices are the distinct Services the locations proxy to; a
// backend with weight 0 is not in nginx.conf and need not exist.
func proxiedServices(spec *v1beta1.NginxOperatorSpec) []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, s := range spec.Config.Servers {
		for _, l := range s.Locations {
			if l.Proxy == nil {
				continue
			}
			add(l.Proxy.Service)
			for _, b := range l.Proxy.Backends {
				if b.Weight == nil || *b.Weight > 0 {
					add(b.Service)
				}
			}
		}
	}
	return out
}
