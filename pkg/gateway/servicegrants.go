package gateway

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// ServiceGrants decide whether an NginxOperator may send to a Service of
// another namespace (nginx.ServiceGrants), from the cache of the Gateway
// controllers: the namespace consents through a ReferenceGrant that names
// NginxOperators, or, for the instance of a Gateway, through the
// HTTPRoutes attached to that Gateway that may refer to the Service (as a
// backend, or as the Service of an NginxExternalAuth of theirs).
//
// The second rule is why a Gateway's instance needs no grant of its own,
// and why it cannot be abused: an instance that claims to be a Gateway's
// (its controller owner reference and name) still sends only where some
// route naming that Gateway as a parent was allowed to send, which is
// where the Gateway sends anyway.
type ServiceGrants struct {
	// Client reads ReferenceGrants and routes, the latter indexed by
	// the Services they name (routeBackendIndex, see SetupWithManager).
	Client client.Reader
	// Kinds are the kinds of route the API server serves
	// (ServedRouteKinds).
	Kinds RouteKinds
}

// PermitsService implements nginx.ServiceGrants.
func (g ServiceGrants) PermitsService(ctx context.Context, nginx *v1beta1.NginxOperator, svc types.NamespacedName) (bool, error) {
	var grants gatewayv1.ReferenceGrantList
	if err := g.Client.List(ctx, &grants, client.InNamespace(svc.Namespace)); err != nil {
		return false, err
	}
	if graph.GrantedBy(grants.Items, gatewayv1.Group(v1beta1.GroupVersion.Group), "NginxOperator", nginx.Namespace, "", "Service", svc.Name) {
		return true, nil
	}
	gw, ok := owningGateway(nginx)
	if !ok {
		return false, nil
	}
	routes, err := listRoutes(ctx, g.Client, g.Kinds, client.MatchingFields{routeBackendIndex: svc.String()})
	if err != nil {
		return false, err
	}
	for _, rt := range routes {
		if !namesParent(rt, gw) {
			continue
		}
		kind := graph.KindOf(rt).Kind
		if rt.GetNamespace() == svc.Namespace || graph.GrantedBy(grants.Items, graph.Group, kind, rt.GetNamespace(), "", "Service", svc.Name) {
			return true, nil
		}
	}
	return g.authenticatesWith(ctx, gw, svc)
}

// authenticatesWith reports whether a route attached to gw, in svc's
// namespace, names an NginxExternalAuth of its namespace whose Service is
// svc: a route may send its requests to be checked by its own namespace's
// Service, as it may send them to one.
func (g ServiceGrants) authenticatesWith(ctx context.Context, gw, svc types.NamespacedName) (bool, error) {
	routes, err := listRoutes(ctx, g.Client, g.Kinds, client.InNamespace(svc.Namespace))
	if err != nil {
		return false, err
	}
	for _, rt := range routes {
		if !namesParent(rt, gw) {
			continue
		}
		for _, key := range graph.ExternalAuthsOf(rt) {
			var auth v1beta1.NginxExternalAuth
			if err := g.Client.Get(ctx, key, &auth); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return false, err
			}
			if auth.Spec.Service == svc.Name {
				return true, nil
			}
		}
	}
	return false, nil
}

// Watched implements nginx.ServiceGrants.
func (ServiceGrants) Watched() client.Object { return &gatewayv1.ReferenceGrant{} }

// owningGateway is the Gateway whose instance nginx is: the Gateway its
// controller owner reference names, when nginx bears that Gateway's
// instance name.
func owningGateway(nginx *v1beta1.NginxOperator) (types.NamespacedName, bool) {
	owner := metav1.GetControllerOf(nginx)
	if owner == nil || owner.Kind != "Gateway" || owner.APIVersion != gatewayv1.GroupVersion.String() || graph.InstanceName(owner.Name) != nginx.Name {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: nginx.Namespace, Name: owner.Name}, true
}

// namesParent reports whether route rt's spec names gw as a parent.
func namesParent(rt graph.Object, gw types.NamespacedName) bool {
	for _, ref := range graph.PartsOf(rt).Parents {
		if graph.RefersTo(ref, rt.GetNamespace(), &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: gw.Namespace, Name: gw.Name}}) {
			return true
		}
	}
	return false
}
