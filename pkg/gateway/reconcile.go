package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/instance"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/status"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/routetable"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// gatewayReconciler makes each Gateway of this controller's classes one
// NginxOperator, and reports back on the Gateway and its routes.
type gatewayReconciler struct {
	k8sutil.Deps
	// references reads the metadata of the Services and Secrets Gateways
	// and routes name; a read watches the namespace read from then on.
	references client.Reader
	// routes receive the whole spec of each Gateway's instance (the one
	// road to the nginx controller).
	routes *routetable.Table
	// backendTLS is set where the cluster serves BackendTLSPolicy.
	backendTLS bool
	// kinds are the route kinds the cluster serves.
	kinds RouteKinds
}

func (r *gatewayReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var gw gatewayv1.Gateway
	if err := r.Client.Get(ctx, req.NamespacedName, &gw); err != nil {
		if apierrors.IsNotFound(err) {
			// Its instance goes with it (owner reference); its routes
			// forget it.
			r.routes.Forget(instanceKey(req.NamespacedName))
			routes, err := listRoutes(ctx, r.Client, r.kinds, client.MatchingFields{routeParentIndex: req.NamespacedName.String()})
			if err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, errors.Join(r.writeRoutes(ctx, req.NamespacedName, routes, nil), r.writePolicies(ctx, req.NamespacedName, nil))
		}
		return reconcile.Result{}, err
	}
	class, err := r.classOf(ctx, &gw)
	if err == nil && class == nil {
		r.routes.Forget(instanceKey(req.NamespacedName))
	}
	if err != nil || class == nil || !gw.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, err
	}
	in, sources, err := r.inputs(ctx, &gw)
	if err != nil {
		return reconcile.Result{}, err
	}
	if in.Parameters, err = r.parametersOf(ctx, &gw, class); err != nil {
		return reconcile.Result{}, err
	}
	tr := Translate(ctx, in)
	// The copies of certificates of other namespaces exist before the
	// instance names them. An instance whose copies could not be written
	// is left as it is: it would name a Secret that is missing or, were
	// its name taken, not the copy. A copy no served listener needs goes
	// in any case, also when the instance could not be changed: a revoked
	// grant revokes the copy.
	var applied *v1beta1.NginxOperator
	applyErr := r.applyCertificateCopies(ctx, &gw, tr.Graph.CertificateCopies, sources)
	switch {
	case applyErr != nil:
	case tr.Graph.Parameters.Invalid != "":
		// Refused, not served with other settings than it asked for: its
		// instance, if it has one, is left as it is.
		var live v1beta1.NginxOperator
		if err := r.Client.Get(ctx, instanceKey(req.NamespacedName), &live); err == nil {
			applied = &live
		}
	default:
		var checked v1beta1.NginxOperatorSpec
		if checked, applyErr = checkInstance(ctx, &gw, tr.Spec); applyErr == nil {
			// The spec first: the instance renders as soon as both it and
			// the object are there. The object records the spec as the
			// instance stage made it, which the API server defaults as the
			// check did.
			r.routes.Publish(ctx, instanceKey(req.NamespacedName), gw.UID, routetable.Instance{Spec: checked, Routing: instance.Routing(tr.Graph, checked)})
			applied, applyErr = r.applyInstance(ctx, &gw, tr.Spec)
		}
	}
	staleErr := r.deleteStaleCertificateCopies(ctx, &gw, tr.Graph.CertificateCopies)
	original := gw.DeepCopy()
	status.Gateway(&gw, tr.Graph, applied, applyErr, r.addresses(ctx, &gw))
	if err := r.patchGatewayStatus(ctx, &gw, original); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, errors.Join(applyErr, staleErr, r.writeRoutes(ctx, req.NamespacedName, in.Routes(), tr.Routes),
		r.writePolicies(ctx, req.NamespacedName, tr.Graph.Policies))
}

