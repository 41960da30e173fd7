package nginx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// recreateRetry is how soon an instance whose StatefulSet is being replaced
// looks again.
const recreateRetry = 2 * time.Second

// apply makes the instance's children what its plan says. Nothing is
// written unless the whole spec is valid and every reference resolves; once
// the instance runs (its StatefulSet exists), nothing is written either
// unless the API server would accept every child the user's fields reach (a
// dry run), so that a refused edit leaves what serves untouched. No object
// this instance does not control is ever written, and a child whose name is
// taken stops the apply there (NameConflict). It writes no status: it
// returns the plan (nil when planning failed) and the live StatefulSet,
// when there is one, for the status (setStatus).
func (r *Reconciler) apply(ctx context.Context, nginx *v1beta1.NginxOperator) (*plan, *appsv1.StatefulSet, ctrl.Result, error) {
	live, err := r.liveStatefulSet(ctx, nginx)
	if err != nil {
		return nil, nil, ctrl.Result{}, err
	}
	p, err := r.plan(ctx, nginx)
	if err != nil {
		return nil, live, ctrl.Result{}, err
	}
	sts, result, err := r.applyPlan(ctx, nginx, p, live)
	return p, sts, result, err
}

// applyPlan makes the children what p says, given the live StatefulSet.
func (r *Reconciler) applyPlan(ctx context.Context, nginx *v1beta1.NginxOperator, p *plan, live *appsv1.StatefulSet) (*appsv1.StatefulSet, ctrl.Result, error) {
	var err error
	if live != nil && (!live.DeletionTimestamp.IsZero() || claimTemplatesDiffer(p.statefulSet, live)) {
		return live, ctrl.Result{RequeueAfter: recreateRetry}, r.recreateStatefulSet(ctx, nginx, live)
	}
	// Before the StatefulSet exists nothing serves: a new instance is
	// dry-run first only where its spec sets a field the CRD cannot check
	// in full (reachesChildAPIs), so that a refusal writes no child; the
	// common instance, which sets none, is spared two dry runs (a fifth of
	// what creating it costs the API server).
	if live != nil || reachesChildAPIs(&nginx.Spec) {
		if err := r.checkChildren(ctx, nginx, p); err != nil {
			return live, ctrl.Result{}, err
		}
	}
	if err := r.applyChildren(ctx, nginx, p); err != nil {
		return live, ctrl.Result{}, err
	}
	// A StatefulSet written just now is what the API server answered (it
	// has a resourceVersion then): the status reports from it rather than
	// from a cache that has yet to see the write, and so the reconcile the
	// write's own event brings finds nothing new to write.
	if p.written.ResourceVersion != "" {
		live = &p.written
	} else if live, err = r.liveStatefulSet(ctx, nginx); err != nil {
		return nil, ctrl.Result{}, err
	}
	if err := r.deleteLegacyConfigs(ctx, nginx, live); err != nil {
		return live, ctrl.Result{}, err
	}
	return live, ctrl.Result{}, nil
}

// reachesChildAPIs tells whether spec sets a field that reaches a child the
// API server may refuse beyond what the CRD checks (specFields): pod
// settings, resources, image pull Secrets, a volume claim template, a
// NetworkPolicy, a PodDisruptionBudget, or a Service other than a plain
// ClusterIP one. The operator's defaults alone make children the API
// server accepts.
func reachesChildAPIs(spec *v1beta1.NginxOperatorSpec) bool {
	pod := spec.Pod
	pod.TerminationGracePeriodSeconds = 0 // defaulted, and within the CRD's bounds
	svc := spec.Service
	svc.Type = ""
	return !equality.Semantic.DeepEqual(pod, v1beta1.PodSettings{}) || len(spec.ImagePullSecrets) > 0 ||
		!equality.Semantic.DeepEqual(spec.Resources, corev1.ResourceRequirements{}) || spec.Content.VolumeClaimTemplate != nil ||
		spec.NetworkPolicy != nil || spec.PodDisruptionBudget != nil ||
		!equality.Semantic.DeepEqual(svc, v1beta1.ServiceSpec{}) || spec.Service.Type != corev1.ServiceTypeClusterIP && spec.Service.Type != ""
}

// checkChildren dry-runs the plan's checked children, so that a spec the
// API server refuses in one of them changes no child at all. Only a child
// that would change is sent (see Applier.CheckOwned).
func (r *Reconciler) checkChildren(ctx context.Context, nginx *v1beta1.NginxOperator, p *plan) error {
	for _, child := range p.checked {
		if err := r.Applier.CheckOwned(ctx, nginx, child); err != nil {
			return r.refused(nginx, child, err)
		}
	}
	return nil
}

// refused is err, the API server's answer to child: a refusal of its body
// becomes InvalidConfig naming the spec fields behind it (see refusedSpec),
// with a Warning Event, as it is the spec's fault and not worth retrying.
func (r *Reconciler) refused(nginx *v1beta1.NginxOperator, child client.Object, err error) error {
	if !k8sutil.RefusedBody(err) {
		return err
	}
	err = refusedSpec(child, err)
	r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Validate", "%v", err)
	return err
}

