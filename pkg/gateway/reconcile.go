package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/conditions"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
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
	// routes receive the servers of each Gateway's instance.
	routes *routetable.Table
	// backendTLS is set where the cluster serves BackendTLSPolicy.
	backendTLS bool
	// kinds are the route kinds the cluster serves.
	kinds RouteKinds
}

// LabelGatewayName names, on an instance, the Gateway it serves (Gateway
// API's well-known label).
const LabelGatewayName = "gateway.networking.k8s.io/gateway-name"

// InstanceName is the name of the NginxOperator of Gateway gateway, in the
// Gateway's namespace: <gateway>-gateway within the 47 characters and the
// leading letter the CRD asks of an instance's name (a longer one is cut
// and given a hash).
func InstanceName(gateway string) string {
	if gateway != "" && gateway[0] >= 'a' && gateway[0] <= 'z' {
		return naming.NameWithLimit(maxInstanceName, gateway, "gateway")
	}
	return naming.NameWithLimit(maxInstanceName, "gateway", gateway)
}

// maxInstanceName is the CRD's limit on an NginxOperator's name.
const maxInstanceName = 47

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
	var instance *v1beta1.NginxOperator
	applyErr := r.applyCertificateCopies(ctx, &gw, tr.CertificateCopies, sources)
	switch {
	case applyErr != nil:
	case tr.invalidParameters != "":
		// Refused, not served with other settings than it asked for: its
		// instance, if it has one, is left as it is.
		var live v1beta1.NginxOperator
		if err := r.Client.Get(ctx, instanceKey(req.NamespacedName), &live); err == nil {
			instance = &live
		}
	default:
		if tr.Spec.Config.Servers, applyErr = checkInstance(ctx, &gw, tr.Spec); applyErr == nil {
			// The servers first: the instance renders as soon as both are
			// there.
			r.routes.Publish(ctx, instanceKey(req.NamespacedName), gw.UID, tr.Spec.Config.Servers)
			instance, applyErr = r.applyInstance(ctx, &gw, tr.Spec)
		}
	}
	staleErr := r.deleteStaleCertificateCopies(ctx, &gw, tr.CertificateCopies)
	original := gw.DeepCopy()
	r.setStatus(ctx, &gw, tr, instance, applyErr)
	if err := r.patchGatewayStatus(ctx, &gw, original); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, errors.Join(applyErr, staleErr, r.writeRoutes(ctx, req.NamespacedName, in.routes(), tr.Routes),
		r.writePolicies(ctx, req.NamespacedName, tr.Policies))
}