// classOf is gw's class when it names this controller, nil otherwise.
func (r *gatewayReconciler) classOf(ctx context.Context, gw *gatewayv1.Gateway) (*gatewayv1.GatewayClass, error) {
	var gc gatewayv1.GatewayClass
	if err := r.Client.Get(ctx, types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, &gc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if gc.Spec.ControllerName != graph.ControllerName {
		return nil, nil
	}
	return &gc, nil
}

// inputs reads what the graph of gw reads from the caches, and the
// servable Secrets of other namespaces than gw's that its listeners name
// (what copies of them are made of: see applyCertificateCopies).
func (r *gatewayReconciler) inputs(ctx context.Context, gw *gatewayv1.Gateway) (graph.Inputs, map[types.NamespacedName]*corev1.Secret, error) {
	in := graph.Inputs{Gateway: gw, Grants: map[string][]gatewayv1.ReferenceGrant{}, Secrets: map[types.NamespacedName]bool{},
		Services: map[types.NamespacedName]bool{}, NamespaceLabels: map[string]map[string]string{},
		ExternalAuths: map[types.NamespacedName]*v1beta1.ExternalAuth{}}
	sources := map[types.NamespacedName]*corev1.Secret{}
	routes, err := listRoutes(ctx, r.Client, r.kinds, client.MatchingFields{routeParentIndex: client.ObjectKeyFromObject(gw).String()})
	if err != nil {
		return in, nil, err
	}
	var grants gatewayv1.ReferenceGrantList
	if err := r.Client.List(ctx, &grants); err != nil {
		return in, nil, err
	}
	for _, g := range grants.Items {
		in.Grants[g.Namespace] = append(in.Grants[g.Namespace], g)
	}
	for _, key := range secretsOf(gw) {
		secret, err := r.servable(ctx, key)
		if err != nil {
			return in, nil, err
		}
		in.Secrets[key] = secret != nil
		if secret != nil && key.Namespace != gw.Namespace {
			sources[key] = secret
		}
	}
	var services []types.NamespacedName
	for _, rt := range routes {
		switch rt := rt.(type) {
		case *gatewayv1.HTTPRoute:
			in.HTTPRoutes = append(in.HTTPRoutes, rt)
		case *gatewayv1.GRPCRoute:
			in.GRPCRoutes = append(in.GRPCRoutes, rt)
		default:
			in.StreamRoutes = append(in.StreamRoutes, rt)
		}
		for _, key := range backendsOf(rt) {
			if _, known := in.Services[key]; known {
				// Routes share backends; each lookup in the references
				// cache costs a REST mapping.
				continue
			}
			ok, err := r.exists(ctx, "Service", key)
			if err != nil {
				return in, nil, err
			}
			in.Services[key] = ok
			services = append(services, key)
		}
		if err := r.readExternalAuths(ctx, &in, rt); err != nil {
			return in, nil, err
		}
		if _, done := in.NamespaceLabels[rt.GetNamespace()]; !done {
			ns := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}}
			if err := r.Client.Get(ctx, types.NamespacedName{Name: rt.GetNamespace()}, ns); client.IgnoreNotFound(err) != nil {
				return in, nil, err
			}
			in.NamespaceLabels[rt.GetNamespace()] = ns.Labels
		}
	}
	return in, sources, r.readPolicies(ctx, &in, services)
}

// readExternalAuths records in in the NginxExternalAuths rt's filters name
// that exist.
func (r *gatewayReconciler) readExternalAuths(ctx context.Context, in *graph.Inputs, rt client.Object) error {
	for _, key := range graph.ExternalAuthsOf(rt) {
		if _, known := in.ExternalAuths[key]; known {
			continue
		}
		var auth v1beta1.NginxExternalAuth
		if err := r.Client.Get(ctx, key, &auth); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		in.ExternalAuths[key] = &auth.Spec
	}
	return nil
}

// servable returns the Secret when it exists and holds a certificate and
// key nginx can serve: a kubernetes.io/tls Secret whose tls.crt and tls.key
// make a key pair; nil otherwise. The references cache has its metadata;
// the data is read from the API for the Secrets a Gateway names, and only
// those.
func (r *gatewayReconciler) servable(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	if ok, err := r.exists(ctx, "Secret", key); !ok || err != nil {
		return nil, err
	}
	var secret corev1.Secret
	if err := r.APIReader.Get(ctx, key, &secret); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if secret.Type != corev1.SecretTypeTLS {
		return nil, nil
	}
	if _, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return nil, nil
	}
	return &secret, nil
}

// exists reports whether the references cache holds the object.
func (r *gatewayReconciler) exists(ctx context.Context, kind string, key types.NamespacedName) (bool, error) {
	obj := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}}
	err := r.references.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// instanceKey names the instance of Gateway gw.
func instanceKey(gw types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: gw.Namespace, Name: graph.InstanceName(gw.Name)}
}

