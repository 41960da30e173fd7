package prober

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// PodConfigReader asks the reloader of one nginx pod what its nginx serves,
// or pushes it a configuration.
type PodConfigReader interface {
	Read(ctx context.Context, pod PodAddress) (reloader.Status, error)
	// Push hands the configuration of w, signed with its key, to the pod's
	// reloader and returns its status after it tried to load it. pushed is
	// false when the reloader refused the push (the status is then read as
	// by Read).
	Push(ctx context.Context, pod PodAddress, w Want) (st reloader.Status, pushed bool, err error)
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
	// PushClient pushes: the reloader answers once nginx has checked and
	// loaded the configuration, which takes seconds for a large one.
	PushClient *http.Client
}

// podConnectTimeout bounds connecting to a pod's reloader: on the pod
// network a connection takes milliseconds, and a port a NetworkPolicy drops
// would otherwise hold a read for the whole timeout.
const podConnectTimeout = time.Second

// NewHTTPReader gives up on a pod after timeout, or after
// podConnectTimeout when it does not accept the connection. Connections are
// not kept: a pod is read every few minutes once it is settled.
func NewHTTPReader(timeout time.Duration) *HTTPPodConfigReader {
	transport := &http.Transport{
		DialContext:       (&net.Dialer{Timeout: podConnectTimeout}).DialContext,
		DisableKeepAlives: true,
	}
	return &HTTPPodConfigReader{
		Client:     &http.Client{Timeout: timeout, Transport: transport},
		PushClient: &http.Client{Timeout: pushTimeout, Transport: transport},
	}
}

// pushTimeout bounds a push: nginx -t and the reload of the largest
// configuration a Secret carries take a few seconds.
const pushTimeout = time.Minute

// Read implements PodConfigReader.
func (h *HTTPPodConfigReader) Read(ctx context.Context, pod PodAddress) (reloader.Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, reloaderURL(pod, "/status"), nil)
	if err != nil {
		return reloader.Status{}, err
	}
	return status(h.Client, req)
}

// Push implements PodConfigReader. A reloader that answers the push with
// anything but its status (an older one, 404; one whose volume holds
// another key yet, 403) is read instead.
func (h *HTTPPodConfigReader) Push(ctx context.Context, pod PodAddress, w Want) (reloader.Status, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, reloaderURL(pod, reloader.ConfigPath), bytes.NewReader(w.Config))
	if err != nil {
		return reloader.Status{}, false, err
	}
	req.Header.Set(reloader.SignatureHeader, reloader.Sign(w.Key, w.Config))
	if w.Revision != 0 {
		req.Header.Set(reloader.RevisionHeader, strconv.FormatUint(w.Revision, 10))
		req.Header.Set(reloader.RevisionSignatureHeader, reloader.SignRevision(w.Key, w.Revision, w.Config))
	}
	st, err := status(h.PushClient, req)
	var refused *refusedError
	if errors.As(err, &refused) {
		st, err = h.Read(ctx, pod)
		return st, false, err
	}
	return st, err == nil, err
}

func reloaderURL(pod PodAddress, path string) string {
	return "http://" + net.JoinHostPort(pod.IP, strconv.Itoa(layout.ReloaderPort)) + path
}

// refusedError is a reloader's answer other than 200.
type refusedError struct{ url, status string }

func (e *refusedError) Error() string { return e.url + ": " + e.status }

// status sends req with c and decodes the reloader's Status from the answer.
func status(c *http.Client, req *http.Request) (reloader.Status, error) {
	var st reloader.Status
	url := req.URL.String()
	resp, err := c.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, &refusedError{url: url, status: resp.Status}
	}
	// A status is a few hundred bytes; a pod cannot make the operator read more.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&st); err != nil {
		return st, fmt.Errorf("%s: %w", url, err)
	}
	return st, nil
}