// applyChildren applies the plan's children in order, deletes an
// optional child the spec no longer asks for (a files Secret that holds no
// file, after the config Secret), and nudges the pods when the
// configuration or its files changed.
func (r *Reconciler) applyChildren(ctx context.Context, nginx *v1beta1.NginxOperator, p *plan) error {
	for _, obj := range p.unwanted {
		if err := r.deleteUnwanted(ctx, nginx, obj); err != nil {
			return err
		}
	}
	configChanged := false
	for _, child := range p.children {
		var answer client.Object
		if child == client.Object(p.statefulSet) {
			answer = &p.written
		}
		outcome, err := r.applyChild(ctx, nginx, child, answer)
		if err != nil {
			return err
		}
		if _, ok := child.(*corev1.Secret); ok && outcome == k8sutil.Updated {
			configChanged = true
		}
	}
	for _, obj := range p.unwantedFiles {
		if err := r.deleteUnwanted(ctx, nginx, obj); err != nil {
			return err
		}
	}
	if configChanged {
		return r.nudgePods(ctx, nginx, p.inputs)
	}
	return nil
}

// applyChild applies child as the instance's (and fills answer, if any, as
// k8sutil.Applier.ApplyOwnedAnswer does). A child the apiserver refuses is
// a spec error (see refused): the first apply of a new instance, or one the
// dry run did not foresee.
func (r *Reconciler) applyChild(ctx context.Context, nginx *v1beta1.NginxOperator, child, answer client.Object) (k8sutil.Outcome, error) {
	outcome, err := r.Applier.ApplyOwnedAnswer(ctx, r.Recorder, nginx, child, answer)
	if err != nil {
		return outcome, r.refused(nginx, child, err)
	}
	return outcome, nil
}

// childField is a field of a child the API server may name in a refusal,
// and the spec field it comes from; same says the spec field has the
// child field's shape below it (an embedded core type), so the rest of the
// path carries over.
type childField struct {
	child, spec string
	same        bool
}

// specFields are the child fields the user's spec reaches, by kind, the
// longer of two overlapping prefixes first.
var specFields = map[string][]childField{
	"StatefulSet": {
		{"spec.template.spec.containers[0].resources", "spec.resources", true},
		{"spec.template.spec.containers[0].image", "spec.image", true},
		{"spec.template.spec.affinity", "spec.pod.affinity", true},
		{"spec.template.spec.tolerations", "spec.pod.tolerations", true},
		{"spec.template.spec.topologySpreadConstraints", "spec.pod.topologySpreadConstraints", true},
		{"spec.template.spec.nodeSelector", "spec.pod.nodeSelector", true},
		{"spec.template.spec.priorityClassName", "spec.pod.priorityClassName", true},
		{"spec.template.spec.terminationGracePeriodSeconds", "spec.pod.terminationGracePeriodSeconds", true},
		{"spec.template.spec.imagePullSecrets", "spec.imagePullSecrets", true},
		{"spec.template.metadata.labels", "spec.pod.labels", true},
		{"spec.template.metadata.annotations", "spec.pod.annotations", true},
		{"spec.volumeClaimTemplates[0].spec.resources", "spec.content.volumeClaimTemplate.size", false},
		{"spec.volumeClaimTemplates[0].spec.storageClassName", "spec.content.volumeClaimTemplate.storageClassName", false},
		{"spec.volumeClaimTemplates[0].spec.accessModes", "spec.content.volumeClaimTemplate.accessModes", true},
		{"spec.volumeClaimTemplates", "spec.content.volumeClaimTemplate", false},
	},
	"Service": {
		{"metadata.annotations", "spec.service.annotations", true},
		{"spec.ports", "spec.ports", false},
		{"spec", "spec.service", true},
	},
	"PodDisruptionBudget": {
		{"spec", "spec.podDisruptionBudget", true},
	},
	"NetworkPolicy": {
		{"spec.ingress[0].from", "spec.networkPolicy.from", true},
		{"spec.ingress[2].from", "spec.networkPolicy.metricsFrom", true},
		{"spec.ingress[0].ports", "spec.ports", false},
		{"spec", "spec.networkPolicy", false},
	},
}

// refusedSpec is the InvalidConfig error of a child the API server refuses:
// it names the spec fields behind the child's (see specFields) and quotes
// the API server.
func refusedSpec(child client.Object, err error) error {
	kind := fmt.Sprintf("%T", child)
	kind = kind[strings.LastIndex(kind, ".")+1:]
	var fields []string
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		for _, cause := range status.Status().Details.Causes {
			if f := specField(kind, cause.Field); f != "" && !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	if len(fields) == 0 {
		return configErrorf("the API server refuses the %s this spec makes: %v", kind, err)
	}
	return configErrorf("%s: the API server refuses the %s this spec makes: %v", strings.Join(fields, ", "), kind, err)
}

// specField is the spec field behind a child's field, "" when unknown.
func specField(kind, field string) string {
	for _, f := range specFields[kind] {
		rest, ok := strings.CutPrefix(field, f.child)
		if !ok || rest != "" && rest[0] != '.' && rest[0] != '[' {
			continue
		}
		if f.same {
			return f.spec + rest
		}
		return f.spec
	}
	return ""
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

// deleteUnwanted removes obj, an optional child the spec no longer asks for
// (named, otherwise empty), when it exists and the instance controls it.
func (r *Reconciler) deleteUnwanted(ctx context.Context, nginx *v1beta1.NginxOperator, obj client.Object) error {
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, nginx) {
		return nil
	}
	if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return &k8sutil.ApplyError{Err: err}
	}
	return nil
}

// liveStatefulSet is the instance's StatefulSet from the cache, nil when it
// does not exist (yet).
func (r *Reconciler) liveStatefulSet(ctx context.Context, nginx *v1beta1.NginxOperator) (*appsv1.StatefulSet, error) {
	var sts appsv1.StatefulSet
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: layout.NamesFor(nginx.Name).StatefulSet}
	if err := r.Client.Get(ctx, key, &sts); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return &sts, nil
}
