package realpods

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// BenchmarkGatewayScale measures one Gateway as NGINX Gateway Fabric's
// scale tests do, on the real node with bundle.yaml's defaults (the
// operator's two replicas, a Gateway instance of one nginx pod):
//
//   - routes/hostnames: HTTPRoutes attached one at a time to a listener
//     for *.example.com, each for a hostname of its own (NGF's shape);
//   - routes/paths: HTTPRoutes attached one at a time to one hostname,
//     each for a path of its own;
//   - listeners: a Gateway of BENCH_LISTENERS (64) HTTPS listeners;
//   - endpoints: one route to a Service of BENCH_ENDPOINTS (1,000)
//     endpoints, and one of them going.
//
// For each route it times the apply until a client through the Gateway's
// Service gets the route's backend, and it reads nginx's reload times from
// the reloader's log, the reloads per change from its metrics, the size
// of nginx.conf, and the operator's CPU time and memory from its
// processes. A route the Gateway does not accept ends the series, which
// reports how many fit and why the next did not. Run it with
//
//	go test ./test/realpods -run '^$' -bench BenchmarkGatewayScale -benchtime 1x -timeout 3h
//
// (BENCH_ROUTES, default 1,000, is how many routes each series tries;
// BENCH_CHAIN_TRACE=1 prints the times of each route's way to nginx, whose
// stages the routes series report).
func BenchmarkGatewayScale(b *testing.B) {
	b.Run("routes/hostnames", func(b *testing.B) {
		benchRoutes(b, "*.example.com", func(i int) (host, path string) { return fmt.Sprintf("%d.example.com", i), "/" })
	})
	b.Run("routes/paths", func(b *testing.B) {
		benchRoutes(b, "", func(i int) (host, path string) { return "app.example.com", fmt.Sprintf("/r%d", i) })
	})
	b.Run("listeners", benchListeners)
	b.Run("endpoints", benchEndpoints)
}

// benchEnv is one series' namespace, clients and Gateway class.
type benchEnv struct {
	ctx  context.Context
	cfg  *rest.Config
	ns   string
	cs   kubernetes.Interface
	cl   client.Client
	dial dialer
	// operator is the operator's processes' resource use at the start.
	operator processUse
}

func newBenchEnv(b *testing.B) *benchEnv {
	ctx, c, ns, cs, cl := setupFor(b, 3*time.Hour)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	tools.Must(b, cl.Create(ctx, class))
	b.Cleanup(func() { _ = cl.Delete(context.Background(), class) })
	runTestServers(ctx, b, cs, ns, "v1", 1)
	runTestServers(ctx, b, cs, ns, "v2", 1)
	e := &benchEnv{ctx: ctx, cfg: c.Config, ns: ns, cs: cs, cl: cl, dial: realcluster.NodeOf(c).DialContext}
	e.operator = operatorUse(ctx, b, cs)
	return e
}

// gateway creates the Gateway web of listeners and waits until it is
// programmed; it returns the base URL of its Service's port.
func (e *benchEnv) gateway(b *testing.B, port int, listeners ...gatewayv1.Listener) string {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(e.ns), Listeners: listeners}}
	tools.Must(b, e.cl.Create(e.ctx, gw))
	e.waitProgrammed(b, 3*time.Minute)
	return fmt.Sprintf("http://%s:%d", clusterIP(e.ctx, b, e.cs, e.ns, graph.InstanceName("web")), port)
}

// waitProgrammed waits until the Gateway web is Programmed, or fails
// the benchmark with its conditions.
func (e *benchEnv) waitProgrammed(b *testing.B, timeout time.Duration) {
	tools.Eventually(b, timeout, "the Gateway Programmed", func() error {
		var got gatewayv1.Gateway
		if err := e.cl.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})
}

// instance is the name of the Gateway's NginxOperator.
func (e *benchEnv) instance() string { return graph.InstanceName("web") }

