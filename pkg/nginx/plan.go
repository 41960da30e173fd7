package nginx

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// plan is what should exist for one instance: its children, built from the
// validated spec and what its references hold. Planning writes nothing.
type plan struct {
	inputs Inputs
	// upstreams are where nginx sends each proxied Service port, for the
	// status.
	upstreams []v1beta1.UpstreamStatus
	// children in the order they are applied: the StatefulSet last, so that
	// should a child's name be taken (see Applier.ApplyOwned), no pod starts
	// without the rest.
	children []client.Object
	// checked are the children the user's fields reach beyond what the CRD
	// can check (the StatefulSet's pod settings and resources, the
	// Service's, the PodDisruptionBudget's, the NetworkPolicy's): the API
	// server may refuse them.
	checked     []client.Object
	statefulSet *appsv1.StatefulSet
	// written is the StatefulSet as the API server answered its apply in
	// this reconcile; empty (no resourceVersion) when it was not written.
	written appsv1.StatefulSet
	// unwanted are the optional children the spec does not ask for, as
	// empty objects with their names: one the instance controls is deleted.
	unwanted []client.Object
}

// plan validates nginx's spec, checks its references, renders nginx.conf
// and builds the children. Its errors are the spec's (InvalidConfig, a
// missing reference) or the cache's.
func (r *Reconciler) plan(ctx context.Context, nginx *v1beta1.NginxOperator) (*plan, error) {
	// Everything below builds from the spec as admission defaults it (the
	// CRD is the one source of defaults and value rules); the status is
	// written to the object as read.
	desired, errs := validation.NginxOperator(ctx, nginx)
	if len(errs) > 0 {
		err := configErrorf("%v", errs.ToAggregate())
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Validate", "%v", err)
		return nil, err
	}
	refs, err := r.readReferences(ctx, desired)
	if err != nil {
		return nil, err
	}
	live, err := r.liveService(ctx, desired)
	if err != nil {
		return nil, err
	}
	rule := serviceport.RuleOf(live)
	config, err := render.Config(&desired.Spec, render.Options{Paths: render.PodPaths(), Namespace: nginx.Namespace, IPv6: servesIPv6(desired, live),
		UpstreamHost: refs.upstreamHost, Endpoints: refs.endpoints, HTTPSPort: serviceport.Resolve(&desired.Spec, rule).HTTPSRedirect})
	if err != nil {
		// The emitter refuses an argument it cannot quote safely: the spec
		// is at fault, and retrying cannot help.
		err = configErrorf("%v", err)
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Render", "%v", err)
		return nil, err
	}
	image := desired.Spec.Image
	if image == "" {
		image = r.Images.Nginx
	}
	in := Inputs{Config: config, ConfigHash: reloader.ConfigHash(config), Image: image, ExporterImage: r.Images.Exporter,
		ReloaderImage: r.Images.Reloader, TLSHash: refs.tlsHash}
	if in.Restore, err = r.restoreInit(ctx, desired); err != nil {
		return nil, err
	}
	p := &plan{inputs: in, statefulSet: StatefulSet(desired, in), checked: []client.Object{Service(desired, rule)},
		upstreams: refs.status(render.ReferencesOf(&desired.Spec), nginx.Namespace)}
	names, meta := layout.NamesFor(nginx.Name), func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: nginx.Namespace, Name: name}
	}
	if pdb := PodDisruptionBudget(desired); pdb != nil {
		p.checked = append(p.checked, pdb)
	} else {
		p.unwanted = append(p.unwanted, &policyv1.PodDisruptionBudget{ObjectMeta: meta(names.PodDisruptionBudget)})
	}
	if policy := NetworkPolicy(desired, r.Operator); policy != nil {
		p.checked = append(p.checked, policy)
	} else {
		p.unwanted = append(p.unwanted, &networkingv1.NetworkPolicy{ObjectMeta: meta(names.NetworkPolicy)})
	}
	p.checked = append(p.checked, p.statefulSet)
	p.children = append([]client.Object{ServiceAccount(desired), ConfigSecret(desired, in), HeadlessService(desired)}, p.checked...)
	return p, nil
}

// referenced is what the pods get from the objects the spec names.
type referenced struct {
	// tlsHash digests the TLS Secrets' content; empty without TLS.
	tlsHash string
	// upstreams are each proxied Service's own address (see upstreamHost):
	// where nginx connects for an ExternalName Service or with
	// useClusterIP, and the backup of an upstream of pods.
	upstreams map[string]string
	// proxied are the proxied Services reached at their endpoints, with
	// their EndpointSlices (see endpoints).
	proxied map[string]proxiedService
}

// proxiedService is a Service nginx sends to at its endpoints.
type proxiedService struct {
	service   *corev1.Service
	endpoints []discoveryv1.EndpointSlice
}

