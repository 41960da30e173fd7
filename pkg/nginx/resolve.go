package nginx

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
)

// resolved is what one reconcile reads of the cluster for an instance,
// once: the objects its spec names (render.ReferencesOf, walked once), the
// proxied Services with their endpoints, and the instance's own Service.
// The renderer takes it as plain values (renderOptions) and the status
// reads the same values (upstreamStatus): nginx.conf and status.upstreams
// cannot disagree.
type resolved struct {
	namespace string
	refs      render.References
	// services are the proxied Services as nginx reaches them.
	services map[string]render.Service
	// files are the files nginx reads of the references, by
	// render.FileName: what the files Secrets carry.
	files map[string][]byte
	// ports are the instance's Service ports, decided under the rule of
	// its existing Service (serviceport.RuleOf).
	ports serviceport.Ports
	// ipv6: nginx listens on IPv6 too (servesIPv6).
	ipv6 bool
	// servicePorts are the Service ports that differ from their
	// containerPorts (serviceport.Ports.Moved).
	servicePorts map[int32]int32
}

// referenceReasons are the reasons of a missing reference, by kind.
var referenceReasons = map[string]string{"Secret": ReasonSecretNotFound, "ConfigMap": ReasonConfigMapNotFound, "Service": ReasonServiceNotFound}

// resolve reads every object the validated spec of nginx names, so a
// missing one is reported by name rather than as pods stuck in
// ContainerCreating (a content ConfigMap) or nginx refusing to start (a
// proxied Service it cannot resolve, a certificate or a basic-auth key it
// cannot read), and the instance's own Service. It keeps the content of
// the keys nginx reads of each Secret and ConfigMap, for the files Secrets
// (files.go). Secrets and ConfigMaps are read from the API server (the
// cache holds their metadata only), and only those the instance names;
// Services and EndpointSlices from the caches.
func (r *Reconciler) resolve(ctx context.Context, nginx *v1beta1.NginxOperator) (*resolved, error) {
	out := &resolved{namespace: nginx.Namespace, refs: render.ReferencesOf(&nginx.Spec), services: map[string]render.Service{}, files: map[string][]byte{}}
	if err := r.watchNamed(ctx, nginx, out.refs); err != nil {
		return nil, err
	}
	for _, ref := range out.refs {
		key := types.NamespacedName{Namespace: ref.In(nginx.Namespace), Name: ref.Name}
		if key.Namespace != nginx.Namespace {
			if err := r.permitted(ctx, nginx, key); err != nil {
				return nil, err
			}
		}
		obj := referenceObject(ref.Kind)
		if err := r.APIReader.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, k8sutil.MissingWatchedReference(referenceReasons[ref.Kind], "%s %s %q not found in namespace %s", ref.Use, ref.Kind, ref.Name, key.Namespace)
			}
			return nil, err
		}
		if err := referenceFiles(out.files, ref, obj); err != nil {
			return nil, err
		}
		if o, ok := obj.(*corev1.Service); ok {
			svc, err := r.proxiedService(ctx, o, ref)
			if err != nil {
				return nil, err
			}
			out.services[render.ServiceKey(ref.Namespace, ref.Name)] = svc
		}
	}
	live, err := r.liveService(ctx, nginx)
	if err != nil {
		return nil, err
	}
	out.ports = serviceport.Resolve(&nginx.Spec, serviceport.RuleOf(live))
	out.servicePorts = out.ports.Moved(&nginx.Spec)
	out.ipv6 = servesIPv6(nginx, live)
	return out, nil
}

// renderOptions are the renderer's inputs besides the spec.
func (m *resolved) renderOptions() render.Options {
	return render.Options{Paths: render.PodPaths(), Namespace: m.namespace, Services: m.services, IPv6: m.ipv6, HTTPSPort: m.ports.HTTPSRedirect,
		ServicePorts: m.servicePorts}
}

// upstreamStatus says, for each port of a proxied Service, where nginx
// sends it: to how many endpoints, or to which address.
func (m *resolved) upstreamStatus() []v1beta1.UpstreamStatus {
	var out []v1beta1.UpstreamStatus
	for _, ref := range m.refs.Of(render.UseProxy) {
		svc := m.services[render.ServiceKey(ref.Namespace, ref.Name)]
		namespace := ref.In(m.namespace)
		if namespace == m.namespace {
			namespace = ""
		}
		status := func(port int32, udp bool) {
			u := v1beta1.UpstreamStatus{Service: ref.Name, Namespace: namespace, Port: port}
			if udp {
				u.Protocol = corev1.ProtocolUDP
			}
			addrs, atEndpoints := svc.Upstream(port, udp, false)
			if atEndpoints {
				u.Endpoints = int32(len(addrs))
			}
			if !atEndpoints || ref.ClusterIP {
				u.Address = net.JoinHostPort(strings.Trim(svc.Address, "[]"), strconv.Itoa(int(port)))
			}
			out = append(out, u)
		}
		for _, port := range ref.Ports {
			status(port, false)
		}
		for _, port := range ref.UDPPorts {
			status(port, true)
		}
	}
	return out
}