// benchRoutes attaches BENCH_ROUTES routes one at a time, the i-th for
// hostAndPath(i) to the backend v1, and reports how soon each served.
func benchRoutes(b *testing.B, listenerHost string, hostAndPath func(i int) (host, path string)) {
	e := newBenchEnv(b)
	l := gatewayv1.Listener{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}
	if listenerHost != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(listenerHost))
	}
	base := e.gateway(b, 80, l)
	n := benchCount(b, "BENCH_ROUTES", 1000)
	reloadsBefore := e.reloads(b)
	clock := e.startChainClock(b)
	began := time.Now()
	var served []time.Duration
	var changes []change
	var stopped string
	for i := range n {
		host, path := hostAndPath(i)
		rt := benchRoute(e.ns, fmt.Sprintf("r%04d", i), host, path, "v1")
		applied := time.Now()
		tools.Must(b, e.cl.Create(e.ctx, rt))
		took, err := e.servedBy(base, host, path, "v1-", applied, rt)
		if err != nil {
			stopped = fmt.Sprintf("route %d of %d: %v", i+1, n, err)
			break
		}
		served = append(served, took)
		changes = append(changes, change{applied: applied, served: applied.Add(took)})
		if (i+1)%100 == 0 {
			b.Logf("%d routes: the last 100 served in p50 %s, p95 %s", i+1, percentile(served[i-99:], 50), percentile(served[i-99:], 95))
		}
	}
	attach := time.Since(began)
	// A change at that size: the newest route's backend, back and forth.
	var changed []time.Duration
	var changeChain []change
	if len(served) > 0 {
		last := len(served) - 1
		host, path := hostAndPath(last)
		for j := range benchCount(b, "BENCH_CHANGES", 20) {
			backend := []string{"v2", "v1"}[j%2]
			var rt gatewayv1.HTTPRoute
			tools.Must(b, e.cl.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: fmt.Sprintf("r%04d", last)}, &rt))
			rt.Spec.Rules[0].BackendRefs[0].Name = gatewayv1.ObjectName(backend)
			applied := time.Now()
			tools.Must(b, e.cl.Update(e.ctx, &rt))
			took, err := e.servedBy(base, host, path, backend+"-", applied, &rt)
			if err != nil {
				b.Fatalf("change %d of route %s: %v", j+1, rt.Name, err)
			}
			changed = append(changed, took)
			changeChain = append(changeChain, change{applied: applied, served: applied.Add(took)})
		}
	}
	e.report(b, benchReport{routes: len(served), served: served, changed: changed, stopped: stopped,
		reloads: e.reloads(b) - reloadsBefore, changes: len(served) + len(changed), elapsed: attach})
	spans := e.reloadSpans(b)
	b.Logf("where the time of a route added goes:\n%s", clock.stages(changes, spans))
	// Twenty changes make a p95 of the second slowest: each is printed, and
	// where its time went.
	b.Logf("each change served after %v; where the time of a change goes:\n%s", rounded(changed), clock.stages(changeChain, spans))
}

// benchRoute is an HTTPRoute of the Gateway web sending host and path
// (a PathPrefix) to port 80 of service.
func benchRoute(ns, name, host, path, service string) *gatewayv1.HTTPRoute {
	rt := httpRoute(ns, name, path, service, false)
	rt.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(host)}
	return rt
}

