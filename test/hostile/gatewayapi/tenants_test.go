package gatewayapi

// The shared Gateway, its tenants' namespaces, the baseline routes of the
// tenants the hostile one must not break, and the Inputs the Gateway
// controller reads from the cluster (pkg/gateway, reconcile.go's inputs).

import (
	"context"
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The tenants, one namespace each: the Gateway's owner, the five whose
// routes make the baseline, and the hostile one. A namespace carries its
// role in labelTenant, which the TCP and UDP listeners select by.
const (
	roleGateway = "gateway"
	roleWeb     = "web"
	roleGRPC    = "grpc"
	roleTCP     = "tcp"
	roleUDP     = "udp"
	roleTLS     = "tls"
	roleHostile = "hostile"

	labelTenant = "tenant.nginx.operator.dev/role"
)

var roles = []string{roleGateway, roleWeb, roleGRPC, roleTCP, roleUDP, roleTLS, roleHostile}

// The Gateway's names: the Gateway, its certificate, its listeners.
const (
	gatewayName     = "shared"
	certificateName = "gateway-cert"

	listenerHTTP        = "http"
	listenerHTTPS       = "https"
	listenerPassthrough = "passthrough"
	listenerTCP         = "tcp"
	listenerUDP         = "udp"
	listenerTCPHostile  = "tcp-hostile"
	listenerUDPHostile  = "udp-hostile"
)

// Hostnames: the HTTP and HTTPS listeners take the example.com names, the
// TLS passthrough listener (on the HTTPS listener's port, told apart by the
// server name) the passthrough.example.com ones.
const (
	listenerHostname    = "*.example.com"
	passthroughHostname = "*.passthrough.example.com"
	webHostname         = "web.example.com"
	grpcHostname        = "grpc.example.com"
	tlsHostname         = "app.passthrough.example.com"
)

// The Services of the tenants: each tenant's own, and web's "shared",
// which web's ReferenceGrant lets the hostile namespace's routes use.
const (
	svcWeb     = "web"
	svcShared  = "shared"
	svcGRPC    = "grpc"
	svcDB      = "db"
	svcDNS     = "dns"
	svcTLS     = "tls"
	svcHostile = "h-svc"
)

// tenancy is the shared Gateway and everything around it, as read back
// from the apiserver: what every case's translation starts from.
type tenancy struct {
	c  client.Client
	ns map[string]string // role -> namespace
	gw *gatewayv1.Gateway
	// baseline are the other tenants' routes, as stored.
	baseline []client.Object
	// What the Gateway controller reads besides routes (reconcile.go's
	// inputs), read once: nothing changes them while the corpus runs.
	grants   map[string][]gatewayv1.ReferenceGrant
	secrets  map[types.NamespacedName]bool
	services map[types.NamespacedName]bool
	labels   map[string]map[string]string
	// cert and key are the Gateway's certificate, which the test's pod
	// paths mount.
	cert, key []byte
}

// newClient is a client of the apiserver that knows the core kinds and
// Gateway API's.
func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	tools.Must(t, clientgoscheme.AddToScheme(s))
	tools.Must(t, gatewayv1.Install(s))
	c, err := client.New(cfg, client.Options{Scheme: s})
	tools.Must(t, err)
	return c
}

