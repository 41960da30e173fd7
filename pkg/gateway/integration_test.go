//go:build !unit

package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

var (
	gatewayCRDs    sync.Once
	gatewayCRDsErr error
)

// setup is inprocess.Setup with Gateway API's CRDs installed before the
// operator starts (it looks for them at start).
func setup(t testing.TB) (context.Context, string, client.Client) {
	t.Helper()
	installGatewayCRDs(t)
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	return ctx, ns, c
}

func installGatewayCRDs(t testing.TB) {
	t.Helper()
	cfg := env.Cluster(t).Config
	gatewayCRDs.Do(func() { gatewayCRDsErr = framework.InstallGatewayAPICRDs(context.Background(), cfg) })
	if gatewayCRDsErr != nil {
		t.Fatal(gatewayCRDsErr)
	}
}

// setupNamespaces is setup with n namespaces, all of which the operator
// watches; counter, when not nil, sees the operator's requests.
func setupNamespaces(t *testing.T, n int, counter *inprocess.RequestCounter) (context.Context, []string, client.Client) {
	t.Helper()
	installGatewayCRDs(t)
	cfg := env.Cluster(t).Config
	inprocess.InstallCRDs(t, cfg)
	namespaces := make([]string, n)
	for i := range namespaces {
		namespaces[i], _ = env.Namespace(t)
	}
	inprocess.Start(t, cfg, inprocess.Options(namespaces...), counter)
	return context.Background(), namespaces, inprocess.Client(t, cfg)
}

func create(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// condition is obj's condition of type typ as status/reason, "" if none.
func condition(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return ""
}

func TestAGatewayBecomesOneNginxOperatorAndItsRoutesAreToldWhereTheyStand(t *testing.T) {
	ctx, ns, c := setup(t)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	other := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "other-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/other"}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class); _ = c.Delete(context.Background(), other) })
	api := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}, Selector: map[string]string{"app": "api"}}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	foreign := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(other.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	route := func(name, service string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}}},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/" + name)}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(service), Port: ptr.To(gatewayv1.PortNumber(8080))}}}},
			}},
		}}
	}
	create(t, c, class, other, api, gw, foreign, route("good", "api"), route("broken", "missing"))

	tools.Eventually(t, time.Minute, "the class accepted with its features", func() error {
		var got gatewayv1.GatewayClass
		if err := c.Get(ctx, client.ObjectKeyFromObject(class), &got); err != nil {
			return err
		}
		if condition(got.Status.Conditions, "Accepted") != "True/Accepted" || len(got.Status.SupportedFeatures) != len(gateway.SupportedFeatures) {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("web")}
	tools.Eventually(t, time.Minute, "the instance serving /good from api and /broken with 500", func() error {
		var nginx v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &nginx); err != nil {
			return err
		}
		locations, err := servedLocations(ctx, c, instance)
		if err != nil {
			return err
		}
		// No endpoint controller here: api has no ready endpoint, so /good
		// answers 503 while the instance's upstreams name api.
		if !answers(locations["= /good"], "503") || !answers(locations["/good/"], "503") || !answers(locations["= /broken"], "500") ||
			len(nginx.Status.Upstreams) != 1 || nginx.Status.Upstreams[0].Service != "api" {
			return fmt.Errorf("locations %v, upstreams %+v", locations, nginx.Status.Upstreams)
		}
		if nginx.Spec.Ports[0].ServicePort != 80 || nginx.Labels[graph.LabelGatewayName] != "web" {
			return fmt.Errorf("ports %+v, labels %v", nginx.Spec.Ports, nginx.Labels)
		}
		return nil
	})
	tools.Eventually(t, time.Minute, "the routes' and the Gateway's statuses", func() error {
		for name, want := range map[string]string{"good": "True/ResolvedRefs", "broken": "False/BackendNotFound"} {
			var rt gatewayv1.HTTPRoute
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &rt); err != nil {
				return err
			}
			if len(rt.Status.Parents) != 1 || rt.Status.Parents[0].ControllerName != graph.ControllerName ||
				condition(rt.Status.Parents[0].Conditions, "Accepted") != "True/Accepted" || condition(rt.Status.Parents[0].Conditions, "ResolvedRefs") != want {
				return fmt.Errorf("route %s: %+v", name, rt.Status.Parents)
			}
		}
		var got gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKeyFromObject(gw), &got); err != nil {
			return err
		}
		// No kubelet here: nginx never serves, so the Gateway stays
		// Pending, with its address.
		if condition(got.Status.Conditions, "Accepted") != "True/Accepted" || condition(got.Status.Conditions, "Programmed") != "False/Pending" ||
			len(got.Status.Listeners) != 1 || got.Status.Listeners[0].AttachedRoutes != 2 || len(got.Status.Addresses) == 0 {
			var nginx v1beta1.NginxOperator
			_ = c.Get(ctx, instance, &nginx)
			return fmt.Errorf("gateway status %+v; its instance's conditions %+v", got.Status, nginx.Status.Conditions)
		}
		return nil
	})
	// A Gateway of another controller is left alone.
	var untouched gatewayv1.Gateway
	tools.Must(t, c.Get(ctx, client.ObjectKeyFromObject(foreign), &untouched))
	if len(untouched.Status.Listeners) != 0 || condition(untouched.Status.Conditions, "Accepted") == "True/Accepted" {
		t.Errorf("a Gateway of another class got a status: %+v", untouched.Status)
	}
	var none v1beta1.NginxOperator
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: graph.InstanceName("foreign")}, &none); err == nil {
		t.Errorf("a Gateway of another class got an instance")
	}

	// A route leaving the Gateway loses its entry and its location.
	good := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good"}}
	framework.Update(ctx, t, c, good, func(r *gatewayv1.HTTPRoute) { r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "foreign"}} })
	tools.Eventually(t, time.Minute, "the route gone from the Gateway", func() error {
		var rt gatewayv1.HTTPRoute
		if err := c.Get(ctx, client.ObjectKeyFromObject(good), &rt); err != nil {
			return err
		}
		for _, p := range rt.Status.Parents {
			if p.ControllerName == graph.ControllerName {
				return fmt.Errorf("entry left: %+v", p)
			}
		}
		var nginx v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &nginx); err != nil {
			return err
		}
		for _, s := range nginx.Spec.Config.Servers {
			for _, l := range s.Locations {
				if l.Path == "/good" {
					return fmt.Errorf("location /good left")
				}
			}
		}
		return nil
	})
}