// servedBy polls base+path with Host host, each try on a new connection,
// until a pod whose name starts with pod answers servedInARow times in a
// row; it returns the time from applied to the first of those. It gives
// up after a minute, or at once when the route is not accepted, with the
// route's condition.
func (e *benchEnv) servedBy(base, host, path, pod string, applied time.Time, rt *gatewayv1.HTTPRoute) (time.Duration, error) {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: e.dial, DisableKeepAlives: true}}
	deadline := applied.Add(time.Minute)
	var streak servedStreak
	for tries := 0; time.Now().Before(deadline); tries++ {
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, base+path, nil)
		req.Host = host
		name, err := answeringRequest(hc, req)
		if streak.record(err == nil && strings.HasPrefix(name, pod)) {
			return streak.first.Sub(applied), nil
		}
		if tries%50 == 49 {
			if c := routeCondition(e.ctx, e.cl, rt, "Accepted"); strings.HasPrefix(c, "False/") {
				return 0, fmt.Errorf("not accepted: %s: %s", c, routeMessage(e.ctx, e.cl, rt))
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, fmt.Errorf("not served by a pod %s* within a minute; Accepted %s", pod, routeCondition(e.ctx, e.cl, rt, "Accepted"))
}

// servedInARow is how many answers in a row from the new backend make a
// change served: during a reload nginx's old workers still take some
// connections, and one answer could come from a new worker that a later
// one contradicts.
const servedInARow = 3

// servedStreak counts the answers in a row from the backend polled for.
type servedStreak struct {
	n     int
	first time.Time // of the streak
}

// record adds one answer, good or not, and reports whether the streak is
// long enough.
func (s *servedStreak) record(good bool) bool {
	switch {
	case !good:
		s.n = 0
	case s.n == 0:
		s.n, s.first = 1, time.Now()
	default:
		s.n++
	}
	return s.n >= servedInARow
}

// routeMessage is the message of the route's Accepted condition.
func routeMessage(ctx context.Context, cl client.Client, rt *gatewayv1.HTTPRoute) string {
	var got gatewayv1.HTTPRoute
	if cl.Get(ctx, client.ObjectKeyFromObject(rt), &got) != nil || len(got.Status.Parents) == 0 {
		return ""
	}
	if c := meta.FindStatusCondition(got.Status.Parents[0].Conditions, "Accepted"); c != nil {
		return c.Message
	}
	return ""
}

// benchListeners creates a Gateway of BENCH_LISTENERS HTTPS listeners,
// each for a hostname of its own with a certificate of its own, and one
// route attached to all, and times until every hostname serves.
func benchListeners(b *testing.B) {
	e := newBenchEnv(b)
	n := benchCount(b, "BENCH_LISTENERS", 64)
	ca, err := tools.NewCA("bench", time.Hour)
	tools.Must(b, err)
	var listeners []gatewayv1.Listener
	for i := range n {
		host := fmt.Sprintf("h%d.example.com", i)
		certPEM, keyPEM, err := ca.Issue(tools.Server(host), time.Hour)
		tools.Must(b, err)
		name := fmt.Sprintf("cert-%d", i)
		tlsSecret(e.ctx, b, e.cs, e.ns, name, certPEM, keyPEM)
		listeners = append(listeners, gatewayv1.Listener{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), Port: 443,
			Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host)),
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(name)}}}})
	}
	applied := time.Now()
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(e.ns), Listeners: listeners}}
	tools.Must(b, e.cl.Create(e.ctx, gw))
	rt := httpRoute(e.ns, "all", "/", "v1", false)
	tools.Must(b, e.cl.Create(e.ctx, rt))
	var stopped string
	var served []time.Duration
	for i := range n {
		host := fmt.Sprintf("h%d.example.com", i)
		took, err := e.servedOverTLS(ca.Pool(), fmt.Sprintf("l%d", i), host, applied, "v1-")
		if err != nil {
			stopped = fmt.Sprintf("listener %d of %d (%s): %v", i+1, n, host, err)
			break
		}
		served = append(served, took)
	}
	all := time.Since(applied)
	var changed []time.Duration
	if len(served) > 0 {
		for j := range benchCount(b, "BENCH_CHANGES", 20) {
			backend := []string{"v2", "v1"}[j%2]
			tools.Must(b, e.cl.Get(e.ctx, client.ObjectKeyFromObject(rt), rt))
			rt.Spec.Rules[0].BackendRefs[0].Name = gatewayv1.ObjectName(backend)
			began := time.Now()
			tools.Must(b, e.cl.Update(e.ctx, rt))
			l := j % len(served)
			took, err := e.servedOverTLS(ca.Pool(), fmt.Sprintf("l%d", l), fmt.Sprintf("h%d.example.com", l), began, backend+"-")
			if err != nil {
				b.Fatalf("change %d: %v", j+1, err)
			}
			changed = append(changed, took)
		}
	}
	e.report(b, benchReport{listeners: len(served), served: served, changed: changed, stopped: stopped,
		reloads: e.reloads(b), changes: 1 + len(changed), elapsed: all})
}

// servedOverTLS polls https://<the Service>:443/ with SNI and Host host
// until a pod whose name starts with pod answers servedInARow times in a
// row, and returns the time from applied to the first of those. It gives
// up after 3 minutes, or at once when the Gateway says the listener is not
// programmed for a reason waiting will not cure.
func (e *benchEnv) servedOverTLS(pool *x509.CertPool, listener, host string, applied time.Time, pod string) (time.Duration, error) {
	tr := &http.Transport{DialContext: e.dial, DisableKeepAlives: true, TLSClientConfig: &tls.Config{ServerName: host, RootCAs: pool}}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: tr}
	var addr string
	var lastErr error
	var streak servedStreak
	for tries := 0; time.Since(applied) < 3*time.Minute; tries++ {
		if tries%50 == 49 {
			if why := e.listenerRefused(listener); why != "" {
				return 0, fmt.Errorf("not programmed: %s", why)
			}
		}
		if addr == "" {
			if svc, err := e.cs.CoreV1().Services(e.ns).Get(e.ctx, layout.NamesFor(e.instance()).Service, metav1.GetOptions{}); err == nil {
				addr = net.JoinHostPort(svc.Spec.ClusterIP, "443")
			}
		}
		if addr != "" {
			req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, "https://"+addr+"/", nil)
			req.Host = host
			name, err := answeringRequest(hc, req)
			if streak.record(err == nil && strings.HasPrefix(name, pod)) {
				return streak.first.Sub(applied), nil
			}
			lastErr = err
		}
		time.Sleep(10 * time.Millisecond)
	}
	var gw gatewayv1.Gateway
	_ = e.cl.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &gw)
	return 0, fmt.Errorf("not served within 3 minutes (last: %v); the Gateway's conditions: %+v", lastErr, gw.Status.Conditions)
}

