package render

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/echo"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// endpoints are local echo servers standing for a Service's endpoints:
// each is a backend of weight 1, so the location's upstream has one server
// line per echo server, as it has one per endpoint in a cluster.
// A request that asks an endpoint to sleep is announced on slow, by the
// endpoint's name, as it arrives.
type endpoints struct {
	names   []string
	servers []*httptest.Server
	slow    chan string
}

func startEndpoints(t *testing.T, n int) *endpoints {
	t.Helper()
	e := &endpoints{slow: make(chan string, 16)}
	for i := range n {
		name := fmt.Sprintf("ep%d", i)
		answer := echo.Handler(name)
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has("sleep") {
				select {
				case e.slow <- name:
				default:
				}
			}
			answer.ServeHTTP(w, r)
		}))
		t.Cleanup(s.Close)
		e.names, e.servers = append(e.names, name), append(e.servers, s)
	}
	return e
}

// backends are e as the backends of a location; extra comes first.
func (e *endpoints) backends(t *testing.T, extra ...int32) []v1beta1.Backend {
	var out []v1beta1.Backend
	for i, port := range extra {
		out = append(out, v1beta1.Backend{Service: fmt.Sprintf("extra%d", i), Port: port})
	}
	for i, s := range e.servers {
		out = append(out, v1beta1.Backend{Service: e.names[i], Port: portOf(t, s.URL)})
	}
	return out
}

// balancingClient sends requests to one nginx port from any loopback
// address and tells which endpoint answered.
type balancingClient struct {
	t    *testing.T
	proc *tools.Process
	base string
}

// do sends method path with header (name, value pairs) from source (a
// loopback address, "" for any), and returns the status, the endpoint that
// answered ("" for none) and the response's Set-Cookie.
func (c *balancingClient) do(method, path, source string, header ...string) (int, string, string) {
	c.t.Helper()
	dialer := &net.Dialer{}
	if source != "" {
		dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(source)}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequest(method, c.base+path, strings.NewReader("body"))
	tools.Must(c.t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, body := fetch(c.t, c.proc, client, req)
	seen, err := echo.Decode(body)
	if err != nil {
		return resp.StatusCode, "", resp.Header.Get("Set-Cookie")
	}
	return resp.StatusCode, seen.Server, resp.Header.Get("Set-Cookie")
}

// count sends n requests and counts the answers by endpoint (and status,
// for an answer from no endpoint).
func (c *balancingClient) count(n int, send func(i int) (int, string, string)) map[string]int {
	counts := map[string]int{}
	for i := range n {
		status, server, _ := send(i)
		if server == "" {
			server = strconv.Itoa(status)
		}
		counts[server]++
	}
	return counts
}

// startBalancing runs the real nginx with one worker (a balancing method
// sees the requests of its own worker) and locations, on one port.
func startBalancing(t *testing.T, locations ...v1beta1.Location) *balancingClient {
	t.Helper()
	nginxBin := tools.Nginx(t)
	port := int32(tools.Port(t))
	spec := v1beta1.NginxOperatorSpec{
		Ports:     []v1beta1.Port{{Name: "http", ContainerPort: port}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		Config:    v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: locations}}},
	}
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), int32(tools.Port(t)), nil, nil)
	return &balancingClient{t: t, proc: proc, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// TestRealNginxLeastConnSendsNewRequestsAwayFromAnEndpointHoldingSlowOnes:
// while the first endpoint holds a slow request, least_conn sends every
// new one to the other; round robin would send it every second one.
func TestRealNginxLeastConnSendsNewRequestsAwayFromAnEndpointHoldingSlowOnes(t *testing.T) {
	eps := startEndpoints(t, 2)
	c := startBalancing(t, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "least_conn",
		KeepAlive: &v1beta1.UpstreamKeepAlive{Connections: ptr.To[int32](8), Requests: 100, TimeSeconds: 60, TimeoutSeconds: 10}}})
	c.do(http.MethodGet, "/warm-up", "") // nginx is up; round robin's turn moves on
	var wg sync.WaitGroup
	slow := make(chan string, 1)
	wg.Go(func() {
		_, server, _ := c.do(http.MethodGet, "/?sleep=3s", "")
		slow <- server
	})
	select {
	case <-eps.slow: // the slow request reached its endpoint
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request reached no endpoint")
	}
	counts := c.count(10, func(int) (int, string, string) { return c.do(http.MethodGet, "/fast", "") })
	wg.Wait()
	busy := <-slow
	if busy == "" || counts[busy] != 0 || counts[eps.names[0]]+counts[eps.names[1]] != 10 {
		t.Errorf("with %s holding a slow request, 10 new requests went %v: least_conn should send all to the other", busy, counts)
	}
}

