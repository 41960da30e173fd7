package instance

import (
	"cmp"
	"slices"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// Routing is what spec, the instance of g, serves, for its status
// (status.routing): how many routes, servers, locations and streams, and
// what each route placed, the first v1beta1.MaxRoutingRoutes routes by
// name. kubectl shows there what the nginx controller holds in memory.
func Routing(g graph.Graph, spec v1beta1.NginxOperatorSpec) *v1beta1.RoutingStatus {
	out := &v1beta1.RoutingStatus{Servers: int32(len(spec.Config.Servers)), Streams: int32(len(spec.Config.Streams))}
	for _, s := range spec.Config.Servers {
		out.Locations += int32(len(s.Locations))
	}
	for _, r := range g.Routes {
		if p := r.Placed; p.Locations > 0 || p.Streams > 0 {
			out.Routes++
			out.ByRoute = append(out.ByRoute, v1beta1.RouteRouting{Name: r.Name(), Servers: p.Servers, Locations: p.Locations, Streams: p.Streams})
		}
	}
	slices.SortFunc(out.ByRoute, func(a, b v1beta1.RouteRouting) int { return cmp.Compare(a.Name, b.Name) })
	out.ByRoute = out.ByRoute[:min(len(out.ByRoute), v1beta1.MaxRoutingRoutes)]
	return out
}
