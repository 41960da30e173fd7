package nginx

// How a new configuration reaches the pods and how the operator learns
// which configuration each pod's nginx serves: the config Secret changes,
// the pods are nudged so the kubelet refreshes their volumes at once, each
// pod's nginx-reloader checks and loads the new files, and the operator
// reads each reloader's /status.

import (
	"context"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
)

// syncAnnotations are what the config Secret and, once it changed, every pod
// carry (see layout.ConfigHashAnnotation).
func syncAnnotations(in Inputs) map[string]string {
	a := map[string]string{layout.ConfigHashAnnotation: in.ConfigHash}
	if in.TLSHash != "" {
		a[layout.TLSHashAnnotation] = in.TLSHash
	}
	return a
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
	for _, key := range prober.SyncAnnotationKeys() {
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
		if !pod.DeletionTimestamp.IsZero() || maps.Equal(prober.SyncAnnotations(pod), want) {
			continue
		}
		if err := r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return &k8sutil.ApplyError{Err: err}
		}
	}
	return nil
}