func TestACertificateOfAnotherNamespaceIsServedFromACopyThatFollowsItWhileAGrantPermitsIt(t *testing.T) {
	counter := &inprocess.RequestCounter{}
	ctx, namespaces, c := setupNamespaces(t, 2, counter)
	ns, certs := namespaces[0], namespaces[1]
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	_, certPEM, keyPEM := framework.ServingCert(t, "web.example.com")
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: certs}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": []byte("not copied")}}
	grant := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "gateways-of-" + ns, Namespace: certs}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: graph.Group, Kind: "Gateway", Namespace: gatewayv1.Namespace(ns)}},
		To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Secret", Name: ptr.To(gatewayv1.ObjectName("web-tls"))}},
	}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{
			CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "web-tls", Namespace: ptr.To(gatewayv1.Namespace(certs))}}}}},
	}}
	create(t, c, class, source, grant, gw)
	tools.Must(t, c.Get(ctx, client.ObjectKeyFromObject(gw), gw))

	copyKey := types.NamespacedName{Namespace: ns, Name: graph.CertificateCopyName("web", client.ObjectKeyFromObject(source))}
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("web")}
	// copied reports whether the copy holds cert and key, and only them.
	copied := func(cert, key []byte) error {
		var cp corev1.Secret
		if err := c.Get(ctx, copyKey, &cp); err != nil {
			return err
		}
		if cp.Type != corev1.SecretTypeTLS || len(cp.Data) != 2 ||
			string(cp.Data[corev1.TLSCertKey]) != string(cert) || string(cp.Data[corev1.TLSPrivateKeyKey]) != string(key) {
			return fmt.Errorf("copy %s: type %s, keys %d, not the source's certificate and key", copyKey, cp.Type, len(cp.Data))
		}
		if cp.Labels["app.kubernetes.io/managed-by"] != "nginx-operator" || cp.Labels[graph.LabelGatewayName] != "web" {
			return fmt.Errorf("copy %s: labels %v", copyKey, cp.Labels)
		}
		if owner := metav1.GetControllerOf(&cp); owner == nil || owner.Kind != "Gateway" || owner.UID != gw.UID {
			return fmt.Errorf("copy %s: controller %+v, want Gateway web (%s)", copyKey, owner, gw.UID)
		}
		return nil
	}
	// listener is the https listener's ResolvedRefs and Programmed.
	listener := func() (string, string, error) {
		var got gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKeyFromObject(gw), &got); err != nil {
			return "", "", err
		}
		if len(got.Status.Listeners) != 1 {
			return "", "", fmt.Errorf("listeners %+v", got.Status.Listeners)
		}
		conds := got.Status.Listeners[0].Conditions
		return condition(conds, "ResolvedRefs"), condition(conds, "Programmed"), nil
	}
	// servedFrom are the Secrets the instance's servers take their
	// certificates from (by their files' names, render.FileName).
	servedFrom := func() (map[string]bool, error) {
		tree, err := served(ctx, c, instance)
		if err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for _, s := range blocks(tree, "http", "server") {
			for _, d := range s.Block {
				if d.Name == "ssl_certificate" {
					out[strings.TrimSuffix(strings.TrimPrefix(path.Base(d.Args[0]), "tls_"), "_tls.crt")] = true
				}
			}
		}
		return out, nil
	}

	tools.Eventually(t, time.Minute, "the copy made and served, the listener resolved", func() error {
		if err := copied(certPEM, keyPEM); err != nil {
			return err
		}
		if from, err := servedFrom(); err != nil || len(from) != 1 || !from[copyKey.Name] {
			return fmt.Errorf("instance's servers take their certificate from %v (%v), want %s only", from, err, copyKey.Name)
		}
		// No kubelet here: nginx never serves, so Programmed stays Pending.
		if resolved, prog, err := listener(); err != nil || resolved != "True/ResolvedRefs" || prog != "False/Pending" {
			return fmt.Errorf("listener ResolvedRefs %s, Programmed %s (%v)", resolved, prog, err)
		}
		return nil
	})

	// Reconciling the Gateway again writes no copy: nothing changed.
	counter.WaitWritesSettled(t, 2*time.Second, time.Minute)
	before, reconciles := len(counter.Writes()), inprocess.Reconciles(t, gateway.GatewayControllerName)
	framework.Update(ctx, t, c, gw, func(g *gatewayv1.Gateway) { g.Annotations = map[string]string{"touched": "yes"} })
	tools.Eventually(t, time.Minute, "the Gateway reconciled again", func() error {
		if inprocess.Reconciles(t, gateway.GatewayControllerName) == reconciles {
			return fmt.Errorf("no reconcile since the Gateway changed")
		}
		return nil
	})
	counter.WaitWritesSettled(t, 2*time.Second, time.Minute)
	for _, w := range counter.Writes()[before:] {
		if strings.Contains(w, "/secrets/") {
			t.Errorf("a reconcile with nothing changed wrote %s", w)
		}
	}

	// The source rotates: the copy follows.
	_, certPEM2, keyPEM2 := framework.ServingCert(t, "web.example.com")
	framework.Update(ctx, t, c, source, func(s *corev1.Secret) {
		s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey] = certPEM2, keyPEM2
	})
	tools.Eventually(t, time.Minute, "the copy holding the rotated certificate", func() error { return copied(certPEM2, keyPEM2) })

	// A copy edited by hand is corrected.
	framework.Update(ctx, t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copyKey.Namespace, Name: copyKey.Name}}, func(s *corev1.Secret) {
		s.Data[corev1.TLSCertKey] = certPEM
	})
	tools.Eventually(t, time.Minute, "the edited copy corrected", func() error { return copied(certPEM2, keyPEM2) })

	// The grant goes: so do the copy and the server, and the listener says why.
	tools.Must(t, c.Delete(ctx, grant))
	tools.Eventually(t, time.Minute, "the copy deleted, the listener RefNotPermitted", func() error {
		var cp corev1.Secret
		if err := c.Get(ctx, copyKey, &cp); !apierrors.IsNotFound(err) {
			return fmt.Errorf("copy %s: %v, want it deleted", copyKey, err)
		}
		if from, err := servedFrom(); err != nil || len(from) != 0 {
			return fmt.Errorf("instance's servers take their certificate from %v (%v), want none", from, err)
		}
		if resolved, prog, err := listener(); err != nil || resolved != "False/RefNotPermitted" || prog != "False/Invalid" {
			return fmt.Errorf("listener ResolvedRefs %s, Programmed %s (%v)", resolved, prog, err)
		}
		return nil
	})
}