// listenerRefused is the listener's Programmed condition when it is False
// for another reason than Pending (nginx not serving it yet), "" otherwise.
func (e *benchEnv) listenerRefused(name string) string {
	var gw gatewayv1.Gateway
	if e.cl.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &gw) != nil {
		return ""
	}
	for _, l := range gw.Status.Listeners {
		if c := meta.FindStatusCondition(l.Conditions, string(gatewayv1.ListenerConditionProgrammed)); string(l.Name) == name && c != nil &&
			c.Status == metav1.ConditionFalse && c.Reason != string(gatewayv1.ListenerReasonPending) {
			return "False/" + c.Reason + ": " + c.Message
		}
	}
	return ""
}

// benchEndpoints sends one route to a Service of BENCH_ENDPOINTS
// endpoints: BENCH_ENDPOINT_PODS test servers each listening on as many
// ports, listed in EndpointSlices as a controller would list them (one
// slice per port), and times until it serves, then until the pods load a
// configuration without the endpoints of one slice.
func benchEndpoints(b *testing.B) {
	e := newBenchEnv(b)
	total := benchCount(b, "BENCH_ENDPOINTS", 1000)
	pods := benchCount(b, "BENCH_ENDPOINT_PODS", 10)
	perPod := (total + pods - 1) / pods
	const firstPort = 20000
	labels := map[string]string{"app": "many"}
	deployment := testServerDeployment("many", int32(pods), labels, corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{{
		Name: "server", Image: realcluster.TestServer.Name, Args: []string{"serve-ports", strconv.Itoa(firstPort), strconv.Itoa(firstPort + perPod - 1)},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(firstPort + perPod - 1)}}, PeriodSeconds: 1},
		SecurityContext: realcluster.RestrictedContainer(),
	}}})
	_, err := e.cs.AppsV1().Deployments(e.ns).Create(e.ctx, deployment, metav1.CreateOptions{})
	tools.Must(b, err)
	var ips []string
	tools.Eventually(b, 3*time.Minute, "the servers ready", func() error {
		list, err := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=many"})
		if err != nil {
			return err
		}
		ips = nil
		for _, p := range list.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.Status.PodIP != "" {
					ips = append(ips, p.Status.PodIP)
				}
			}
		}
		if len(ips) != pods {
			return fmt.Errorf("%d of %d ready", len(ips), pods)
		}
		return nil
	})
	// A Service without a selector, whose slices the benchmark writes: one
	// per port, listing every pod.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "many"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt(firstPort)}}}}
	_, err = e.cs.CoreV1().Services(e.ns).Create(e.ctx, svc, metav1.CreateOptions{})
	tools.Must(b, err)
	for p := range perPod {
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: fmt.Sprintf("many-%d", p), Labels: map[string]string{discoveryv1.LabelServiceName: "many"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(firstPort + p)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		for _, ip := range ips {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		_, err := e.cs.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, slice, metav1.CreateOptions{})
		tools.Must(b, err)
	}
	base := e.gateway(b, 80, gatewayv1.Listener{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType})
	rt := httpRoute(e.ns, "many", "/", "many", false)
	applied := time.Now()
	tools.Must(b, e.cl.Create(e.ctx, rt))
	took, err := e.servedBy(base, "many.example.com", "/", "many-", applied, rt)
	if err != nil {
		b.Fatal(err)
	}
	// One slice's endpoints go: timed until every pod of the instance runs
	// the configuration without them.
	began := time.Now()
	tools.Must(b, e.cs.DiscoveryV1().EndpointSlices(e.ns).Delete(e.ctx, "many-0", metav1.DeleteOptions{}))
	loaded := e.waitLoaded(b, began, fmt.Sprintf("%s:%d", ips[0], firstPort))
	e.report(b, benchReport{endpoints: pods * perPod, served: []time.Duration{took}, changed: []time.Duration{loaded},
		reloads: -1, changes: 2, elapsed: time.Since(applied)})
}