// TestRealNginxHashMethodsKeepAKeyOnOneEndpointAndSpreadKeys: ip_hash (by
// the client's /24, from 127.0.N.1), a consistent hash on a header and on
// the client's address each send every request of one key to one endpoint,
// and different keys to different endpoints.
func TestRealNginxHashMethodsKeepAKeyOnOneEndpointAndSpreadKeys(t *testing.T) {
	eps := startEndpoints(t, 3)
	c := startBalancing(t,
		v1beta1.Location{Path: "/ip/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "ip_hash"}},
		v1beta1.Location{Path: "/user/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "hash consistent",
			HashKey: &v1beta1.HashKey{Source: "Header", Name: "X-User-ID"}}},
		v1beta1.Location{Path: "/q/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "hash",
			HashKey: &v1beta1.HashKey{Source: "QueryParameter", Name: "user"}}},
	)
	cases := map[string]func(key int) (int, string, string){
		"ip_hash by client address": func(key int) (int, string, string) {
			return c.do(http.MethodGet, "/ip/", fmt.Sprintf("127.0.%d.1", key+1))
		},
		"hash consistent by header": func(key int) (int, string, string) {
			return c.do(http.MethodGet, "/user/", "", "X-User-ID", fmt.Sprintf("user-%d", key))
		},
		"hash by query parameter": func(key int) (int, string, string) {
			return c.do(http.MethodGet, fmt.Sprintf("/q/?user=u%d", key), "")
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			used := map[string]int{}
			for key := range 20 {
				counts := c.count(5, func(int) (int, string, string) { return send(key) })
				if len(counts) != 1 {
					t.Errorf("key %d went to %v, want one endpoint", key, counts)
				}
				for server := range counts {
					used[server]++
				}
			}
			if len(used) < 2 {
				t.Errorf("20 keys went to %v: different keys should spread", used)
			}
		})
	}
}

// cookieValue is the minted affinity cookie: 32 hex digits, the location's
// path, HttpOnly by default.
var mintedCookie = regexp.MustCompile(`^route=([0-9a-f]{32}); Path=/app/; Max-Age=600; HttpOnly; SameSite=Lax$`)

// TestRealNginxCookieAffinityKeepsAClientOnOneEndpointAndSpreadsNewClients:
// 100 requests with the cookie land on one endpoint, with no new cookie;
// 100 clients without it each get one and spread over every endpoint, and
// a client that sends back the cookie it got stays where it was.
func TestRealNginxCookieAffinityKeepsAClientOnOneEndpointAndSpreadsNewClients(t *testing.T) {
	eps := startEndpoints(t, 3)
	c := startBalancing(t, v1beta1.Location{Path: "/app/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t),
		SessionAffinity: &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{MaxAgeSeconds: ptr.To[int32](600), SameSite: "Lax"}}}})

	withCookie := c.count(100, func(int) (int, string, string) {
		status, server, setCookie := c.do(http.MethodGet, "/app/", "", "Cookie", "route=client-42")
		if setCookie != "" {
			t.Errorf("a request with the cookie got Set-Cookie %q", setCookie)
		}
		return status, server, setCookie
	})
	if len(withCookie) != 1 {
		t.Errorf("100 requests with one cookie went to %v, want one endpoint", withCookie)
	}
	fresh := c.count(100, func(int) (int, string, string) {
		status, server, setCookie := c.do(http.MethodGet, "/app/", "")
		m := mintedCookie.FindStringSubmatch(setCookie)
		if m == nil {
			t.Errorf("a request without the cookie got Set-Cookie %q, want %v", setCookie, mintedCookie)
			return status, server, setCookie
		}
		if _, again, _ := c.do(http.MethodGet, "/app/x", "", "Cookie", "route="+m[1]); again != server {
			t.Errorf("the client with cookie %s went to %s, then %s", m[1], server, again)
		}
		return status, server, setCookie
	})
	for _, name := range eps.names {
		if fresh[name] == 0 {
			t.Errorf("100 new clients went %v: none to %s", fresh, name)
		}
	}
}

