package realpods

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// What each balancing choice does to a client, over a Service of three
// pods: a cookie, a client address or a header keeps a client on one pod
// and different ones spread over all three; least connections sends new
// requests away from the pods holding slow ones. (One nginx pod with one
// worker: without a shared zone, nginx counts connections per worker.)
func TestBalancingKeepsClientsOnAPodAsTheyAsk(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	runTestServers(ctx, t, cs, ns, "pool", 3)
	proxy := func(path string, p v1beta1.ProxyLocation) v1beta1.Location {
		p.Service, p.Port = "pool", 80
		return v1beta1.Location{Path: path, Proxy: &p}
	}
	objs := applyObjects(ctx, t, c, ns, nginxOperator(t, "lb", v1beta1.NginxOperatorSpec{
		Replicas:  ptr.To[int32](1),
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		Ports:     []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				RealIP: &v1beta1.RealIP{Header: "X-Forwarded-For"},
				// The node reaches the pods from inside 10.0.0.0/8: its
				// X-Forwarded-For names the client ip_hash sees.
				TrustedProxies: []string{"10.0.0.0/8"},
			},
			Servers: []v1beta1.Server{{Port: "http", DefaultServer: true, Locations: []v1beta1.Location{
				proxy("/sticky", v1beta1.ProxyLocation{SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Name: "route"}}}),
				proxy("/by-address", v1beta1.ProxyLocation{LoadBalancingMethod: "ip_hash"}),
				proxy("/by-user", v1beta1.ProxyLocation{LoadBalancingMethod: "hash consistent", HashKey: &v1beta1.HashKey{Source: "Header", Name: "X-User"}}),
				proxy("/least", v1beta1.ProxyLocation{LoadBalancingMethod: "least_conn"}),
			}}},
		},
	}))
	framework.WaitReady(ctx, t, cl, 3*time.Minute, objs...)
	waitEndpoints(ctx, t, cl, ns, "lb", 3)
	base := fmt.Sprintf("http://%s:80", clusterIP(ctx, t, cs, ns, "lb"))
	hc := keepAliveClient(dial)
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		_, err := answeringPod(ctx, hc, base+"/least")
		return err == nil
	}) {
		t.Fatalf("%s does not answer", base)
	}
	// pods sends 100 requests to path, the i-th with the headers of
	// header(i), and returns the pods that answered.
	pods := func(path string, header func(i int) http.Header) map[string]int {
		out := map[string]int{}
		for i := range 100 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			req.Header = header(i)
			pod, err := answeringRequest(hc, req)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			out[pod]++
		}
		return out
	}
	same := func(name, value string) func(int) http.Header {
		return func(int) http.Header { return http.Header{name: {value}} }
	}
	each := func(name, format string) func(int) http.Header {
		return func(i int) http.Header { return http.Header{name: {fmt.Sprintf(format, i)}} }
	}

	// The cookie nginx sets on a first request.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sticky", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie string
	for _, ck := range resp.Cookies() {
		if ck.Name == "route" {
			cookie = ck.Name + "=" + ck.Value
		}
	}
	if cookie == "" {
		t.Fatalf("no route cookie on a first request to /sticky: %v", resp.Header["Set-Cookie"])
	}
	for _, tc := range []struct {
		name      string
		path      string
		one, many func(int) http.Header
	}{
		{"cookie affinity", "/sticky", same("Cookie", cookie), func(int) http.Header { return http.Header{} }},
		{"ip_hash", "/by-address", same("X-Forwarded-For", "198.18.7.7"), each("X-Forwarded-For", "198.18.%d.7")},
		{"hash on a header", "/by-user", same("X-User", "alice"), each("X-User", "user-%d")},
	} {
		if got := pods(tc.path, tc.one); len(got) != 1 {
			t.Errorf("%s: 100 requests of one client reached %v, want one pod", tc.name, got)
		}
		got := pods(tc.path, tc.many)
		t.Logf("%s: 100 clients over the pods: %v", tc.name, got)
		if len(got) != 3 {
			t.Errorf("%s: 100 clients reached %d pods, want all 3", tc.name, len(got))
		}
	}

	// Least connections: two slow requests hold two pods; new requests go
	// to the third. ?flush=1: the answer's header arrives while the test
	// server holds the request, so the test knows both are held.
	slow := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	held := make(chan struct{}, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/least?sleep=8s&flush=1", nil)
			resp, err := keepAliveClient(dial).Do(req)
			held <- struct{}{}
			pod, err := answerOf(resp, err)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("a slow request: %v", err)
			}
			slow[pod] = true
		}()
	}
	for range 2 {
		select {
		case <-held:
		case <-ctx.Done():
			t.Fatal("the slow requests never reached the test servers")
		}
	}
	quick := map[string]int{}
	for range 10 {
		pod, err := answeringPod(ctx, hc, base+"/least")
		if err != nil {
			t.Fatal(err)
		}
		quick[pod]++
	}
	wg.Wait()
	t.Logf("least_conn: slow requests on %v, 10 new ones on %v", slow, quick)
	for pod := range quick {
		if slow[pod] {
			t.Errorf("least_conn sent a new request to %s, which held a slow one (slow on %v, new on %v)", pod, slow, quick)
		}
	}
}

// answeringRequest sends req and returns the test server that answered.
func answeringRequest(hc *http.Client, req *http.Request) (string, error) {
	return answerOf(hc.Do(req))
}
