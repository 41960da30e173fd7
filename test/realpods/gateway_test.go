package realpods

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/echo"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// httpRoute is a route of the Gateway "web" sending path (a PathPrefix,
// or a RegularExpression when regex) to port 80 of service.
func httpRoute(ns, name, path, service string, regex bool) *gatewayv1.HTTPRoute {
	pathType := gatewayv1.PathMatchPathPrefix
	if regex {
		pathType = gatewayv1.PathMatchRegularExpression
	}
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}}},
		Rules: []gatewayv1.HTTPRouteRule{{
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &pathType, Value: ptr.To(path)}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(service), Port: ptr.To(gatewayv1.PortNumber(80))}}}},
		}},
	}}
}

// routeCondition is the route's condition typ for its one parent, as
// status/reason.
func routeCondition(ctx context.Context, cl client.Client, rt *gatewayv1.HTTPRoute, typ string) string {
	var got gatewayv1.HTTPRoute
	if cl.Get(ctx, client.ObjectKeyFromObject(rt), &got) != nil || len(got.Status.Parents) != 1 {
		return ""
	}
	if c := meta.FindStatusCondition(got.Status.Parents[0].Conditions, typ); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return ""
}

// waitProgrammed waits for gw's Programmed condition: its instance and
// Service exist.
func waitProgrammed(ctx context.Context, t *testing.T, cl client.Client, gw *gatewayv1.Gateway) {
	t.Helper()
	tools.Eventually(t, 2*time.Minute, "the Gateway Programmed", func() error {
		var got gatewayv1.Gateway
		if err := cl.Get(ctx, client.ObjectKeyFromObject(gw), &got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})
}

// A Gateway as its clients see it, through its instance's Service: routes
// added, changed and broken under load while every request of the routes
// that stay good is answered, each by the backend its route names at the
// time.
func TestAGatewayChangesRoutesUnderLoadWithoutLosingARequest(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	runTestServers(ctx, t, cs, ns, "v1", 2)
	runTestServers(ctx, t, cs, ns, "v2", 2)

	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	tools.Must(t, cl.Create(ctx, class))
	t.Cleanup(func() { _ = cl.Delete(context.Background(), class) })
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	a := httpRoute(ns, "a", "/a", "v1", false)
	tools.Must(t, cl.Create(ctx, gw))
	tools.Must(t, cl.Create(ctx, a))

	waitProgrammed(ctx, t, cl, gw)
	base := fmt.Sprintf("http://%s:80", clusterIP(ctx, t, cs, ns, graph.InstanceName("web")))
	servedBy := func(what, path, backend string) {
		t.Helper()
		if !framework.WaitFor(ctx, time.Minute, func(ctx context.Context) bool {
			pod, err := answeringPod(ctx, keepAliveClient(dial), base+path)
			return err == nil && strings.HasPrefix(pod, backend+"-")
		}) {
			pod, err := answeringPod(ctx, keepAliveClient(dial), base+path)
			t.Fatalf("%s: %s answered by %q (%v), want a pod of %s", what, path, pod, err, backend)
		}
	}
	servedBy("the first route", "/a", "v1")

	load := startLoad(ctx, dial, base+"/a", 4)
	began := time.Now()
	b := httpRoute(ns, "b", "/b", "v2", false)
	tools.Must(t, cl.Create(ctx, b))
	servedBy("a route added", "/b", "v2")
	added := time.Since(began)

	began = time.Now()
	framework.Update(ctx, t, cl, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a.Name}}, func(r *gatewayv1.HTTPRoute) {
		r.Spec.Rules[0].BackendRefs[0].Name = "v2"
	})
	servedBy("a route changed to another backend", "/a", "v2")
	changed := time.Since(began)

	// Two broken routes: one whose backend does not exist (its rule answers
	// 500) and one whose regular expression RE2 refuses (not accepted).
	missing := httpRoute(ns, "missing", "/missing", "nowhere", false)
	badRegex := httpRoute(ns, "bad-regex", "/x(", "v1", true)
	tools.Must(t, cl.Create(ctx, missing))
	tools.Must(t, cl.Create(ctx, badRegex))
	tools.Eventually(t, time.Minute, "the broken routes told why", func() error {
		if got := routeCondition(ctx, cl, missing, "ResolvedRefs"); got != "False/BackendNotFound" {
			return fmt.Errorf("route missing: ResolvedRefs %q", got)
		}
		if got := routeCondition(ctx, cl, badRegex, "Accepted"); got != "False/UnsupportedValue" {
			return fmt.Errorf("route bad-regex: Accepted %q", got)
		}
		return nil
	})
	tools.Eventually(t, time.Minute, "the missing backend's rule answering 500", func() error {
		resp, err := keepAliveClient(dial).Get(base + "/missing")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	servedBy("the good routes beside broken ones", "/b", "v2")
	servedBy("the good routes beside broken ones", "/a", "v2")

	got := load.stop()
	t.Logf("route added served in %s, route changed served in %s; %d GETs of /a meanwhile, %d failed, slowest %s",
		added.Round(time.Millisecond), changed.Round(time.Millisecond), got.total, len(got.failures), got.slowest.Round(time.Millisecond))
	if got.total == 0 {
		t.Fatal("no request was sent")
	}
	for _, err := range got.failures[:min(5, len(got.failures))] {
		t.Errorf("a GET of /a failed while routes changed: %v", err)
	}
	// The load itself went from v1's pods to v2's.
	seen := map[string]bool{}
	for pod := range got.first {
		seen[strings.SplitN(pod, "-", 2)[0]] = true
	}
	if !seen["v1"] || !seen["v2"] {
		t.Errorf("the load of /a was answered by %v, want pods of v1 and then of v2", got.first)
	}
	// The routes reached nginx as the operator pushed them, ahead of the
	// kubelet's update of the pods' volume.
	selector := labels.SelectorFromSet(layout.Selector(graph.InstanceName("web"))).String()
	for pod, st := range reloaderStatuses(ctx, t, cs, dial, ns, selector) {
		if st.Pushes == 0 {
			t.Errorf("pod %s's reloader took no pushed configuration: %+v", pod, st)
		}
	}
}

// The parameters a class names reach the Gateway's nginx as a client sees
// it: two pods behind its Service (parameters' replicas), each refusing a
// body over the parameters' config.clientMaxBodySize with 413 while a
// smaller one reaches the backend.
func TestAGatewaysParametersReachItsPods(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	runTestServers(ctx, t, cs, ns, "v1", 1)
	params := &v1beta1.NginxGatewayParameters{ObjectMeta: metav1.ObjectMeta{Name: "small-bodies", Namespace: ns}, Spec: v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](2),
		Config:   &v1beta1.NginxSettings{ClientMaxBodySize: "1k"},
	}}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{
		ControllerName: graph.ControllerName,
		ParametersRef: &gatewayv1.ParametersReference{Group: gatewayv1.Group(v1beta1.GroupVersion.Group), Kind: gateway.ParametersKind,
			Name: params.Name, Namespace: ptr.To(gatewayv1.Namespace(ns))},
	}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	tools.Must(t, cl.Create(ctx, params))
	tools.Must(t, cl.Create(ctx, class))
	t.Cleanup(func() { _ = cl.Delete(context.Background(), class) })
	tools.Must(t, cl.Create(ctx, gw))
	tools.Must(t, cl.Create(ctx, httpRoute(ns, "a", "/", "v1", false)))

	selector := labels.SelectorFromSet(layout.Selector(graph.InstanceName("web"))).String()
	tools.Eventually(t, 3*time.Minute, "two nginx pods ready", func() error {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		ready := 0
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready != 2 {
			return fmt.Errorf("%d of %d pods ready", ready, len(pods.Items))
		}
		return nil
	})
	base := fmt.Sprintf("http://%s:80", clusterIP(ctx, t, cs, ns, graph.InstanceName("web")))
	post := func(size int) (int, error) {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
		resp, err := hc.Post(base+"/", "application/octet-stream", strings.NewReader(strings.Repeat("x", size)))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	tools.Eventually(t, time.Minute, "a 2 KiB body refused, a 512-byte one passed", func() error {
		// Several times each: the Service spreads the connections over both pods.
		for range 6 {
			if code, err := post(2048); err != nil || code != http.StatusRequestEntityTooLarge {
				return fmt.Errorf("2 KiB: %d, %v", code, err)
			}
			if code, err := post(512); err != nil || code != http.StatusOK {
				return fmt.Errorf("512 bytes: %d, %v", code, err)
			}
		}
		return nil
	})
}