// TestRealNginxRetriesGoToAnotherEndpointAndSparePOSTUnlessAsked: the
// first endpoint answers 502 (or refuses connections); an idempotent GET
// is retried on the next, a POST that was sent is not (its 502 reaches the
// client) unless nonIdempotent is set, and a POST whose connection was
// refused is retried either way.
func TestRealNginxRetriesGoToAnotherEndpointAndSparePOSTUnlessAsked(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer bad.Close()
	refused := int32(tools.Port(t)) // nothing listens there
	eps := startEndpoints(t, 1)
	retry := func(nonIdempotent bool) *v1beta1.ProxyRetry {
		return &v1beta1.ProxyRetry{Conditions: []string{"error", "timeout", "http_502"}, Tries: 2, TimeoutSeconds: 5, NonIdempotent: nonIdempotent}
	}
	location := func(path string, first int32, rt *v1beta1.ProxyRetry) v1beta1.Location {
		return v1beta1.Location{Path: path, Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t, first), Retry: rt}}
	}
	c := startBalancing(t,
		location("/get/", portOf(t, bad.URL), retry(false)),
		location("/post/", portOf(t, bad.URL), retry(false)),
		location("/post-retried/", portOf(t, bad.URL), retry(true)),
		location("/refused/", refused, retry(false)),
	)
	cases := []struct {
		method, path string
		want502      bool
	}{
		{http.MethodGet, "/get/", false},
		{http.MethodPost, "/post/", true},
		{http.MethodPost, "/post-retried/", false},
		{http.MethodGet, "/refused/", false},
		{http.MethodPost, "/refused/", false},
	}
	for _, tc := range cases {
		// The first request of a worker goes to the first endpoint.
		counts := c.count(6, func(int) (int, string, string) { return c.do(tc.method, tc.path, "") })
		if got502 := counts["502"] > 0; got502 != tc.want502 || counts[eps.names[0]]+counts["502"] != 6 {
			t.Errorf("%s %s: answers %v; want a 502 to reach the client: %v", tc.method, tc.path, counts, tc.want502)
		}
	}
}

// TestRealNginxAnswersAReadTimeoutOnceOnTime: over three endpoints and
// their Services' addresses as backups (the upstream shape the operator
// ships), a request that outlasts readTimeoutSeconds gets one 504 after
// it, and only one endpoint ever saw it; a request whose endpoint refuses
// the connection still moves on to the next.
func TestRealNginxAnswersAReadTimeoutOnceOnTime(t *testing.T) {
	eps := startEndpoints(t, 3)
	c := startBalancing(t, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), ReadTimeoutSeconds: 1}})
	c.do(http.MethodGet, "/warm-up", "")
	began := time.Now()
	status, _, _ := c.do(http.MethodGet, "/?sleep=4s", "")
	took := time.Since(began)
	if status != http.StatusGatewayTimeout || took < time.Second || took > 2500*time.Millisecond {
		t.Errorf("a request outlasting the 1 s read timeout: %d after %s, want 504 after 1 s", status, took.Round(time.Millisecond))
	}
	if tries := len(eps.slow); tries != 1 {
		t.Errorf("the request that timed out reached %d endpoints, want 1", tries)
	}

	refused := startBalancing(t, v1beta1.Location{Path: "/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t, closedPort(t))}})
	for range 6 {
		if status, server, _ := refused.do(http.MethodGet, "/", ""); status != http.StatusOK || server == "" {
			t.Fatalf("with one endpoint refusing connections: %d from %q, want every request answered by another", status, server)
		}
	}
}

// TestRealNginxSendsRequestsWithoutTheHashKeyToOneEndpoint: hash and hash
// consistent on a header, a cookie or a query parameter send every
// request that lacks it to one endpoint (nginx alone would spread them
// round robin).
func TestRealNginxSendsRequestsWithoutTheHashKeyToOneEndpoint(t *testing.T) {
	eps := startEndpoints(t, 3)
	c := startBalancing(t,
		v1beta1.Location{Path: "/header/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "hash",
			HashKey: &v1beta1.HashKey{Source: "Header", Name: "X-User"}}},
		v1beta1.Location{Path: "/cookie/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "hash consistent",
			HashKey: &v1beta1.HashKey{Source: "Cookie", Name: "user"}}},
		v1beta1.Location{Path: "/query/", Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), LoadBalancingMethod: "hash consistent",
			HashKey: &v1beta1.HashKey{Source: "QueryParameter", Name: "user"}}},
	)
	for _, path := range []string{"/header/", "/cookie/", "/query/"} {
		counts := c.count(20, func(int) (int, string, string) { return c.do(http.MethodGet, path, "") })
		if len(counts) != 1 {
			t.Errorf("%s: 20 requests without the key went %v, want one endpoint", path, counts)
		}
	}
}

