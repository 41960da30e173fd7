package gatewayapi

// What a Gateway becomes: the one helper that follows the controllers'
// chain from a Gateway's Inputs to the spec pkg/nginx renders. Everything
// else in this package reads its result; a change of the chain (the
// translation checking the instance in one pass, say) changes this
// function alone.

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// instanceOf is the NginxOperator spec Gateway in.Gateway becomes, as the
// nginx controller renders it, and the translation whose statuses its
// routes are told; the error is why the Gateway controller does not change
// the instance at all (every route's change then stalls). It mirrors, in
// process and in order:
//
//  1. the Gateway controller (pkg/gateway, reconcile.go): Translate(ctx,
//     in), whose graph judges each route's locations and streams by the
//     NginxOperator's rules as it makes them and leaves out, and tells,
//     the routes that break one; then checkInstance: the instance, its
//     locations as the graph checked them, against every rule of the
//     NginxOperator CRD with a Gateway's room
//     (validation.RoutedNginxOperatorOfCheckedLocations), whose errors
//     refuse the instance;
//  2. what it publishes: the spec as checked, to the route table
//     (pkg/routetable);
//  3. the nginx controller (pkg/nginx, routed.go's validated): the
//     published spec, checked as one of checked servers
//     (validation.RoutedNginxOperatorOfCheckedServers), is what plan
//     renders (render.Config).
//
// Not mirrored: what reads the cluster again (the nginx controller's
// resolve, ServiceGrants' second check of cross-namespace backends, the
// children's dry-runs), which sees the same objects the Inputs were read
// from.
func instanceOf(ctx context.Context, in graph.Inputs) (*v1beta1.NginxOperatorSpec, gateway.Translation, error) {
	gw := in.Gateway
	meta := metav1.ObjectMeta{Name: graph.InstanceName(gw.Name), Namespace: gw.Namespace}
	tr := gateway.Translate(ctx, in)
	checked, errs := validation.RoutedNginxOperatorOfCheckedLocations(ctx, &v1beta1.NginxOperator{ObjectMeta: meta, Spec: tr.Spec})
	if len(errs) > 0 {
		return nil, tr, fmt.Errorf("the instance breaks the NginxOperator's rules: %w", errs.ToAggregate())
	}
	desired, errs := validation.RoutedNginxOperatorOfCheckedServers(ctx, &v1beta1.NginxOperator{ObjectMeta: meta, Spec: checked.Spec})
	if len(errs) > 0 {
		return nil, tr, fmt.Errorf("the nginx controller refuses the instance (InvalidConfig): %w", errs.ToAggregate())
	}
	return &desired.Spec, tr, nil
}