// waitLoaded waits until nginx.conf no longer names gone and every pod of
// the instance reports it loaded (the reloader's /status hash), and
// returns the time since began.
func (e *benchEnv) waitLoaded(b *testing.B, began time.Time, gone string) time.Duration {
	var took time.Duration
	tools.Eventually(b, 2*time.Minute, "the pods load a configuration without "+gone, func() error {
		conf, hash := e.config(b)
		if strings.Contains(conf, gone) {
			return fmt.Errorf("nginx.conf still names %s", gone)
		}
		for _, pod := range e.instancePods(b) {
			var st struct{ Hash string }
			if err := e.getJSON(fmt.Sprintf("http://%s/status", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(layout.ReloaderPort))), &st); err != nil {
				return err
			}
			if st.Hash != hash {
				return fmt.Errorf("pod %s runs %s, want %s", pod.Name, st.Hash, hash)
			}
		}
		took = time.Since(began)
		return nil
	})
	return took
}

// benchReport is what a series measured.
type benchReport struct {
	routes, listeners, endpoints int
	served, changed              []time.Duration
	stopped                      string
	reloads, changes             int // reloads -1: not counted
	elapsed                      time.Duration
}

// report prints r with the reloads' times, nginx.conf's size and the
// operator's use since the series began, and reports them as the
// benchmark's metrics.
func (e *benchEnv) report(b *testing.B, r benchReport) {
	reloads := e.reloadTimes(b)
	conf, _ := e.config(b)
	use := operatorUse(e.ctx, b, e.cs)
	cpu := use.cpu - e.operator.cpu
	lines := []string{
		fmt.Sprintf("served after apply: p50 %s, p95 %s, max %s (%d)", percentile(r.served, 50), percentile(r.served, 95), percentile(r.served, 100), len(r.served)),
		fmt.Sprintf("a change served:    p50 %s, p95 %s, max %s (%d)", percentile(r.changed, 50), percentile(r.changed, 95), percentile(r.changed, 100), len(r.changed)),
		fmt.Sprintf("nginx reloads:      p50 %s, p95 %s, max %s (%d, the reloader's log)", percentile(reloads, 50), percentile(reloads, 95), percentile(reloads, 100), len(reloads)),
		fmt.Sprintf("pushed configs:     %d (the pods' reloader_pushes_total)", e.reloaderCounter(b, "reloader_pushes_total")),
		fmt.Sprintf("nginx.conf:         %d bytes", len(conf)),
		fmt.Sprintf("operator:           %.1f s CPU over %s, RSS %.1f MiB (anonymous %.1f MiB), peak %.1f MiB", cpu, r.elapsed.Round(time.Second), use.rssMiB, use.anonMiB, use.peakMiB),
	}
	if r.reloads >= 0 && r.changes > 0 {
		lines = append(lines, fmt.Sprintf("reloads per change: %.2f (%d reloads, %d changes)", float64(r.reloads)/float64(r.changes), r.reloads, r.changes))
		b.ReportMetric(float64(r.reloads)/float64(r.changes), "reloads/change")
	}
	if r.stopped != "" {
		lines = append(lines, "stopped at "+r.stopped)
	}
	b.Logf("routes %d, listeners %d, endpoints %d\n%s", r.routes, r.listeners, r.endpoints, strings.Join(lines, "\n"))
	b.ReportMetric(float64(max(r.routes, r.listeners, r.endpoints)), "objects")
	b.ReportMetric(ms(percentile(r.served, 95)), "served-p95-ms")
	b.ReportMetric(ms(percentile(r.changed, 95)), "change-p95-ms")
	b.ReportMetric(ms(percentile(reloads, 50)), "reload-p50-ms")
	b.ReportMetric(ms(percentile(reloads, 95)), "reload-p95-ms")
	b.ReportMetric(float64(len(conf)), "conf-bytes")
	b.ReportMetric(cpu, "operator-cpu-s")
	b.ReportMetric(use.rssMiB, "operator-rss-MiB")
}