// A route whose translation the apiserver refuses in the instance (a
// request header nginx manages itself, which Gateway API lets a filter
// set) is left out and told why, with the apiserver's reason; the
// Gateway's other routes are served and a change to them still applies.
func TestARouteTheInstanceCannotHoldLeavesTheGatewaysOtherRoutesChanging(t *testing.T) {
	ctx, ns, c := setup(t)
	gatewayToAPI(t, c, ns)
	setsConnection := gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "Connection", Value: "close"}}}}
	create(t, c, apiRoute(ns, "good"), apiRoute(ns, "bad", setsConnection))

	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("web")}
	// paths are the prefixes the instance's locations serve.
	paths := func() (map[string]bool, error) {
		locations, err := servedLocations(ctx, c, instance)
		if err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for args := range locations {
			out[strings.TrimSuffix(strings.TrimPrefix(args, "= "), "/")] = true
		}
		return out, nil
	}
	tools.Eventually(t, time.Minute, "/good served, the bad route told why", func() error {
		got, err := paths()
		if err != nil {
			return err
		}
		var bad gatewayv1.HTTPRoute
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "bad"}, &bad); err != nil {
			return err
		}
		if !got["/good"] || got["/bad"] || len(bad.Status.Parents) != 1 {
			return fmt.Errorf("locations %v; route bad %+v", got, bad.Status.Parents)
		}
		c := meta.FindStatusCondition(bad.Status.Parents[0].Conditions, "Accepted")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(gatewayv1.RouteReasonUnsupportedValue) || !strings.Contains(c.Message, "nginx's to manage") {
			return fmt.Errorf("route bad: Accepted %+v", c)
		}
		return nil
	})
	// Later changes to the Gateway's routes apply.
	create(t, c, apiRoute(ns, "later"))
	tools.Eventually(t, time.Minute, "a route added later served", func() error {
		got, err := paths()
		if err != nil {
			return err
		}
		if !got["/later"] || !got["/good"] || got["/bad"] {
			return fmt.Errorf("locations %v", got)
		}
		return nil
	})
}

