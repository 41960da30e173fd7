package monitor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// ControllerName labels the controller's metrics and logs.
const ControllerName = "nginxmonitor"

// component of the generated Secret's labels.
const component = "scrape-config"

// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxmonitors,verbs=list;watch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxmonitors/status,verbs=patch
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler reconciles NginxMonitor objects.
type Reconciler struct {
	// Deps: the cache holds monitors, instances, namespaces' metadata and
	// the generated Secrets; credentials Secrets are read with APIReader.
	k8sutil.Deps
	// Mapper tells whether the monitoring.coreos.com API is served.
	Mapper meta.RESTMapper
	// ServiceMonitorApplier applies ServiceMonitors, reading the live object
	// from the API: the cache holds no ServiceMonitors, since the operator
	// cannot watch a kind that may not exist.
	ServiceMonitorApplier *k8sutil.Applier
}

// SetupWithManager registers the controller. Besides its own objects and the
// Secrets it owns, it watches NginxOperator objects (an instance added,
// removed or relabelled changes the selection) and the metadata of Namespaces
// (a namespace relabelled changes a labelSelector's selection).
func SetupWithManager(mgr ctrl.Manager) error {
	if err := AddServiceMonitorToScheme(mgr.GetScheme()); err != nil {
		return err
	}
	r := &Reconciler{
		Deps:                  k8sutil.NewDeps(mgr),
		Mapper:                mgr.GetRESTMapper(),
		ServiceMonitorApplier: &k8sutil.Applier{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: mgr.GetScheme()},
	}
	registerMetrics()
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1beta1.NginxMonitor{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Secret{}).
		Watches(&v1beta1.NginxOperator{}, handler.EnqueueRequestsFromMapFunc(r.monitorsFor),
			builder.WithPredicates(instanceChanged())).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.monitorsWithNamespaceSelector),
			builder.OnlyMetadata, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(metrics.Instrument(ControllerName, &k8sutil.StatusReconciler[*v1beta1.NginxMonitor]{
			Client: r.Client,
			New:    func() *v1beta1.NginxMonitor { return &v1beta1.NginxMonitor{} },
			Forget: func(key types.NamespacedName) { forgetTargets(key.Namespace, key.Name) },
			Sync:   r.sync,
		}))
}

// instanceChanged passes what can change a selection or a scrape
// configuration: creation, deletion, labels, metrics on/off, and the ready
// replica count that nginx_operator_monitor_targets reports.
func instanceChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*v1beta1.NginxOperator)
			n, ok2 := e.ObjectNew.(*v1beta1.NginxOperator)
			if !ok1 || !ok2 {
				return true
			}
			return !labels.Equals(o.Labels, n.Labels) || o.Spec.Metrics.Enabled != n.Spec.Metrics.Enabled ||
				o.Status.Replicas != n.Status.Replicas || o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero()
		},
	}
}

// monitorsFor maps an instance to every monitor that might select it: the
// selection is recomputed by the reconcile, so over-approximating is safe and
// a removed or relabelled instance is dropped by the monitors that had it.
func (r *Reconciler) monitorsFor(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1beta1.NginxMonitorList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing NginxMonitors for an instance change")
		return nil
	}
	var out []reconcile.Request
	for _, m := range list.Items {
		ns := m.Spec.NamespaceSelector
		relevant := ns.Any || ns.LabelSelector != nil ||
			(len(ns.MatchNames) == 0 && m.Namespace == obj.GetNamespace()) || slices.Contains(ns.MatchNames, obj.GetNamespace())
		if relevant {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
		}
	}
	return out
}

// monitorsWithNamespaceSelector maps a namespace whose labels changed to the
// monitors selecting namespaces by label.
func (r *Reconciler) monitorsWithNamespaceSelector(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1beta1.NginxMonitorList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing NginxMonitors for a namespace change")
		return nil
	}
	var out []reconcile.Request
	for _, m := range list.Items {
		if m.Spec.NamespaceSelector.LabelSelector != nil {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
		}
	}
	return out
}

// sync selects the monitor's instances, writes its scrape configuration
// Secret (and ServiceMonitor) and sets the status from what it saw
// (statusFor); the shared loop (k8sutil.StatusReconciler) writes the status
// and classifies the error.
func (r *Reconciler) sync(ctx context.Context, mon *v1beta1.NginxMonitor) (ctrl.Result, error) {
	before := mon.Status.DeepCopy()
	o := r.observe(ctx, mon, before)
	statusFor(mon, o)
	r.recordTransitions(mon, before)
	if o.selection != nil {
		setTargets(mon.Namespace, mon.Name, o.selection.Targets())
	}
	return ctrl.Result{}, o.err()
}

