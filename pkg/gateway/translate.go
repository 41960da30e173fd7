package gateway

import (
	"context"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/instance"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/status"
)

// Translation is what the pure stages make of one Gateway's Inputs: the
// graph (every object judged, the routes placed), the instance's spec, and
// the status entries the Gateway owes its routes.
type Translation struct {
	Graph  graph.Graph
	Spec   v1beta1.NginxOperatorSpec
	Routes []status.RouteParents
}

// Translate runs the pure stages on in, once per reconcile (hack/structure
// holds the reconcile to one call).
func Translate(ctx context.Context, in graph.Inputs) Translation {
	g := graph.Build(ctx, in)
	return Translation{Graph: g, Spec: instance.Spec(g), Routes: status.Routes(g)}
}
