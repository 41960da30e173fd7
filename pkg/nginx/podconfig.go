package nginx

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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// PodConfigReader asks the reloader of one nginx pod what its nginx serves.
type PodConfigReader interface {
	Read(ctx context.Context, pod *corev1.Pod) (reloader.Status, error)
}

// HTTPPodConfigReader reads a pod's reloader's /status over the pod network,
// at the pod's IP: the operator needs no RBAC for it, only a network path
// to the pods' reloader port (a NetworkPolicy may have to allow it).
type HTTPPodConfigReader struct {
	Client *http.Client
}

// NewHTTPPodConfigReader gives up on a pod after timeout.
func NewHTTPPodConfigReader(timeout time.Duration) *HTTPPodConfigReader {
	return &HTTPPodConfigReader{Client: &http.Client{Timeout: timeout}}
}

// Read implements PodConfigReader.
func (h *HTTPPodConfigReader) Read(ctx context.Context, pod *corev1.Pod) (reloader.Status, error) {
	var st reloader.Status
	url := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(v1beta1.ReloaderPort)) + "/status"
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

// maxConcurrentPodReads bounds the requests one reconcile has in flight.
const maxConcurrentPodReads = 8

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
}

// readPodConfigs asks every running nginx pod which configuration it serves.
func readPodConfigs(ctx context.Context, reader PodConfigReader, pods []corev1.Pod, hash string) podConfigs {
	out := podConfigs{read: reader != nil}
	if reader == nil {
		return out
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		sem  = make(chan struct{}, maxConcurrentPodReads)
		seen = map[string]reloader.Status{}
	)
	for i := range pods {
		pod := &pods[i]
		if !nginxRunning(pod) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := reader.Read(ctx, pod)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.unreachable = append(out.unreachable, pod.Name)
				return
			}
			seen[pod.Name] = st
		}()
	}
	wg.Wait()
	slices.Sort(out.unreachable)
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		st := seen[name]
		switch {
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
		if st.Name == NginxContainerName {
			return st.State.Running != nil
		}
	}
	return false
}

func rejection(pod string, st reloader.Status) string {
	return fmt.Sprintf("%s (serving configuration %s): %s", pod, st.Hash, truncate(st.Error))
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