// observe selects the instances and applies the Secret and the
// ServiceMonitor, stopping at the first step that fails. An invalid spec
// leaves the previous Secret as it was: an invalid edit never turns a
// working configuration into a broken one.
func (r *Reconciler) observe(ctx context.Context, mon *v1beta1.NginxMonitor, before *v1beta1.NginxMonitorStatus) observation {
	var o observation
	// Everything below builds from the monitor as admission defaults it: the
	// CRD is the one source of the endpoint's defaults.
	mon, errs := validation.NginxMonitor(ctx, mon)
	if len(errs) > 0 {
		o.invalid = specErrorf("%v", errs.ToAggregate())
		return o
	}
	sel, err := selectorOf(mon)
	if err == nil {
		err = Validate(&mon.Spec)
	}
	if err != nil {
		o.invalid = err
		return o
	}
	selection, err := r.selectInstances(ctx, mon, sel)
	if err != nil {
		o.failed = err
		return o
	}
	o.selection = &selection
	creds, err := r.credentials(ctx, mon)
	if err != nil {
		o.failed = err
		return o
	}
	data, err := Build(mon, selection, creds, Options{})
	if err != nil {
		o.invalid = err
		return o
	}
	secret := ScrapeConfigSecret(mon, data)
	if _, err := r.Applier.ApplyOwned(ctx, r.Recorder, mon, secret); err != nil {
		o.applyFailed = err
		return o
	}
	o.secret = secret.Name
	o.serviceMonitor, err = r.serviceMonitor(ctx, mon, before, selection)
	if err != nil {
		o.applyFailed = err
	}
	return o
}

// recordTransitions sends an Event for each problem the status newly reports.
func (r *Reconciler) recordTransitions(mon *v1beta1.NginxMonitor, before *v1beta1.NginxMonitorStatus) {
	actions := map[string]string{ReasonInvalidSpec: "Validate", ReasonSecretNotFound: "Resolve", ReasonNoMatchingInstances: "Select", ReasonMetricsNotEnabled: "Select"}
	for _, typ := range []string{v1beta1.ConditionAccepted, v1beta1.ConditionReady} {
		c := meta.FindStatusCondition(mon.Status.Conditions, typ)
		if c == nil || c.Status != metav1.ConditionFalse || k8sutil.HadReason(before.Conditions, typ, c.Reason) {
			continue
		}
		if action, ok := actions[c.Reason]; ok && !(typ == v1beta1.ConditionReady && c.Reason == ReasonInvalidSpec) {
			r.Recorder.Eventf(mon, nil, corev1.EventTypeWarning, c.Reason, action, "%s", c.Message)
		}
	}
}

func selectorOf(mon *v1beta1.NginxMonitor) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(&mon.Spec.Selector)
	if err != nil {
		return nil, specErrorf("spec.selector: %v", err)
	}
	return sel, nil
}

// selectInstances is the monitor's selection: the NginxOperator objects of
// the selected namespaces whose labels match. Instances being deleted are
// left out.
func (r *Reconciler) selectInstances(ctx context.Context, mon *v1beta1.NginxMonitor, sel labels.Selector) (Selection, error) {
	inNamespace, err := r.namespaceFilter(ctx, mon)
	if err != nil {
		return Selection{}, err
	}
	var list v1beta1.NginxOperatorList
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	ns := mon.Spec.NamespaceSelector
	if !ns.Any && len(ns.MatchNames) == 0 && ns.LabelSelector == nil {
		opts = append(opts, client.InNamespace(mon.Namespace))
	}
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		return Selection{}, fmt.Errorf("listing NginxOperators: %w", err)
	}
	var out []Instance
	for i := range list.Items {
		if in := &list.Items[i]; in.DeletionTimestamp.IsZero() && inNamespace(in.Namespace) {
			out = append(out, instanceOf(in))
		}
	}
	return NewSelection(out), nil
}

// namespaceFilter is the monitor's namespace selection as a predicate.
func (r *Reconciler) namespaceFilter(ctx context.Context, mon *v1beta1.NginxMonitor) (func(string) bool, error) {
	ns := mon.Spec.NamespaceSelector
	switch {
	case ns.Any:
		return func(string) bool { return true }, nil
	case len(ns.MatchNames) > 0:
		return func(n string) bool { return slices.Contains(ns.MatchNames, n) }, nil
	case ns.LabelSelector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ns.LabelSelector)
		if err != nil {
			return nil, specErrorf("spec.namespaceSelector.labelSelector: %v", err)
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
		if err := r.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing namespaces: %w", err)
		}
		names := map[string]bool{}
		for _, n := range list.Items {
			names[n.Name] = true
		}
		return func(n string) bool { return names[n] }, nil
	default:
		return func(n string) bool { return n == mon.Namespace }, nil
	}
}

func describeNamespaces(mon *v1beta1.NginxMonitor) string {
	ns := mon.Spec.NamespaceSelector
	switch {
	case ns.Any:
		return "any namespace"
	case len(ns.MatchNames) > 0:
		return "namespaces " + strings.Join(ns.MatchNames, ", ")
	case ns.LabelSelector != nil:
		return "namespaces matching " + metav1.FormatLabelSelector(ns.LabelSelector)
	default:
		return "namespace " + mon.Namespace
	}
}