// A Gateway route whose rule names an NginxExternalAuth, as its clients see
// it through the Gateway's Service: without credentials the authentication
// Service's 401 is sent back; with them the backend answers and sees the
// user the authentication Service named, where the client claimed
// another; forbidden credentials get 403.
func TestAGatewayRouteAsksItsNginxExternalAuthAboutEachRequest(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	runTestServers(ctx, t, cs, ns, "auth", 1)
	runTestServers(ctx, t, cs, ns, "members", 1)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	tools.Must(t, cl.Create(ctx, class))
	t.Cleanup(func() { _ = cl.Delete(context.Background(), class) })
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	filter := &v1beta1.NginxExternalAuth{ObjectMeta: metav1.ObjectMeta{Name: "check", Namespace: ns},
		Spec: v1beta1.ExternalAuth{Service: "auth", Port: 80, Path: echo.AuthPath, ResponseHeaders: []string{"X-Auth-User"}}}
	route := httpRoute(ns, "members", "/members", "members", false)
	route.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef,
		ExtensionRef: &gatewayv1.LocalObjectReference{Group: "nginx.operator.dev", Kind: "NginxExternalAuth", Name: "check"}}}
	for _, obj := range []client.Object{gw, filter, route} {
		tools.Must(t, cl.Create(ctx, obj))
	}
	waitProgrammed(ctx, t, cl, gw)
	base := fmt.Sprintf("http://%s:80", clusterIP(ctx, t, cs, ns, graph.InstanceName("web")))
	hc := keepAliveClient(dial)
	ask := func(bearer string) (int, echo.Seen) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/members/page", nil)
		tools.Must(t, err)
		req.Header.Set("X-Auth-User", "mallory")
		if bearer != "" {
			req.Header.Set("Authorization", bearer)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, echo.Seen{}
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		seen, _ := echo.Decode(string(body))
		return resp.StatusCode, seen
	}
	var last string
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		status, seen := ask(echo.AuthorizedBearer)
		last = fmt.Sprintf("%d from %q, X-Auth-User %q", status, seen.Server, seen.Headers.Get("X-Auth-User"))
		return status == http.StatusOK && strings.HasPrefix(seen.Server, "members-") && seen.Headers.Get("X-Auth-User") == echo.AuthorizedUser
	}) {
		t.Fatalf("with credentials: %s; want 200 from members with X-Auth-User %s", last, echo.AuthorizedUser)
	}
	if status, _ := ask(""); status != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", status)
	}
	if status, _ := ask(echo.ForbiddenBearer); status != http.StatusForbidden {
		t.Errorf("forbidden credentials: %d, want 403", status)
	}
	if got := routeCondition(ctx, cl, route, "ResolvedRefs"); got != "True/ResolvedRefs" {
		t.Errorf("route ResolvedRefs %s", got)
	}
}