// setUpTenancy creates the tenants' namespaces, the Gateway, the Services,
// the ReferenceGrant and the baseline routes, and reads them back.
func setUpTenancy(ctx context.Context, t *testing.T, cfg *rest.Config) *tenancy {
	t.Helper()
	tools.Must(t, framework.InstallGatewayAPICRDs(ctx, cfg))
	c := newClient(t, cfg)
	tn := &tenancy{c: c, ns: map[string]string{}}
	for _, role := range roles {
		name, _ := env.Namespace(t)
		ns := &corev1.Namespace{}
		tools.Must(t, c.Get(ctx, client.ObjectKey{Name: name}, ns))
		patch := client.MergeFrom(ns.DeepCopy())
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[labelTenant] = role
		tools.Must(t, c.Patch(ctx, ns, patch))
		tn.ns[role] = name
	}
	_, cert, key, err := tools.ServingCert(listenerHostname, passthroughHostname)
	tools.Must(t, err)
	tn.cert, tn.key = cert, key

	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "hostile-" + rand.String(5)},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	tools.Must(t, c.Create(ctx, class))
	t.Cleanup(func() { _ = c.Delete(context.Background(), class) })

	gwNS := tn.ns[roleGateway]
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: gwNS, Name: certificateName}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}},
		sharedGateway(gwNS, gatewayv1.ObjectName(class.Name)),
		service(tn.ns[roleWeb], svcWeb, 8080),
		service(tn.ns[roleWeb], svcShared, 8080),
		service(tn.ns[roleGRPC], svcGRPC, 50051),
		service(tn.ns[roleTCP], svcDB, 5432),
		udpService(tn.ns[roleUDP], svcDNS, 53),
		service(tn.ns[roleTLS], svcTLS, 8443),
		withUDP(service(tn.ns[roleHostile], svcHostile, 8080, 50051, 8443, 6432), 6353),
		webGrant(tn.ns[roleWeb], tn.ns[roleHostile]),
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s/%s: %v", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	// The baseline routes are the oldest: of two routes with the same
	// match, Gateway API has the older one served, and the baseline
	// must never lose its own matches to a hostile route for being
	// younger (the corpus has cases that claim them).
	var newest time.Time
	for _, rt := range baselineRoutes(tn.ns) {
		if err := c.Create(ctx, rt); err != nil {
			t.Fatalf("creating the baseline %T %s/%s: %v", rt, rt.GetNamespace(), rt.GetName(), err)
		}
		if ts := rt.GetCreationTimestamp().Time; ts.After(newest) {
			newest = ts
		}
		tn.baseline = append(tn.baseline, rt)
	}
	// A creation timestamp has seconds: the hostile routes are created in
	// a later second than the baseline's, or a tie is broken by namespace
	// names, which are random.
	tools.Must(t, tools.Poll(ctx, 50*time.Millisecond, 3*time.Second, func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(newest), nil
	}))
	tn.readBack(ctx, t)
	return tn
}

// readBack reads what the Gateway controller reads besides the hostile
// route: the Gateway and baseline routes as stored, ReferenceGrants,
// servable certificates, Services and namespace labels.
func (tn *tenancy) readBack(ctx context.Context, t *testing.T) {
	t.Helper()
	tn.gw = &gatewayv1.Gateway{}
	tools.Must(t, tn.c.Get(ctx, client.ObjectKey{Namespace: tn.ns[roleGateway], Name: gatewayName}, tn.gw))
	for i, rt := range tn.baseline {
		stored := rt.DeepCopyObject().(client.Object)
		tools.Must(t, tn.c.Get(ctx, client.ObjectKeyFromObject(rt), stored))
		tn.baseline[i] = stored
	}
	var grants gatewayv1.ReferenceGrantList
	tools.Must(t, tn.c.List(ctx, &grants))
	tn.grants = map[string][]gatewayv1.ReferenceGrant{}
	for _, g := range grants.Items {
		tn.grants[g.Namespace] = append(tn.grants[g.Namespace], g)
	}
	tn.secrets = map[types.NamespacedName]bool{}
	for _, l := range tn.gw.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, ref := range l.TLS.CertificateRefs {
			key := types.NamespacedName{Namespace: string(ptr.Deref(ref.Namespace, gatewayv1.Namespace(tn.gw.Namespace))), Name: string(ref.Name)}
			var s corev1.Secret
			if err := tn.c.Get(ctx, key, &s); err != nil {
				t.Fatalf("reading the Gateway's certificate %s: %v", key, err)
			}
			_, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
			tn.secrets[key] = s.Type == corev1.SecretTypeTLS && err == nil
		}
	}
	tn.services, tn.labels = map[types.NamespacedName]bool{}, map[string]map[string]string{}
	for _, ns := range tn.ns {
		var svcs corev1.ServiceList
		tools.Must(t, tn.c.List(ctx, &svcs, client.InNamespace(ns)))
		for _, s := range svcs.Items {
			tn.services[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = true
		}
		var n corev1.Namespace
		tools.Must(t, tn.c.Get(ctx, client.ObjectKey{Name: ns}, &n))
		tn.labels[ns] = n.Labels
	}
}

