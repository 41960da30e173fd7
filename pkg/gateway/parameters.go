package gateway

// Parameters: the NginxGatewayParameters a GatewayClass (spec.parametersRef)
// and a Gateway (spec.infrastructure.parametersRef) name, which set the
// instance's settings: replicas, image, nginx tuning, the Service, pods.

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/instance"
)

// ParametersKind is the kind a parametersRef names (group v1beta1's).
const ParametersKind = "NginxGatewayParameters"

// parametersOf reads the parameters of gw, whose class is gc.
func (r *gatewayReconciler) parametersOf(ctx context.Context, gw *gatewayv1.Gateway, gc *gatewayv1.GatewayClass) (graph.Parameters, error) {
	return readParameters(ctx, r.Client, classRef(gc), gatewayRef(gw))
}

// readParameters reads the parameters refs name, later ones over earlier
// ones.
func readParameters(ctx context.Context, c client.Reader, refs ...parametersRef) (graph.Parameters, error) {
	var out graph.Parameters
	for _, ref := range refs {
		if ref.name == "" {
			continue
		}
		if ref.group != v1beta1.GroupVersion.Group || ref.kind != ParametersKind {
			return graph.Parameters{Invalid: fmt.Sprintf("%s names %s %s of group %q: the parameters of this implementation are %s of group %s",
				ref.what, ref.kind, ref.name, ref.group, ParametersKind, v1beta1.GroupVersion.Group)}, nil
		}
		if ref.ns == "" {
			return graph.Parameters{Invalid: fmt.Sprintf("%s names %s %s without a namespace: name the namespace it is in", ref.what, ParametersKind, ref.name)}, nil
		}
		var p v1beta1.NginxGatewayParameters
		if err := c.Get(ctx, types.NamespacedName{Namespace: ref.ns, Name: ref.name}, &p); err != nil {
			if apierrors.IsNotFound(err) {
				return graph.Parameters{Invalid: fmt.Sprintf("%s names %s %s/%s, which does not exist", ref.what, ParametersKind, ref.ns, ref.name)}, nil
			}
			return graph.Parameters{}, err
		}
		out.Spec = instance.Overlaid(out.Spec, &p.Spec)
	}
	return out, nil
}

// parametersRef is a parametersRef of a class or a Gateway, what says
// which.
type parametersRef struct {
	what                  string
	group, kind, name, ns string
}

// classRef is gc's parametersRef ("" name without one). A class is
// cluster-scoped: its reference names the namespace.
func classRef(gc *gatewayv1.GatewayClass) parametersRef {
	ref := gc.Spec.ParametersRef
	if ref == nil {
		return parametersRef{}
	}
	out := parametersRef{what: "the GatewayClass's parametersRef", group: string(ref.Group), kind: string(ref.Kind), name: ref.Name}
	if ref.Namespace != nil {
		out.ns = string(*ref.Namespace)
	}
	return out
}

// gatewayRef is gw's infrastructure.parametersRef, in gw's namespace.
func gatewayRef(gw *gatewayv1.Gateway) parametersRef {
	if gw.Spec.Infrastructure == nil || gw.Spec.Infrastructure.ParametersRef == nil {
		return parametersRef{}
	}
	ref := gw.Spec.Infrastructure.ParametersRef
	return parametersRef{what: "infrastructure.parametersRef", group: string(ref.Group), kind: string(ref.Kind), name: ref.Name, ns: gw.Namespace}
}
