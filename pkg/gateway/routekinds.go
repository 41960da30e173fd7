package gateway

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// RouteKinds are the kinds of route the controllers watch, list and write
// the status of: every kind of graph.Kinds that is not optional (CanRun
// requires them), and the optional ones where the API server serves their
// v1 (Gateway API 1.5 made TLSRoute standard, 1.6 the other streams'):
// a cluster with an older release's CRDs runs the Gateway controller
// without them.
type RouteKinds []gatewayv1.Kind

// ServedRouteKinds are the route kinds mgr's API server serves.
func ServedRouteKinds(mgr ctrl.Manager) RouteKinds {
	var out RouteKinds
	for _, k := range graph.Kinds() {
		gk := schema.GroupKind{Group: gatewayv1.GroupName, Kind: string(k.Kind)}
		if !k.Optional {
			out = append(out, k.Kind)
		} else if _, err := mgr.GetRESTMapper().RESTMapping(gk, gatewayv1.GroupVersion.Version); err == nil {
			out = append(out, k.Kind)
		}
	}
	return out
}

// newRoute is an empty route of kind.
func newRoute(kind gatewayv1.Kind) client.Object { return graph.EntryOf(kind).New() }

// listRoutes are the routes of kinds that opts select.
func listRoutes(ctx context.Context, c client.Reader, kinds RouteKinds, opts ...client.ListOption) ([]graph.Object, error) {
	var out []graph.Object
	for _, kind := range kinds {
		list := graph.EntryOf(kind).NewList()
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			out = append(out, item.(graph.Object))
		}
	}
	return out, nil
}