// gatewayToAPI creates in ns a class of this controller (deleted after the
// test), the Service api (port 8080) and the Gateway web, of one HTTP
// listener on port 80.
func gatewayToAPI(t testing.TB, c client.Client, ns string) {
	t.Helper()
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })
	api := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}, Selector: map[string]string{"app": "api"}}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	create(t, c, class, api, gw)
}

// apiRoute is the HTTPRoute name of the Gateway web sending the prefix
// /name to the Service api, through filters.
func apiRoute(ns, name string, filters ...gatewayv1.HTTPRouteFilter) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}}},
		Rules: []gatewayv1.HTTPRouteRule{{
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/" + name)}}},
			Filters: filters,
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: "api", Port: ptr.To(gatewayv1.PortNumber(8080))}}}},
		}},
	}}
}

// served is the nginx.conf the instance's pods are given, parsed.
func served(ctx context.Context, c client.Client, instance types.NamespacedName) ([]conf.Directive, error) {
	var secret corev1.Secret
	key := types.NamespacedName{Namespace: instance.Namespace, Name: layout.NamesFor(instance.Name).ConfigSecret}
	if err := c.Get(ctx, key, &secret); err != nil {
		return nil, err
	}
	return conf.Parse(secret.Data[layout.ConfigFile])
}