// applyInstance applies gw's NginxOperator, the record of spec but for
// its servers (the nginx controller takes the whole spec from the route
// table, pkg/routetable), and returns it as the cache has it (nil before
// it exists there).
func (r *gatewayReconciler) applyInstance(ctx context.Context, gw *gatewayv1.Gateway, spec v1beta1.NginxOperatorSpec) (*v1beta1.NginxOperator, error) {
	spec.Config.Servers = nil
	desired := &v1beta1.NginxOperator{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: graph.InstanceName(gw.Name), Namespace: gw.Namespace,
			Labels: map[string]string{graph.LabelGatewayName: gw.Name}},
		Spec: spec,
	}
	if _, err := r.Applier.ApplyOwned(ctx, r.Recorder, gw, desired); err != nil {
		return nil, err
	}
	var live v1beta1.NginxOperator
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), &live); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return &live, nil
}

// checkInstance checks the instance spec, which Translate made of gw,
// against every rule of the NginxOperator CRD, with the room a Gateway's
// routes need, and returns it as the check defaulted it: what the route
// table publishes. The graph checked each location as it made it, left
// out every route whose locations or streams break a rule, and kept the
// others' locations as the check defaulted them, so they are not checked
// again (validation.RoutedNginxOperatorOfCheckedLocations), and an error
// here is the Gateway's own (its parameters, its listeners): the instance
// is left as it was.
func checkInstance(ctx context.Context, gw *gatewayv1.Gateway, spec v1beta1.NginxOperatorSpec) (v1beta1.NginxOperatorSpec, error) {
	checked, errs := validation.RoutedNginxOperatorOfCheckedLocations(ctx, &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: graph.InstanceName(gw.Name), Namespace: gw.Namespace}, Spec: spec})
	if len(errs) > 0 {
		return spec, fmt.Errorf("the instance breaks the NginxOperator's rules: %w", errs.ToAggregate())
	}
	return checked.Spec, nil
}

// addresses are the addresses of the instance's Service clients use: its
// load balancer's, when it is a LoadBalancer Service that has them (the
// parameters' service.type), its cluster addresses otherwise.
func (r *gatewayReconciler) addresses(ctx context.Context, gw *gatewayv1.Gateway) []gatewayv1.GatewayStatusAddress {
	var svc corev1.Service
	key := types.NamespacedName{Namespace: gw.Namespace, Name: layout.NamesFor(graph.InstanceName(gw.Name)).Service}
	if err := r.Client.Get(ctx, key, &svc); err != nil {
		return nil
	}
	var out []gatewayv1.GatewayStatusAddress
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: ptr.To(gatewayv1.IPAddressType), Value: in.IP})
		case in.Hostname != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: ptr.To(gatewayv1.HostnameAddressType), Value: in.Hostname})
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != "" && ip != corev1.ClusterIPNone {
			out = append(out, gatewayv1.GatewayStatusAddress{Type: ptr.To(gatewayv1.IPAddressType), Value: ip})
		}
	}
	return out
}

func (r *gatewayReconciler) patchGatewayStatus(ctx context.Context, gw, original *gatewayv1.Gateway) error {
	if equality.Semantic.DeepEqual(gw.Status, original.Status) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, gw, client.MergeFrom(original)))
}

// writeRoutes makes each route's status entries for Gateway gw what
// parents says, and removes this controller's entries for gw from the
// routes not in parents.
func (r *gatewayReconciler) writeRoutes(ctx context.Context, gw types.NamespacedName, routes []graph.Object, parents []status.RouteParents) error {
	want := map[graph.RouteRef][]gatewayv1.RouteParentStatus{}
	for _, p := range parents {
		want[graph.RouteRef{Kind: p.Kind, Key: p.Key}] = p.Parents
	}
	var errs []error
	for _, rt := range routes {
		k := graph.KindOf(rt)
		if k == nil {
			continue
		}
		routeStatus := graph.PartsOf(rt).Status
		entries, changed := status.RouteEntries(routeStatus.Parents, rt.GetNamespace(), gw, want[graph.RouteRef{Kind: k.Kind, Key: client.ObjectKeyFromObject(rt)}])
		if !changed {
			continue
		}
		before := rt.DeepCopyObject().(client.Object)
		routeStatus.Parents = entries
		if err := r.Client.Status().Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