// inputs are the Inputs of the Gateway's translation with the baseline
// routes and, unless nil, the hostile route rt, as reconcile.go's inputs
// builds them: the routes by kind, and for each route the Services it
// names (whether they exist) and its namespace's labels.
func (tn *tenancy) inputs(rt client.Object) graph.Inputs {
	in := graph.Inputs{Gateway: tn.gw, Grants: tn.grants, Secrets: tn.secrets, Services: map[types.NamespacedName]bool{},
		NamespaceLabels: map[string]map[string]string{}, ExternalAuths: map[types.NamespacedName]*v1beta1.ExternalAuth{}}
	routes := append([]client.Object{}, tn.baseline...)
	if rt != nil {
		routes = append(routes, rt)
	}
	for _, rt := range routes {
		switch rt := rt.(type) {
		case *gatewayv1.HTTPRoute:
			in.HTTPRoutes = append(in.HTTPRoutes, rt)
		case *gatewayv1.GRPCRoute:
			in.GRPCRoutes = append(in.GRPCRoutes, rt)
		default: // TLSRoute, TCPRoute, UDPRoute
			in.StreamRoutes = append(in.StreamRoutes, rt)
		}
		for _, key := range backendsOf(rt) {
			in.Services[key] = tn.services[key]
		}
		in.NamespaceLabels[rt.GetNamespace()] = tn.labels[rt.GetNamespace()]
	}
	return in
}

// backendsOf are the Services route rt names, in its backendRefs and its
// mirrors, as namespace and name.
func backendsOf(rt client.Object) []types.NamespacedName {
	var refs []gatewayv1.BackendObjectReference
	mirrors := func(filters []gatewayv1.HTTPRouteFilter) {
		for _, f := range filters {
			if f.RequestMirror != nil {
				refs = append(refs, f.RequestMirror.BackendRef)
			}
		}
	}
	switch rt := rt.(type) {
	case *gatewayv1.HTTPRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
			mirrors(rule.Filters)
		}
	case *gatewayv1.GRPCRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
			for _, f := range rule.Filters {
				if f.RequestMirror != nil {
					refs = append(refs, f.RequestMirror.BackendRef)
				}
			}
		}
	case *gatewayv1.TLSRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
		}
	case *gatewayv1.TCPRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
		}
	case *gatewayv1.UDPRoute:
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
		}
	}
	out := make([]types.NamespacedName, 0, len(refs))
	for _, b := range refs {
		out = append(out, types.NamespacedName{Namespace: string(ptr.Deref(b.Namespace, gatewayv1.Namespace(rt.GetNamespace()))), Name: string(b.Name)})
	}
	return out
}

// sharedGateway is the Gateway every tenant's routes attach to: HTTP and
// HTTPS on the example.com names and TLS passthrough beside HTTPS for any
// namespace; TCP and UDP listeners each for one tenant's namespace.
func sharedGateway(ns string, class gatewayv1.ObjectName) *gatewayv1.Gateway {
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	only := func(role string) *gatewayv1.AllowedRoutes {
		return &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelTenant: role}}}}
	}
	host := func(h string) *gatewayv1.Hostname { return ptr.To(gatewayv1.Hostname(h)) }
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gatewayName},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: class, Listeners: []gatewayv1.Listener{
			{Name: listenerHTTP, Protocol: gatewayv1.HTTPProtocolType, Port: 80, Hostname: host(listenerHostname), AllowedRoutes: all},
			{Name: listenerHTTPS, Protocol: gatewayv1.HTTPSProtocolType, Port: 443, Hostname: host(listenerHostname), AllowedRoutes: all,
				TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate),
					CertificateRefs: []gatewayv1.SecretObjectReference{{Name: certificateName}}}},
			{Name: listenerPassthrough, Protocol: gatewayv1.TLSProtocolType, Port: 443, Hostname: host(passthroughHostname), AllowedRoutes: all,
				TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
			{Name: listenerTCP, Protocol: gatewayv1.TCPProtocolType, Port: 5432, AllowedRoutes: only(roleTCP)},
			{Name: listenerUDP, Protocol: gatewayv1.UDPProtocolType, Port: 5353, AllowedRoutes: only(roleUDP)},
			{Name: listenerTCPHostile, Protocol: gatewayv1.TCPProtocolType, Port: 6432, AllowedRoutes: only(roleHostile)},
			{Name: listenerUDPHostile, Protocol: gatewayv1.UDPProtocolType, Port: 6353, AllowedRoutes: only(roleHostile)},
		}},
	}
}

func service(ns, name string, ports ...int32) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}}}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", p), Port: p, TargetPort: intstr.FromInt32(p)})
	}
	return svc
}