// servedLocations are the locations of the servers of the instance's
// nginx.conf, by their arguments ("= /a", "/a/"), with what is in each.
func servedLocations(ctx context.Context, c client.Client, instance types.NamespacedName) (map[string][]conf.Directive, error) {
	tree, err := served(ctx, c, instance)
	if err != nil {
		return nil, err
	}
	out := map[string][]conf.Directive{}
	for _, s := range blocks(tree, "http", "server") {
		for _, l := range s.Block {
			if l.Name == "location" && !strings.HasPrefix(l.Args[len(l.Args)-1], "@") {
				out[strings.Join(l.Args, " ")] = l.Block
			}
		}
	}
	return out, nil
}

// blocks are the blocks at path (block names) in tree.
func blocks(tree []conf.Directive, path ...string) []conf.Directive {
	level := tree
	var out []conf.Directive
	for i, name := range path {
		out = nil
		for _, d := range level {
			if d.Name == name && d.Block != nil {
				out = append(out, d)
			}
		}
		if i < len(path)-1 {
			level = nil
			for _, d := range out {
				level = append(level, d.Block...)
			}
		}
	}
	return out
}

// answers reports whether a location's directives answer with status.
func answers(location []conf.Directive, status string) bool {
	for _, d := range location {
		if d.Name == "return" && len(d.Args) > 0 && d.Args[0] == status {
			return true
		}
	}
	return false
}

// A Gateway's instance serves the spec its Gateway made, which reaches the
// nginx controller by one road (the route table): a change made by hand to
// the NginxOperator object, which records that spec without its servers,
// is not served, while the object still says what the instance's ports
// are.
func TestAGatewaysInstanceServesWhatItsGatewayMadeNotAHandEdit(t *testing.T) {
	ctx, ns, c := setup(t)
	gatewayToAPI(t, c, ns)
	create(t, c, apiRoute(ns, "shop"))
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("web")}
	tools.Eventually(t, time.Minute, "the instance serving /shop", func() error {
		locations, err := servedLocations(ctx, c, instance)
		if err != nil {
			return err
		}
		if _, ok := locations["/shop/"]; !ok {
			return fmt.Errorf("locations %v", locations)
		}
		return nil
	})
	var nginx v1beta1.NginxOperator
	if err := c.Get(ctx, instance, &nginx); err != nil {
		t.Fatal(err)
	}
	if len(nginx.Spec.Ports) != 1 || nginx.Spec.Ports[0].ServicePort != 80 || len(nginx.Spec.Config.Servers) != 0 {
		t.Fatalf("the object records ports %+v and %d servers; want the listener's port 80 and no server", nginx.Spec.Ports, len(nginx.Spec.Config.Servers))
	}
	// Its status says what memory holds: the route's location on the
	// port's one server, and the 404 there.
	want := &v1beta1.RoutingStatus{Routes: 1, Servers: 1, Locations: 2,
		ByRoute: []v1beta1.RouteRouting{{Name: "httproute/" + ns + "/shop", Servers: 1, Locations: 1}}}
	tools.Eventually(t, time.Minute, "status.routing", func() error {
		if err := c.Get(ctx, instance, &nginx); err != nil {
			return err
		}
		if diff := cmp.Diff(want, nginx.Status.Routing); diff != "" {
			return fmt.Errorf("(-want +got):\n%s", diff)
		}
		return nil
	})
	edit := client.MergeFrom(nginx.DeepCopy())
	nginx.Spec.Config.ClientMaxBodySize = "77m"
	if err := c.Patch(ctx, &nginx, edit, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	tools.Eventually(t, time.Minute, "the nginx controller to observe the edit", func() error {
		var got v1beta1.NginxOperator
		if err := c.Get(ctx, instance, &got); err != nil {
			return err
		}
		// Patch read the edited object back: its generation is the edit's.
		if got.Status.ObservedGeneration < nginx.Generation {
			return fmt.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, nginx.Generation)
		}
		return nil
	})
	tree, err := served(ctx, c, instance)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range blocks(tree, "http") {
		for _, setting := range d.Block {
			if setting.Name == "client_max_body_size" && setting.Args[0] == "77m" {
				t.Fatalf("the hand edit is served: %v", setting)
			}
		}
	}
}