// TestRealNginxKeepsTryingTheServiceAddressAfterOneFailure: when every
// listed pod is gone, nginx tries the Service's own address, the backup;
// kube-proxy there picks a pod per connection, so one connection that
// fails says nothing of the next. A backup nginx marks failed after one
// failure (its default max_fails=1) turned every request of the next 10 s
// into a 502.
func TestRealNginxKeepsTryingTheServiceAddressAfterOneFailure(t *testing.T) {
	nginxBin := tools.Nginx(t)
	// The Service's address: 127.0.0.2 at the Service port, where the
	// first connection is dropped (a pod kube-proxy still lists, gone) and
	// the next are answered.
	vip, err := net.Listen("tcp", "127.0.0.2:0")
	tools.Must(t, err)
	vipServer := &http.Server{Handler: echo.Handler("vip"), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = vipServer.Serve(&dropFirst{Listener: vip}) }()
	t.Cleanup(func() { _ = vipServer.Close() })
	servicePort := int32(vip.Addr().(*net.TCPAddr).Port)

	port := int32(tools.Port(t))
	spec := validationtest.Spec(t, v1beta1.NginxOperatorSpec{
		Ports:     []v1beta1.Port{{Name: "http", ContainerPort: port}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{
			{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: servicePort}}}}}},
	})
	// The one pod nginx knows of is gone: its connections are refused.
	services := map[string]Service{"api": {Address: "127.0.0.2", AtEndpoints: true,
		Endpoints: map[int32][]string{servicePort: {fmt.Sprintf("127.0.0.1:%d", closedPort(t))}}}}
	proc := startRenderedWith(t, nginxBin, spec, int32(tools.Port(t)), nil, nil, services)
	c := &balancingClient{t: t, proc: proc, base: fmt.Sprintf("http://127.0.0.1:%d", port)}

	if status, _, _ := c.do(http.MethodGet, "/", ""); status != http.StatusBadGateway {
		t.Fatalf("the pod gone and the Service's address dropping the connection: %d, want 502", status)
	}
	for i := range 3 {
		if status, server, _ := c.do(http.MethodGet, "/", ""); status != http.StatusOK || server != "vip" {
			t.Errorf("request %d after the Service's address failed once: %d from %q, want it answered there", i+1, status, server)
		}
	}
}

// dropFirst is a listener that closes the first connection it accepts.
type dropFirst struct {
	net.Listener
	once sync.Once
}

func (l *dropFirst) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	dropped := false
	l.once.Do(func() {
		if err == nil {
			_ = conn.Close()
			dropped = true
		}
	})
	if dropped {
		return l.Listener.Accept()
	}
	return conn, err
}

// closedPort is a loopback port nothing listens on: a connection to it is
// refused at once.
func closedPort(t *testing.T) int32 { return int32(tools.Port(t)) }

// TestRealNginxKeepsGatewayTimeoutsToTheMillisecond: a request timeout of
// 300 ms answers a slow Service 504 within it and tries no other endpoint;
// "0s" waits for the Service however long it takes; a backendRequest of
// 300 ms under a 5 s request, with retries on timeouts, gives each of the
// three endpoints its 300 ms in turn.
func TestRealNginxKeepsGatewayTimeoutsToTheMillisecond(t *testing.T) {
	eps := startEndpoints(t, 3)
	proxy := func(timeouts v1beta1.ProxyTimeouts, retry *v1beta1.ProxyRetry) *v1beta1.ProxyLocation {
		return &v1beta1.ProxyLocation{Backends: eps.backends(t), Timeouts: &timeouts, Retry: retry}
	}
	c := startBalancing(t,
		v1beta1.Location{Path: "/request", Proxy: proxy(v1beta1.ProxyTimeouts{Request: "300ms"}, nil)},
		v1beta1.Location{Path: "/off", Proxy: proxy(v1beta1.ProxyTimeouts{Request: "0s"}, nil)},
		v1beta1.Location{Path: "/per-try", Proxy: proxy(v1beta1.ProxyTimeouts{Request: "5s", BackendRequest: "300ms"},
			&v1beta1.ProxyRetry{Conditions: []string{"timeout"}, Tries: 3, TimeoutSeconds: 60})},
	)
	c.do(http.MethodGet, "/request/warm-up", "")
	cases := []struct {
		path            string
		status, reached int
		atLeast, atMost time.Duration
	}{
		// The upper bounds leave room for a loaded machine: a 504 before
		// the Service's answer (2 s, 3 s) is what shows the timeout.
		{"/request?sleep=2s", http.StatusGatewayTimeout, 1, 300 * time.Millisecond, 1500 * time.Millisecond},
		{"/off?sleep=1500ms", http.StatusOK, 1, 1500 * time.Millisecond, 3 * time.Second},
		{"/per-try?sleep=3s", http.StatusGatewayTimeout, 3, 900 * time.Millisecond, 2700 * time.Millisecond},
	}
	for _, tc := range cases {
		for len(eps.slow) > 0 {
			<-eps.slow
		}
		began := time.Now()
		status, _, _ := c.do(http.MethodGet, tc.path, "")
		took := time.Since(began)
		if status != tc.status || took < tc.atLeast || took > tc.atMost || len(eps.slow) != tc.reached {
			t.Errorf("GET %s: %d after %s reaching %d endpoints; want %d after %s to %s reaching %d",
				tc.path, status, took.Round(time.Millisecond), len(eps.slow), tc.status, tc.atLeast, tc.atMost, tc.reached)
		}
	}
}
