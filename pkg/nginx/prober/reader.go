package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

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

// NewHTTPReader gives up on a pod after timeout, or after
// podConnectTimeout when it does not accept the connection. Connections are
// not kept: a pod is read every few minutes once it is settled.
func NewHTTPReader(timeout time.Duration) *HTTPPodConfigReader {
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