// credentials reads the basic-auth and TLS Secrets the endpoint names, from
// the monitor's namespace.
func (r *Reconciler) credentials(ctx context.Context, mon *v1beta1.NginxMonitor) (Credentials, error) {
	var c Credentials
	ep := mon.Spec.Endpoint
	read := func(field string, ref *corev1.SecretKeySelector, dst *string) error {
		if ref == nil {
			return nil
		}
		var s corev1.Secret
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: mon.Namespace, Name: ref.Name}, &s)
		if apierrors.IsNotFound(err) {
			if ref.Optional != nil && *ref.Optional {
				return nil
			}
			return k8sutil.MissingReference(ReasonSecretNotFound, "%s: Secret %q not found in namespace %s", field, ref.Name, mon.Namespace)
		}
		if err != nil {
			return err
		}
		v, ok := s.Data[ref.Key]
		if !ok && !(ref.Optional != nil && *ref.Optional) {
			return k8sutil.MissingReference(ReasonSecretNotFound, "%s: Secret %q has no key %q", field, ref.Name, ref.Key)
		}
		*dst = string(v)
		return nil
	}
	if ba := ep.BasicAuth; ba != nil {
		if err := read("endpoint.basicAuth.username", &ba.Username, &c.Username); err != nil {
			return c, err
		}
		if err := read("endpoint.basicAuth.password", &ba.Password, &c.Password); err != nil {
			return c, err
		}
	}
	if t := ep.TLSConfig; t != nil {
		for _, f := range []struct {
			field string
			ref   *corev1.SecretKeySelector
			dst   *string
		}{{"endpoint.tlsConfig.ca", t.CA, &c.CA}, {"endpoint.tlsConfig.cert", t.Cert, &c.Cert}, {"endpoint.tlsConfig.keySecret", t.KeySecret, &c.Key}} {
			if err := read(f.field, f.ref, f.dst); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// SecretName is the name of a monitor's scrape configuration Secret.
func SecretName(monitor string) string {
	return naming.NameWithLimit(naming.MaxNameLength-len("-scrape-config"), monitor) + "-scrape-config"
}

// ScrapeConfigSecret is the Secret holding scrape-configs.yaml, usable as
// prometheus-operator's additionalScrapeConfigs (secret key
// scrape-configs.yaml), and scrape-config-file.yaml, the same entries in the
// form Prometheus' scrape_config_files loads (mount the Secret and list it).
func ScrapeConfigSecret(mon *v1beta1.NginxMonitor, data []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      SecretName(mon.Name),
			Namespace: mon.Namespace,
			Labels:    naming.Labels("nginx-monitor", mon.Name, component),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ScrapeConfigsKey: data, ScrapeConfigFileKey: FileForm(data)},
	}
}

// serviceMonitor applies, for a monitor with serviceMonitor.enabled, a
// ServiceMonitor owned by it when prometheus-operator's API is served.
// Without the API the condition says so and nothing else changes. Disabling
// the field deletes the ServiceMonitor the operator made.
func (r *Reconciler) serviceMonitor(ctx context.Context, mon *v1beta1.NginxMonitor, before *v1beta1.NginxMonitorStatus, selection Selection) (serviceMonitorState, error) {
	if !mon.Spec.ServiceMonitor.Enabled {
		// The status says whether a ServiceMonitor was applied, but the
		// cache may not have that status yet when the switch flips right
		// after the apply (the status patch and the spec update race):
		// the ServiceMonitor stayed. A status that does not describe the
		// current spec is no proof, so then look.
		applied := k8sutil.HadReason(before.Conditions, ConditionServiceMonitor, ReasonServiceMonitorApplied)
		if applied || before.ObservedGeneration != mon.Generation {
			if err := r.deleteServiceMonitor(ctx, mon); err != nil {
				return serviceMonitorUnknown, err
			}
		}
		return serviceMonitorDisabled, nil
	}
	if _, err := r.Mapper.RESTMapping(ServiceMonitorGVK.GroupKind(), ServiceMonitorGVK.Version); err != nil {
		if meta.IsNoMatchError(err) {
			return serviceMonitorAPIMissing, nil
		}
		return serviceMonitorUnknown, err
	}
	obj, err := serviceMonitorApplyObject(BuildServiceMonitor(mon, selection))
	if err != nil {
		return serviceMonitorUnknown, &k8sutil.ApplyError{Err: err}
	}
	if _, err := r.ServiceMonitorApplier.ApplyOwned(ctx, r.Recorder, mon, obj); err != nil {
		return serviceMonitorUnknown, err
	}
	return serviceMonitorApplied, nil
}

// deleteServiceMonitor deletes the monitor's ServiceMonitor if the monitor
// controls it: an object of that name made by someone else is left alone.
func (r *Reconciler) deleteServiceMonitor(ctx context.Context, mon *v1beta1.NginxMonitor) error {
	var sm monitoringv1.ServiceMonitor
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: mon.Namespace, Name: mon.Name}, &sm)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil
	case err != nil:
		return err
	case !metav1.IsControlledBy(&sm, mon):
		return nil
	}
	err = r.Client.Delete(ctx, &sm, client.Preconditions{UID: &sm.UID})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	return err
}