// proxiedService is where nginx sends svc: its own address (serviceAddress)
// and, but for an ExternalName Service or without an EndpointSlice cache,
// the endpoints of each of the ports ref names from the cached
// EndpointSlices.
func (r *Reconciler) proxiedService(ctx context.Context, svc *corev1.Service, ref render.Reference) (render.Service, error) {
	out := render.Service{Address: serviceAddress(svc)}
	if r.Endpoints == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return out, nil
	}
	slices, err := r.serviceEndpoints(ctx, svc.Namespace, svc.Name)
	if err != nil {
		return out, err
	}
	out.AtEndpoints, out.Endpoints = true, map[int32][]string{}
	for _, port := range ref.Ports {
		out.Endpoints[port] = endpointAddresses(svc, port, corev1.ProtocolTCP, slices)
	}
	if len(ref.UDPPorts) > 0 {
		out.UDPEndpoints = map[int32][]string{}
	}
	for _, port := range ref.UDPPorts {
		out.UDPEndpoints[port] = endpointAddresses(svc, port, corev1.ProtocolUDP, slices)
	}
	return out, nil
}

// serviceAddress is svc's own address, where nginx connects for it with
// useClusterIP, for an ExternalName and as the backup of its pods: its
// ClusterIP, so that nginx.conf changes, and the pods reload, when the
// Service moves (re-created with another address); an ExternalName's
// target, likewise; a headless Service's name, which nginx resolves to its
// pods' addresses when it loads the configuration. Not the ClusterIP's DNS
// name: nginx resolves it only on a reload, and a reload that follows the
// Service's re-creation within the cluster DNS's cache time (CoreDNS caches
// 5 to 30 s) would get the old address and keep it.
func serviceAddress(svc *corev1.Service) string {
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	case svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return render.ServiceDNSName(svc.Name, svc.Namespace)
	case strings.Contains(svc.Spec.ClusterIP, ":"):
		return "[" + svc.Spec.ClusterIP + "]"
	}
	return svc.Spec.ClusterIP
}

// ReasonReferenceNotPermitted: a backend names a Service of another
// namespace that has not consented (ServiceGrants).
const ReasonReferenceNotPermitted = "ReferenceNotPermitted"

// ServiceGrants decide whether an instance may send to a Service of
// another namespace (Backend.Namespace): Gateway API's ReferenceGrants,
// which the controller has only where their CRD is served.
type ServiceGrants interface {
	// PermitsService reports whether nginx may send to svc.
	PermitsService(ctx context.Context, nginx *v1beta1.NginxOperator, svc types.NamespacedName) (bool, error)
	// Watched is the kind of object whose changes can grant or revoke
	// (an empty ReferenceGrant); the instances that send into its
	// namespace are reconciled when one changes.
	Watched() client.Object
}

// permitted is nil when nginx may send to svc, a Service of another
// namespace, and otherwise the reference error that says why not. It
// comes before the Service is read, so a namespace that did not consent
// learns nothing of its Services' existence.
func (r *Reconciler) permitted(ctx context.Context, nginx *v1beta1.NginxOperator, svc types.NamespacedName) error {
	if r.Grants == nil {
		return k8sutil.MissingReference(ReasonReferenceNotPermitted,
			"Service %s: a backend in another namespace needs a ReferenceGrant there, and Gateway API's ReferenceGrant CRD is not served (or the operator may not watch it)", svc)
	}
	ok, err := r.Grants.PermitsService(ctx, nginx, svc)
	if err != nil || ok {
		return err
	}
	return k8sutil.MissingWatchedReference(ReasonReferenceNotPermitted,
		"Service %s: no ReferenceGrant in namespace %s lets NginxOperators of namespace %s refer to it", svc, svc.Namespace, nginx.Namespace)
}

// referenceObject is an empty object of a reference's kind.
func referenceObject(kind string) client.Object {
	switch kind {
	case "Secret":
		return &corev1.Secret{}
	case "Service":
		return &corev1.Service{}
	}
	return &corev1.ConfigMap{}
}

// liveService is the instance's Service from the cache (which holds the
// operator's Services with their annotations, see operator.TrimForCache),
// nil when it does not exist (yet). Its IP families and its
// layout.ServicePortsAnnotation decide what nginx listens on and which ports the
// Service keeps.
func (r *Reconciler) liveService(ctx context.Context, nginx *v1beta1.NginxOperator) (*corev1.Service, error) {
	var svc corev1.Service
	key := types.NamespacedName{Namespace: nginx.Namespace, Name: layout.NamesFor(nginx.Name).Service}
	if err := r.Client.Get(ctx, key, &svc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return &svc, nil
}

// servesIPv6 tells whether nginx should listen on IPv6: when the cluster
// gave the instance's Service, live, an IPv6 address. Before the Service
// exists, the spec says what it will get where it can: an IPv6 family, or
// RequireDualStack. PreferDualStack depends on the cluster, so on a
// dual-stack cluster the first pods roll once when the Service appears.
func servesIPv6(nginx *v1beta1.NginxOperator, live *corev1.Service) bool {
	if live == nil {
		svc := nginx.Spec.Service
		return slices.Contains(svc.IPFamilies, corev1.IPv6Protocol) ||
			ptr.Deref(svc.IPFamilyPolicy, "") == corev1.IPFamilyPolicyRequireDualStack
	}
	return ServesIPv6(live)
}
