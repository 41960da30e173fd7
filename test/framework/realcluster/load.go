package realcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
)

// Load is a steady client on the node: workers send GET / through the
// Service one after another, each on a new connection (so every request is
// routed by kube-proxy's current rules), and count what they get: a
// success is a 200 whose body is "hello\n", the site the tests serve.
type Load struct {
	ok       atomic.Int64
	versions sync.Map // X-Version -> *atomic.Int64
	mu       sync.Mutex
	failures []string // the first ten
	last     []string // the last ten after those
	nfail    int
	slowest  atomic.Int64 // nanoseconds, of a request that succeeded
	stop     chan struct{}
	done     sync.WaitGroup
}

// StartLoad starts a Load of workers on the Service address addr over HTTP.
func StartLoad(ctx context.Context, t *testing.T, n *node.Node, addr string, workers int) *Load {
	t.Helper()
	return startLoad(ctx, t, n, "http://"+addr+"/", nil, workers)
}

// StartHTTPSLoad is StartLoad over HTTPS: each request is a new connection,
// whose handshake verifies the server's certificate with config.
func StartHTTPSLoad(ctx context.Context, t *testing.T, n *node.Node, addr string, config *tls.Config, workers int) *Load {
	t.Helper()
	return startLoad(ctx, t, n, "https://"+addr+"/", config, workers)
}

func startLoad(ctx context.Context, t *testing.T, n *node.Node, url string, config *tls.Config, workers int) *Load {
	t.Helper()
	l := &Load{stop: make(chan struct{})}
	client := n.HTTPClient()
	client.Transport.(*http.Transport).TLSClientConfig = config
	// Failures are what is counted, not latency: on 2 cores shared with the
	// rest of make test an answer can take seconds; a refused or reset
	// connection, or an error status, is what a bad rollout causes.
	client.Timeout = 30 * time.Second
	// A new Service answers once kube-proxy has programmed it, which the
	// instance's status cannot tell: the load starts from a Service that
	// answered 20 times in a row. Before that the node refuses a
	// connection at once (see node.rejectUntranslatedServiceAddresses);
	// each try is a new connection of at most 3 s.
	probe := n.HTTPClient()
	probe.Transport.(*http.Transport).TLSClientConfig = config
	probe.Timeout = 3 * time.Second
	inARow := 0
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool {
		resp, err := probe.Get(url)
		if err != nil {
			inARow = 0
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			inARow = 0
			return false
		}
		inARow++
		return inARow >= 20
	}) {
		t.Fatalf("the Service %s does not answer from the node", url)
	}
	for range workers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			// About 100 requests a second per worker.
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-l.stop:
					return
				case <-tick.C:
				}
				l.request(client, url)
			}
		}()
	}
	return l
}

func (l *Load) request(c *http.Client, url string) {
	at := time.Now()
	resp, err := c.Get(url)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case rerr != nil:
			err = rerr
		case resp.StatusCode != http.StatusOK:
			err = fmt.Errorf("status %d", resp.StatusCode)
		case string(body) != "hello\n":
			err = fmt.Errorf("body %q", body)
		}
		if err == nil {
			v, _ := l.versions.LoadOrStore(resp.Header.Get("X-Version"), new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}
	}
	if err == nil {
		l.ok.Add(1)
		for took := int64(time.Since(at)); ; {
			if old := l.slowest.Load(); took <= old || l.slowest.CompareAndSwap(old, took) {
				break
			}
		}
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nfail++
	msg := at.Format("15:04:05.000") + ": " + err.Error()
	if len(l.failures) < 10 {
		l.failures = append(l.failures, msg)
	} else {
		l.last = append(l.last, msg)
		if len(l.last) > 10 {
			l.last = l.last[1:]
		}
	}
}

// Finish stops the workers and fails t with the failed requests, if any.
func (l *Load) Finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.done.Wait()
	var versions []string
	l.versions.Range(func(k, v any) bool {
		versions = append(versions, fmt.Sprintf("%q: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	t.Logf("load: %d requests succeeded (by X-Version %s; the slowest in %s), %d failed",
		l.ok.Load(), strings.Join(versions, ", "), time.Duration(l.slowest.Load()).Round(time.Millisecond), l.nfail)
	if l.nfail > 0 {
		t.Errorf("%d requests failed, the first and the last:\n%s", l.nfail, strings.Join(append(l.failures, append([]string{"..."}, l.last...)...), "\n"))
	}
}

// Served is how many requests of configuration version succeeded so far.
func (l *Load) Served(version string) int64 {
	v, ok := l.versions.Load(version)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// WaitServed waits until n more requests succeeded than when it was called.
func (l *Load) WaitServed(ctx context.Context, t *testing.T, n int64) {
	t.Helper()
	want := l.ok.Load() + n
	if !framework.WaitFor(ctx, 20*time.Second, func(context.Context) bool { return l.ok.Load() >= want }) {
		t.Fatalf("the client got %d successful answers, want %d", l.ok.Load(), want)
	}
}