// rounded is ds to the millisecond, for a log line.
func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the p-th percentile of ds (nearest rank), 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))].Round(time.Millisecond)
}

// benchCount is the positive integer in the environment variable name, or
// def.
func benchCount(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// instancePods are the Gateway instance's running pods.
func (e *benchEnv) instancePods(b *testing.B) []corev1.Pod {
	list, err := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(layout.Selector(e.instance())).String()})
	tools.Must(b, err)
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// config is the instance's nginx.conf and its hash ("" before the
// instance has one).
func (e *benchEnv) config(b *testing.B) (string, string) {
	s, err := e.cs.CoreV1().Secrets(e.ns).Get(e.ctx, layout.NamesFor(e.instance()).ConfigSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", ""
	}
	tools.Must(b, err)
	return string(s.Data[layout.ConfigFile]), s.Annotations[layout.ConfigHashAnnotation]
}

// getJSON reads url from the node into v.
func (e *benchEnv) getJSON(url string, v any) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: e.dial}}
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// reloads is the sum of reloader_reloads_total over the instance's pods.
func (e *benchEnv) reloads(b *testing.B) int { return e.reloaderCounter(b, "reloader_reloads_total") }

// reloaderCounter is the sum of the reloader's counter name over the
// instance's pods.
func (e *benchEnv) reloaderCounter(b *testing.B, name string) int {
	sample := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`)
	total := 0
	for _, pod := range e.instancePods(b) {
		hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: e.dial}}
		resp, err := hc.Get(fmt.Sprintf("http://%s/metrics", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(layout.ReloaderPort))))
		if err != nil {
			b.Fatalf("reading the reloader's metrics of %s: %v", pod.Name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := sample.FindSubmatch(body)
		if m == nil {
			b.Fatalf("pod %s: no %s in\n%s", pod.Name, name, body)
		}
		n, _ := strconv.Atoi(string(m[1]))
		total += n
	}
	return total
}

// reloadTimes are the durations of every reload of the instance's pods
// (see reloadSpans).
func (e *benchEnv) reloadTimes(b *testing.B) []time.Duration {
	var out []time.Duration
	for _, r := range e.reloadSpans(b) {
		out = append(out, r.end.Sub(r.start))
	}
	return out
}

// processUse is the operator's processes' CPU time (seconds, all of
// them) and the memory of the largest (the leader).
type processUse struct {
	cpu                      float64
	rssMiB, anonMiB, peakMiB float64
}

// operatorUse reads the operator pods' processes on this machine (the
// node's containers are its processes): /proc/<pid>/cgroup names the pod.
func operatorUse(ctx context.Context, b *testing.B, cs kubernetes.Interface) processUse {
	list, err := cs.CoreV1().Pods(realcluster.OperatorNamespace).List(ctx, metav1.ListOptions{})
	tools.Must(b, err)
	var uids []string
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, realcluster.OperatorDeployment+"-") && p.Status.Phase == corev1.PodRunning {
			uids = append(uids, string(p.UID))
		}
	}
	procs, err := filepath.Glob("/proc/[0-9]*/cgroup")
	tools.Must(b, err)
	var use processUse
	for _, f := range procs {
		cg, err := os.ReadFile(f)
		if err != nil || !slices.ContainsFunc(uids, func(uid string) bool {
			return strings.Contains(string(cg), uid) || strings.Contains(string(cg), strings.ReplaceAll(uid, "-", "_"))
		}) {
			continue
		}
		dir := filepath.Dir(f)
		if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
			// The fields after the command's closing parenthesis: utime
			// and stime are the 12th and 13th, in clock ticks (100 a
			// second on Linux).
			fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(fields) > 12 {
				u, _ := strconv.ParseFloat(fields[11], 64)
				s, _ := strconv.ParseFloat(fields[12], 64)
				use.cpu += (u + s) / 100
			}
		}
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue
		}
		kib := func(key string) float64 {
			m := regexp.MustCompile(`(?m)^` + key + `:\s+(\d+) kB`).FindSubmatch(status)
			if m == nil {
				return 0
			}
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			return v / 1024
		}
		if rss := kib("VmRSS"); rss > use.rssMiB {
			use.rssMiB, use.anonMiB, use.peakMiB = rss, kib("RssAnon"), kib("VmHWM")
		}
	}
	if use.rssMiB == 0 {
		b.Fatalf("no process of the operator's pods %v found in /proc", uids)
	}
	return use
}
