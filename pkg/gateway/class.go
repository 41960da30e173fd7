package gateway

import (
	"context"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/status"
)

// SupportedFeatures are the Gateway API features a class of this
// controller claims in its status: each one's conformance tests pass on
// the real node (test/conformance), and only those.
var SupportedFeatures = []features.FeatureName{
	features.SupportBackendTLSPolicy,
	features.SupportGateway,
	features.SupportGatewayHTTPListenerIsolation,
	features.SupportGatewayInfrastructure,
	features.SupportGatewayPort8080,
	features.SupportGRPCRoute,
	features.SupportGRPCRouteNamedRouteRule,
	features.SupportTCPRoute,
	features.SupportTLSRoute,
	features.SupportTLSRouteModeTerminate,
	features.SupportUDPRoute,
	features.SupportHTTPRoute,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteCORS,
	features.SupportHTTPRouteBackendProtocolWebSocket,
	features.SupportHTTPRouteDestinationPortMatching,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRouteNamedRouteRule,
	features.SupportHTTPRouteParentRefPort,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteResponseHeaderModification,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportReferenceGrant,
}

// classReconciler accepts the GatewayClasses that name this controller.
type classReconciler struct {
	Client client.Client
}

// sync accepts gc when it names this controller and its parametersRef,
// if any, names parameters that exist, and lists what it supports; a class
// of another controller is left as it is.
func (r *classReconciler) sync(ctx context.Context, gc *gatewayv1.GatewayClass) (reconcile.Result, error) {
	if gc.Spec.ControllerName != graph.ControllerName {
		return reconcile.Result{}, nil
	}
	params, err := readParameters(ctx, r.Client, classRef(gc))
	if err != nil {
		return reconcile.Result{}, err
	}
	status.Class(gc, params.Invalid)
	gc.Status.SupportedFeatures = supportedFeatures()
	return reconcile.Result{}, nil
}

// supportedFeatures lists SupportedFeatures sorted by name, as the API
// asks.
func supportedFeatures() []gatewayv1.SupportedFeature {
	out := make([]gatewayv1.SupportedFeature, 0, len(SupportedFeatures))
	for _, f := range SupportedFeatures {
		out = append(out, gatewayv1.SupportedFeature{Name: gatewayv1.FeatureName(f)})
	}
	slices.SortFunc(out, func(a, b gatewayv1.SupportedFeature) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return out
}

// naming maps parameters to the classes of this controller that name them.
func (r *classReconciler) naming(ctx context.Context, obj client.Object) []reconcile.Request {
	var list gatewayv1.GatewayClassList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing GatewayClasses for a change of parameters")
		return nil
	}
	var out []reconcile.Request
	for _, gc := range list.Items {
		if ref := classRef(&gc); gc.Spec.ControllerName == graph.ControllerName && ref.name == obj.GetName() && ref.ns == obj.GetNamespace() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&gc)})
		}
	}
	return out
}
