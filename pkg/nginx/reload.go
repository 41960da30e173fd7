package nginx

// How a new configuration reaches the pods and how the operator learns
// which configuration each pod's nginx serves: the config Secret changes,
// the pods are nudged so the kubelet refreshes their volumes at once, each
// pod's nginx-reloader checks and loads the new files, and the operator
// reads each reloader's /status.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// syncAnnotationKeys are the annotations syncAnnotations may set.
var syncAnnotationKeys = []string{layout.ConfigHashAnnotation, layout.TLSHashAnnotation}

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

// PodConfigReader asks the reloader of one nginx pod what its nginx serves.
type PodConfigReader interface {
	Read(ctx context.Context, pod PodAddress) (reloader.Status, error)
}

// PodAddress is what a PodConfigReader needs of a pod: the prober keeps one
// per pod, not the pod (a corev1.Pod is over a kilobyte even empty).
type PodAddress struct {
	Namespace, Name, IP string
}

// HTTPPodConfigReader reads a pod's reloader's /status over the pod network,
// at the pod's IP: the operator needs no RBAC for it, only a network path
// to the pods' reloader port (a NetworkPolicy may have to allow it).
type HTTPPodConfigReader struct {
	Client *http.Client
}

// podConnectTimeout bounds connecting to a pod's reloader: on the pod
// network a connection takes milliseconds, and a port a NetworkPolicy drops
// would otherwise hold a read for the whole timeout.
const podConnectTimeout = time.Second

// NewHTTPPodConfigReader gives up on a pod after timeout, or after
// podConnectTimeout when it does not accept the connection. Connections are
// not kept: a pod is read every few minutes once it is settled.
func NewHTTPPodConfigReader(timeout time.Duration) *HTTPPodConfigReader {
	return &HTTPPodConfigReader{Client: &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext:       (&net.Dialer{Timeout: podConnectTimeout}).DialContext,
		DisableKeepAlives: true,
	}}}
}

// Read implements PodConfigReader.
func (h *HTTPPodConfigReader) Read(ctx context.Context, pod PodAddress) (reloader.Status, error) {
	var st reloader.Status
	url := "http://" + net.JoinHostPort(pod.IP, strconv.Itoa(layout.ReloaderPort)) + "/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, err
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s: %s", url, resp.Status)
	}
	// A status is a few hundred bytes; a pod cannot make the operator read more.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&st); err != nil {
		return st, fmt.Errorf("%s: %w", url, err)
	}
	return st, nil
}

// podConfigs is what an instance's pods' reloaders report about the
// configuration hash.
type podConfigs struct {
	// read is false when the operator does not read the pods.
	read bool
	// loaded counts the pods whose nginx serves hash.
	loaded int32
	// behind are the pods that answered with another configuration and
	// have not refused hash (the kubelet has yet to update their volume),
	// each as "<pod> (<the hash it serves>)".
	behind []string
	// rejected say, for each pod that refused hash by name, what it serves
	// instead and nginx's error.
	rejected []string
	// unreachable are the pods whose reloader did not answer.
	unreachable []string
	// pending are the pods not read yet.
	pending []string
	// keep: some pods are not read yet, and the configuration is the one
	// the status already describes (a restarted operator, a restarted
	// pod): the status keeps what it said of the pods until they are read,
	// rather than saying "not read yet" and then, most often, what it said
	// before.
	keep bool
}

// podConfigs is what the prober last read of the instance's running pods,
// which it is told to read (Track) against the configuration hash; the
// pods no longer running are forgotten. describedHash is the configuration
// the status described before this reconcile.
func (r *Reconciler) podConfigs(nginx *v1beta1.NginxOperator, pods []corev1.Pod, hash, describedHash string) podConfigs {
	if r.Prober == nil {
		return podConfigs{}
	}
	instance := types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}
	var running []corev1.Pod
	answers := map[string]answer{}
	for i := range pods {
		if nginxRunning(&pods[i]) {
			running = append(running, pods[i])
			answers[pods[i].Name] = r.Prober.Track(instance, &pods[i], hash)
		}
	}
	r.Prober.Keep(instance, running)
	configs := classify(answers, hash)
	configs.keep = len(configs.pending) > 0 && hash == describedHash
	return configs
}

// classify sorts the pods' answers (by pod name) by what they say of the
// configuration hash.
func classify(answers map[string]answer, hash string) podConfigs {
	out := podConfigs{read: true}
	for _, name := range slices.Sorted(maps.Keys(answers)) {
		a := answers[name]
		st := a.status
		switch {
		case !a.read:
			out.pending = append(out.pending, name)
		case a.err != nil:
			out.unreachable = append(out.unreachable, name)
		case st.Hash == hash:
			out.loaded++
			if !st.LastReloadSuccessful {
				// It refused a TLS or CA file since it loaded hash.
				out.rejected = append(out.rejected, rejection(name, st))
			}
		case !st.LastReloadSuccessful && st.RejectedHash == hash:
			out.rejected = append(out.rejected, rejection(name, st))
		default:
			out.behind = append(out.behind, fmt.Sprintf("%s (%s)", name, st.Hash))
		}
	}
	return out
}

// nginxRunning tells whether pod's nginx container runs (so its reloader
// answers) and the pod is not being deleted.
func nginxRunning(pod *corev1.Pod) bool {
	if pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() {
		return false
	}
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == layout.NginxContainerName {
			return st.State.Running != nil
		}
	}
	return false
}

func rejection(pod string, st reloader.Status) string {
	return fmt.Sprintf("%s (serving configuration %s): %s", pod, st.Hash, truncate(st.Error))
}

// reloadingMessage is the Progressing condition's message while fewer than
// desired pods serve configuration hash: how many do, and what the others
// serve, or that they were not read yet or do not answer.
func (p podConfigs) reloadingMessage(desired int32, hash string) string {
	msg := fmt.Sprintf("%d of %d replicas serve configuration %s", p.loaded, desired, hash)
	if len(p.behind) > 0 {
		msg += "; still on an earlier one: pod " + strings.Join(p.behind, ", pod ")
	}
	if len(p.pending) > 0 {
		msg += "; not read yet: pod " + strings.Join(p.pending, ", ")
	}
	if len(p.unreachable) > 0 {
		msg += "; no answer from the reloader of pod " + strings.Join(p.unreachable, ", ") +
			" (a NetworkPolicy may keep the operator from the pods' port " + strconv.Itoa(layout.ReloaderPort) +
			"; --read-pod-status=false turns these reads off)"
	}
	return msg
}

// rejectionMessage is the Degraded condition's message for pods whose nginx
// refused hash and serve what they loaded before.
func (p podConfigs) rejectionMessage(hash string) string {
	return fmt.Sprintf("nginx refuses configuration %s (or a certificate it reads) and keeps serving what it loaded before, in pod %s",
		hash, strings.Join(p.rejected, "; pod "))
}

func truncate(s string) string {
	if len(s) > maxNginxErrorLen {
		return strings.ToValidUTF8(s[:maxNginxErrorLen], "") + "..."
	}
	return s
}
