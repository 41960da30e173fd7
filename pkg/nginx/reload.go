package nginx

// How a new configuration reaches the pods and how the operator learns
// which configuration each pod's nginx serves: the config Secret changes;
// the prober pushes the new nginx.conf to each pod's nginx-reloader, signed
// with the instance's push key, and the pods are nudged so the kubelet
// refreshes their volumes (the push is what is fast; the volume is what a
// pod starts from, and what it follows when a push does not reach it);
// each reloader checks and loads the new files, and the operator reads
// each reloader's /status.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// syncAnnotations are what the config Secret and, once it changed, every pod
// carry (see layout.ConfigHashAnnotation).
func syncAnnotations(in Materials) map[string]string {
	a := map[string]string{layout.ConfigHashAnnotation: in.ConfigHash}
	if in.FilesHash != "" {
		a[layout.FilesHashAnnotation] = in.FilesHash
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
func (r *Reconciler) nudgePods(ctx context.Context, nginx *v1beta1.NginxOperator, in Materials) error {
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

// heldConfigSecret is the instance's config Secret as the cache keeps it
// (the transform keeps its push key and revision alone of its data); nil
// when there is none, or it is not the instance's.
func (r *Reconciler) heldConfigSecret(ctx context.Context, nginx *v1beta1.NginxOperator) (*corev1.Secret, error) {
	var secret corev1.Secret
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: layout.NamesFor(nginx.Name).ConfigSecret}, &secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(&secret, nginx):
		return nil, nil
	}
	return &secret, nil
}

// pushKey is the instance's push key: the one the held config Secret
// holds, or a new random one for an instance whose Secret has none yet. A
// new key is remembered until the cache shows the Secret holding it, so
// that a reconcile before the cache catches up does not write another.
func (r *Reconciler) pushKey(nginx *v1beta1.NginxOperator, held *corev1.Secret) ([]byte, error) {
	instance := types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}
	if held != nil && len(held.Data[layout.PushKeyFile]) == layout.PushKeyLength {
		r.newPushKeys.Delete(instance)
		return held.Data[layout.PushKeyFile], nil
	}
	if v, ok := r.newPushKeys.Load(instance); ok && v.(newPushKey).uid == nginx.UID {
		return v.(newPushKey).key, nil
	}
	random := make([]byte, layout.PushKeyLength/2)
	if _, err := rand.Read(random); err != nil {
		return nil, err
	}
	key := []byte(hex.EncodeToString(random))
	r.newPushKeys.Store(instance, newPushKey{uid: nginx.UID, key: key})
	return key, nil
}

// configRevision is the revision of the configuration hash
// (reloader.RevisionFile): the held config Secret's while it holds that
// configuration, so nothing is written on resync; else one above it, and
// at least now in milliseconds, so revisions keep growing when the cache
// lags the operator's own last write, or the Secret was deleted.
func configRevision(held *corev1.Secret, hash string, now time.Time) uint64 {
	var revision uint64
	if held != nil {
		revision, _ = strconv.ParseUint(string(held.Data[reloader.RevisionFile]), 10, 64)
		if revision != 0 && held.Annotations[layout.ConfigHashAnnotation] == hash {
			return revision
		}
	}
	return max(revision+1, uint64(now.UnixMilli()))
}

// newPushKey is a push key generated for the instance of uid.
type newPushKey struct {
	uid types.UID
	key []byte
}