// withUDP adds a UDP port to svc.
func withUDP(svc *corev1.Service, port int32) *corev1.Service {
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("u%d", port), Port: port, Protocol: corev1.ProtocolUDP,
		TargetPort: intstr.FromInt32(port)})
	return svc
}

func udpService(ns, name string, port int32) *corev1.Service {
	svc := service(ns, name, port)
	svc.Spec.Ports[0].Protocol = corev1.ProtocolUDP
	return svc
}

// webGrant lets the hostile namespace's routes of every kind send to web's
// Service "shared" (and to no other of web's).
func webGrant(ns, from string) *gatewayv1.ReferenceGrant {
	g := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hostile-may-use-shared"},
		Spec: gatewayv1.ReferenceGrantSpec{To: []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: ptr.To(gatewayv1.ObjectName(svcShared))}}}}
	for _, kind := range []gatewayv1.Kind{graph.KindHTTPRoute, graph.KindGRPCRoute, graph.KindTLSRoute, graph.KindTCPRoute, graph.KindUDPRoute} {
		g.Spec.From = append(g.Spec.From, gatewayv1.ReferenceGrantFrom{Group: graph.Group, Kind: kind, Namespace: gatewayv1.Namespace(from)})
	}
	return g
}

// parentRef names the shared Gateway, in the Gateway's namespace, and its
// listener section ("" for all of them).
func parentRef(gwNS, section string) gatewayv1.ParentReference {
	ref := gatewayv1.ParentReference{Name: gatewayName, Namespace: ptr.To(gatewayv1.Namespace(gwNS))}
	if section != "" {
		ref.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	return ref
}

func backendRef(name string, port int32) gatewayv1.BackendRef {
	return gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(port))}}
}

// baselineRoutes are the other tenants' routes, one of each kind, each in
// its tenant's namespace. Web's matches read request variables the hostile
// values aim at: a header by regular expression, X-Match (whose $http_x_match
// a named group could shadow) and query parameter q ($arg_q).
func baselineRoutes(ns map[string]string) []client.Object {
	gwNS := ns[roleGateway]
	pathType := func(t gatewayv1.PathMatchType, v string) *gatewayv1.HTTPPathMatch {
		return &gatewayv1.HTTPPathMatch{Type: ptr.To(t), Value: ptr.To(v)}
	}
	regex, exact := ptr.To(gatewayv1.HeaderMatchRegularExpression), ptr.To(gatewayv1.HeaderMatchExact)
	web := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns[roleWeb], Name: "web"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, "")}},
			Hostnames:       []gatewayv1.Hostname{webHostname},
			Rules: []gatewayv1.HTTPRouteRule{
				{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathType(gatewayv1.PathMatchPathPrefix, "/app"),
					Headers: []gatewayv1.HTTPHeaderMatch{{Type: regex, Name: "X-Version", Value: "^v[0-9]+$"}, {Type: exact, Name: "X-Match", Value: "yes"}}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef(svcWeb, 8080)}}},
				{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathType(gatewayv1.PathMatchExact, "/search"),
					QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "q", Value: "1"}}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef(svcWeb, 8080)}}},
				{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathType(gatewayv1.PathMatchPathPrefix, "/")}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef(svcWeb, 8080)}}},
			},
		}}
	grpc := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns[roleGRPC], Name: "grpc"},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, "")}},
			Hostnames:       []gatewayv1.Hostname{grpcHostname},
			Rules: []gatewayv1.GRPCRouteRule{{
				Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("echo.Echo"), Method: ptr.To("Say")},
					Headers: []gatewayv1.GRPCHeaderMatch{{Name: "X-Match", Value: "yes"}}}},
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef(svcGRPC, 50051)}},
			}},
		}}
	tcp := &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns[roleTCP], Name: "db"},
		Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, listenerTCP)}},
			Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(svcDB, 5432)}}},
		}}
	udp := &gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns[roleUDP], Name: "dns"},
		Spec: gatewayv1.UDPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, listenerUDP)}},
			Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(svcDNS, 53)}}},
		}}
	tlsRoute := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns[roleTLS], Name: "app"},
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef(gwNS, listenerPassthrough)}},
			Hostnames:       []gatewayv1.Hostname{tlsHostname},
			Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(svcTLS, 8443)}}},
		}}
	return []client.Object{web, grpc, tcp, udp, tlsRoute}
}