// endpoints are where nginx sends a proxied Service's port, as
// render.Options.Endpoints: its ready endpoints (endpointAddresses), unless
// it is reached at its own address (upstreamHost).
func (refs referenced) endpoints(service string, port int32) ([]string, bool) {
	p, ok := refs.proxied[service]
	if !ok {
		return nil, false
	}
	return endpointAddresses(p.service, port, p.endpoints), true
}

// upstreamHost is the host nginx connects to for a proxied Service, as
// render.Options.UpstreamHost.
func (refs referenced) upstreamHost(service, namespace string) string {
	if host, ok := refs.upstreams[service]; ok {
		return host
	}
	return render.ServiceDNSName(service, namespace)
}

// upstreamHost is svc's own address, where nginx connects for it with
// useClusterIP, for an ExternalName and as the backup of its pods: its
// ClusterIP, so that nginx.conf changes, and the pods reload, when the
// Service moves (re-created with another address); an ExternalName's
// target, likewise;
// a headless Service's name, which nginx resolves to its pods' addresses
// when it loads the configuration. Not the ClusterIP's DNS name: nginx
// resolves it only on a reload, and a reload that follows the Service's
// re-creation within the cluster DNS's cache time (CoreDNS caches 5 to 30
// s) would get the old address and keep it.
func upstreamHost(svc *corev1.Service) string {
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

// referenceReasons are the reasons of a missing reference, by kind.
var referenceReasons = map[string]string{"Secret": ReasonSecretNotFound, "ConfigMap": ReasonConfigMapNotFound, "Service": ReasonServiceNotFound}

// readReferences reads every object the spec names (render.ReferencesOf),
// so a missing one is reported by name rather than as pods stuck in
// ContainerCreating (a mounted Secret or ConfigMap) or nginx refusing to
// start (a proxied Service it cannot resolve, or a basic-auth key it cannot
// read, for which it answers every request with 500).
func (r *Reconciler) readReferences(ctx context.Context, nginx *v1beta1.NginxOperator) (referenced, error) {
	var out referenced
	var tls []map[string][]byte
	for _, ref := range render.ReferencesOf(&nginx.Spec) {
		obj := referenceObject(ref.Kind)
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: nginx.Namespace, Name: ref.Name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return out, k8sutil.MissingWatchedReference(referenceReasons[ref.Kind], "%s %s %q not found in namespace %s", ref.Use, ref.Kind, ref.Name, nginx.Namespace)
			}
			return out, err
		}
		switch o := obj.(type) {
		case *corev1.Secret:
			for _, key := range ref.Keys {
				if _, ok := o.Data[key]; !ok {
					return out, k8sutil.MissingWatchedReference(ReasonSecretNotFound, "%s Secret %q has no key %q", ref.Use, ref.Name, key)
				}
			}
			if ref.Use == render.UseTLS {
				tls = append(tls, map[string][]byte{corev1.TLSCertKey: o.Data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: o.Data[corev1.TLSPrivateKeyKey]})
			}
		case *corev1.Service:
			if err := r.readUpstream(ctx, o, &out); err != nil {
				return out, err
			}
		}
	}
	if len(tls) > 0 {
		out.tlsHash = k8sutil.Hash(tls)[:16]
	}
	return out, nil
}

// status says, for each port of a proxied Service in refs, where nginx
// sends it: to how many endpoints, or to which address.
func (refs referenced) status(all render.References, namespace string) []v1beta1.UpstreamStatus {
	var out []v1beta1.UpstreamStatus
	for _, ref := range all.Of(render.UseProxy) {
		for _, port := range ref.Ports {
			u := v1beta1.UpstreamStatus{Service: ref.Name, Port: port}
			addrs, ok := refs.endpoints(ref.Name, port)
			u.Endpoints = int32(len(addrs))
			if !ok || ref.ClusterIP {
				u.Address = net.JoinHostPort(strings.Trim(refs.upstreamHost(ref.Name, namespace), "[]"), strconv.Itoa(int(port)))
			}
			out = append(out, u)
		}
	}
	return out
}

// readUpstream records where nginx sends svc: its own address
// (upstreamHost), for a location that asks for it (useClusterIP), and, but
// for an ExternalName Service or without an EndpointSlice cache, its
// endpoints from the cached EndpointSlices.
func (r *Reconciler) readUpstream(ctx context.Context, svc *corev1.Service, out *referenced) error {
	if out.upstreams == nil {
		out.upstreams = map[string]string{}
	}
	out.upstreams[svc.Name] = upstreamHost(svc)
	if r.Endpoints == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	endpoints, err := r.serviceEndpoints(ctx, svc.Namespace, svc.Name)
	if err != nil {
		return err
	}
	if out.proxied == nil {
		out.proxied = map[string]proxiedService{}
	}
	out.proxied[svc.Name] = proxiedService{service: svc, endpoints: endpoints}
	return nil
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
// serviceport.Annotation decide what nginx listens on and which ports the
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