// classOf is gw's class when it names this controller, nil otherwise.
func (r *gatewayReconciler) classOf(ctx context.Context, gw *gatewayv1.Gateway) (*gatewayv1.GatewayClass, error) {
	var gc gatewayv1.GatewayClass
	if err := r.Client.Get(ctx, types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, &gc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if gc.Spec.ControllerName != ControllerName {
		return nil, nil
	}
	return &gc, nil
}

// inputs reads what the translation of gw needs from the caches, and the
// servable Secrets of other namespaces than gw's that its listeners name
// (what copies of them are made of: see applyCertificateCopies).
func (r *gatewayReconciler) inputs(ctx context.Context, gw *gatewayv1.Gateway) (Inputs, map[types.NamespacedName]*corev1.Secret, error) {
	in := Inputs{Gateway: gw, Grants: map[string][]gatewayv1.ReferenceGrant{}, Secrets: map[types.NamespacedName]bool{},
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
func (r *gatewayReconciler) readExternalAuths(ctx context.Context, in *Inputs, rt client.Object) error {
	for _, key := range externalAuthsOf(rt) {
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
	return types.NamespacedName{Namespace: gw.Namespace, Name: InstanceName(gw.Name)}
}

// applyInstance applies gw's NginxOperator, made of spec but for its
// servers, which the nginx controller takes from the route table
// (pkg/routetable), and returns it as the cache has it (nil before it
// exists there).
func (r *gatewayReconciler) applyInstance(ctx context.Context, gw *gatewayv1.Gateway, spec v1beta1.NginxOperatorSpec) (*v1beta1.NginxOperator, error) {
	if spec.Replicas == nil {
		spec.Replicas = ptr.To[int32](1)
	}
	spec.Config.Servers = nil
	desired := &v1beta1.NginxOperator{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: InstanceName(gw.Name), Namespace: gw.Namespace,
			Labels: map[string]string{LabelGatewayName: gw.Name}},
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
// routes need (validation.RoutedNginxOperator), and returns its servers
// as the check defaulted them. Translate left out every route whose
// locations or streams break a rule, so an error here is the Gateway's own
// (its parameters, its listeners): the instance is left as it was.
func checkInstance(ctx context.Context, gw *gatewayv1.Gateway, spec v1beta1.NginxOperatorSpec) ([]v1beta1.Server, error) {
	checked, errs := validation.RoutedNginxOperator(ctx, &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: InstanceName(gw.Name), Namespace: gw.Namespace}, Spec: spec})
	if len(errs) > 0 {
		return spec.Config.Servers, fmt.Errorf("the instance breaks the NginxOperator's rules: %w", errs.ToAggregate())
	}
	// The servers as checked and defaulted are what the table publishes:
	// the nginx controller checks only how they fit.
	return checked.Spec.Config.Servers, nil
}

// programmed reports whether nginx serves the Gateway's listeners: the
// instance's status describes its spec, a pod of its current template (the
// listeners are its ports) is ready, and nginx has not refused the
// configuration. A route change needs no new pod: it reaches the running
// ones in a reload, which the instance's status.loadedReplicas follows;
// the Gateway stays Programmed meanwhile, as its listeners stay served.
func programmed(instance *v1beta1.NginxOperator) bool {
	if instance == nil || instance.Status.ObservedGeneration != instance.Generation {
		return false
	}
	if meta.IsStatusConditionTrue(instance.Status.Conditions, v1beta1.ConditionDegraded) {
		return false
	}
	return instance.Status.ReadyReplicas > 0 && instance.Status.UpdatedReplicas > 0
}

// setStatus sets gw's conditions, listeners and addresses.
func (r *gatewayReconciler) setStatus(ctx context.Context, gw *gatewayv1.Gateway, tr Translation, instance *v1beta1.NginxOperator, applyErr error) {
	gen := gw.Generation
	ok := programmed(instance)
	old := gw.Status.Listeners
	gw.Status.Listeners = nil
	for _, l := range tr.listeners {
		s := l.status(gen, ok)
		var was []metav1.Condition
		if i := slices.IndexFunc(old, func(o gatewayv1.ListenerStatus) bool { return o.Name == s.Name }); i >= 0 {
			was = old[i].Conditions
		}
		s.Conditions = keepTransitions(was, s.Conditions)
		gw.Status.Listeners = append(gw.Status.Listeners, s)
	}
	name := InstanceName(gw.Name)
	accepted := conditions.GatewayAccepted(gen, name)
	switch {
	case tr.invalidParameters != "":
		accepted = conditions.GatewayInvalidParameters(gen, tr.invalidParameters)
	case !tr.Accepted():
		accepted = conditions.GatewayNoServableListener(gen)
	case !tr.AllListenersAccepted():
		accepted = conditions.GatewaySomeListenersNotValid(gen)
	}
	meta.SetStatusCondition(&gw.Status.Conditions, accepted)
	prog := conditions.GatewayProgrammed(gen)
	switch {
	case !tr.Accepted():
		prog = conditions.GatewayNotProgrammedNotAccepted(gen)
	case applyErr != nil:
		prog = conditions.GatewayNotApplied(gen, name, applyErr)
	case !ok:
		prog = conditions.GatewayPending(gen, name)
	}
	meta.SetStatusCondition(&gw.Status.Conditions, prog)
	gw.Status.Addresses = r.addresses(ctx, gw)
}

// addresses are the addresses of the instance's Service clients use: its
// load balancer's, when it is a LoadBalancer Service that has them (the
// parameters' service.type), its cluster addresses otherwise.
func (r *gatewayReconciler) addresses(ctx context.Context, gw *gatewayv1.Gateway) []gatewayv1.GatewayStatusAddress {
	var svc corev1.Service
	key := types.NamespacedName{Namespace: gw.Namespace, Name: layout.NamesFor(InstanceName(gw.Name)).Service}
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
func (r *gatewayReconciler) writeRoutes(ctx context.Context, gw types.NamespacedName, routes []client.Object, parents []RouteParents) error {
	want := map[string][]gatewayv1.RouteParentStatus{}
	for _, p := range parents {
		want[string(p.Kind)+" "+p.Key.String()] = p.Parents
	}
	gateway := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: gw.Namespace, Name: gw.Name}}
	var errs []error
	for _, rt := range routes {
		status, kind := routeStatus(rt)
		original := status.DeepCopy()
		entries := slices.DeleteFunc(slices.Clone(status.Parents), func(p gatewayv1.RouteParentStatus) bool {
			return p.ControllerName == ControllerName && refersTo(p.ParentRef, rt.GetNamespace(), gateway)
		})
		for _, p := range want[string(kind)+" "+client.ObjectKeyFromObject(rt).String()] {
			var was []metav1.Condition
			if old := findParent(original.Parents, p.ParentRef); old != nil {
				was = old.Conditions
			}
			p.Conditions = keepTransitions(was, p.Conditions)
			entries = append(entries, p)
		}
		if slices.EqualFunc(entries, original.Parents, parentStatusEqual) {
			continue
		}
		before := rt.DeepCopyObject().(client.Object)
		status.Parents = entries
		if err := r.Client.Status().Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// parentStatusEqual compares two entries of a route's status field by
// field: reflection's DeepEqual over a thousand routes' entries was a
// tenth of a Gateway's reconcile.
func parentStatusEqual(a, b gatewayv1.RouteParentStatus) bool {
	return a.ControllerName == b.ControllerName && parentRefEqual(a.ParentRef, b.ParentRef) &&
		slices.EqualFunc(a.Conditions, b.Conditions, conditionEqual)
}

func parentRefEqual(a, b gatewayv1.ParentReference) bool {
	return a.Name == b.Name && ptr.Equal(a.Group, b.Group) && ptr.Equal(a.Kind, b.Kind) && ptr.Equal(a.Namespace, b.Namespace) &&
		ptr.Equal(a.SectionName, b.SectionName) && ptr.Equal(a.Port, b.Port)
}

func conditionEqual(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.ObservedGeneration == b.ObservedGeneration &&
		a.LastTransitionTime.Equal(&b.LastTransitionTime) && a.Reason == b.Reason && a.Message == b.Message
}

// routeStatus is the status of route rt, to change in place, and its kind.
func routeStatus(rt client.Object) (*gatewayv1.RouteStatus, gatewayv1.Kind) {
	if k := kindOf(rt); k != nil {
		return k.parts(rt).status, k.kind
	}
	return &gatewayv1.RouteStatus{}, ""
}

func findParent(parents []gatewayv1.RouteParentStatus, ref gatewayv1.ParentReference) *gatewayv1.RouteParentStatus {
	for i := range parents {
		if parents[i].ControllerName == ControllerName && parentRefEqual(parents[i].ParentRef, ref) {
			return &parents[i]
		}
	}
	return nil
}

// keepTransitions sets each condition's lastTransitionTime: the old one's
// while its status holds, now when it changes.
func keepTransitions(old, conds []metav1.Condition) []metav1.Condition {
	out := slices.Clone(old)
	kept := []metav1.Condition{}
	for _, c := range conds {
		meta.SetStatusCondition(&out, c)
		kept = append(kept, *meta.FindStatusCondition(out, c.Type))
	}
	return kept
}

// routes are the routes of in, as objects.
func (in Inputs) routes() []client.Object {
	out := make([]client.Object, 0, len(in.HTTPRoutes)+len(in.GRPCRoutes)+len(in.StreamRoutes))
	for _, rt := range in.HTTPRoutes {
		out = append(out, rt)
	}
	for _, rt := range in.GRPCRoutes {
		out = append(out, rt)
	}
	return append(out, in.StreamRoutes...)
}
