package realpods

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// What a client found on real pods, fixed: a read timeout is answered once
// and on time, the request run by one pod only, whether the Service has
// one pod or three (the Service's cluster address, every upstream's backup,
// and nginx's unbounded retry on timeout made it N+1 timeouts and N+1
// runs); requests without the hash key all reach one pod, as the API says,
// with hash and with hash consistent (nginx alone spreads them round
// robin).
func TestProxyAnswersSlowAndKeylessRequestsAsDocumented(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	runTestServers(ctx, t, cs, ns, "one", 1)
	runTestServers(ctx, t, cs, ns, "three", 3)
	proxy := func(path, service string, p v1beta1.ProxyLocation) v1beta1.Location {
		p.Service, p.Port = service, 80
		return v1beta1.Location{Path: path, Proxy: &p}
	}
	const readTimeout = 3
	objs := applyObjects(ctx, t, c, ns, nginxOperator(t, "client", v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](1),
		Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", DefaultServer: true, Locations: []v1beta1.Location{
			proxy("/slow-one", "one", v1beta1.ProxyLocation{ReadTimeoutSeconds: readTimeout}),
			proxy("/slow-three", "three", v1beta1.ProxyLocation{ReadTimeoutSeconds: readTimeout}),
			proxy("/hash", "three", v1beta1.ProxyLocation{LoadBalancingMethod: "hash", HashKey: &v1beta1.HashKey{Source: "Header", Name: "X-User"}}),
			proxy("/consistent", "three", v1beta1.ProxyLocation{LoadBalancingMethod: "hash consistent", HashKey: &v1beta1.HashKey{Source: "Cookie", Name: "user"}}),
		}}}},
	}))
	framework.WaitReady(ctx, t, cl, 3*time.Minute, objs...)
	base := fmt.Sprintf("http://%s:80", clusterIP(ctx, t, cs, ns, "client"))
	hc := keepAliveClient(dial)
	if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
		_, err1 := answeringPod(ctx, hc, base+"/slow-one")
		_, err2 := answeringPod(ctx, hc, base+"/hash")
		return err1 == nil && err2 == nil
	}) {
		t.Fatalf("%s does not answer", base)
	}

	t.Run("a read timeout", func(t *testing.T) {
		for _, service := range []string{"one", "three"} {
			id := fmt.Sprintf("timeout-%s-%d", service, time.Now().UnixNano())
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/slow-"+service+"?sleep=10s&id="+id, nil)
			began := time.Now()
			resp, err := hc.Do(req)
			took := time.Since(began)
			if err != nil {
				t.Fatalf("%s: %v", service, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusGatewayTimeout || took < readTimeout*time.Second || took > readTimeout*time.Second+1500*time.Millisecond {
				t.Errorf("a request to a Service of %s pod(s) that answers after 10 s: %s after %s, want 504 after %d s", service, resp.Status, took.Round(10*time.Millisecond), readTimeout)
			}
			// The test server logs a request as it arrives, and nginx gave
			// up before it answered: every try is in the logs by now, but
			// for the kubelet's log latency.
			var runs int
			framework.WaitFor(ctx, 10*time.Second, func(ctx context.Context) bool {
				runs = 0
				for _, log := range containerLogs(ctx, t, cs, ns, "app="+service) {
					runs += strings.Count(log, "id="+id)
				}
				return runs > 0
			})
			t.Logf("Service of %s pod(s): %s after %s, run %d time(s)", service, resp.Status, took.Round(10*time.Millisecond), runs)
			if runs != 1 {
				t.Errorf("a request that timed out on a Service of %s pod(s) ran %d times, want once", service, runs)
			}
		}
	})

	t.Run("requests without the hash key", func(t *testing.T) {
		for _, path := range []string{"/hash", "/consistent"} {
			pods := map[string]int{}
			for range 20 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
				pod, err := answeringRequest(hc, req)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				pods[pod]++
			}
			if len(pods) != 1 {
				t.Errorf("%s: 20 requests without the key reached %v, want one pod", path, pods)
			}
			// Requests with keys still spread: the key decides.
			keyed := map[string]int{}
			for i := range 30 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
				req.Header.Set("X-User", fmt.Sprintf("user-%d", i))
				req.AddCookie(&http.Cookie{Name: "user", Value: fmt.Sprintf("user-%d", i)})
				pod, err := answeringRequest(hc, req)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				keyed[pod]++
			}
			if len(keyed) < 2 {
				t.Errorf("%s: 30 requests with different keys all reached %v", path, keyed)
			}
		}
	})
}
