package gateway

// Parameters: the NginxGatewayParameters a GatewayClass (spec.parametersRef)
// and a Gateway (spec.infrastructure.parametersRef) name, which set the
// instance's settings: replicas, image, nginx tuning, the Service, pods.

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// ParametersKind is the kind a parametersRef names (group v1beta1's).
const ParametersKind = "NginxGatewayParameters"

// Parameters are the settings a Gateway's class and the Gateway name, as
// the translation reads them.
type Parameters struct {
	// Spec is the class's parameters with each field the Gateway's set
	// replacing it; nil without any.
	Spec *v1beta1.NginxGatewayParametersSpec
	// Invalid says why a reference cannot be used (another kind, a missing
	// object); the Gateway is then not accepted.
	Invalid string
}

// parametersOf reads the parameters of gw, whose class is gc.
func (r *gatewayReconciler) parametersOf(ctx context.Context, gw *gatewayv1.Gateway, gc *gatewayv1.GatewayClass) (Parameters, error) {
	return readParameters(ctx, r.Client, classRef(gc), gatewayRef(gw))
}

// readParameters reads the parameters refs name, later ones over earlier
// ones.
func readParameters(ctx context.Context, c client.Reader, refs ...parametersRef) (Parameters, error) {
	var out Parameters
	for _, ref := range refs {
		if ref.name == "" {
			continue
		}
		if ref.group != v1beta1.GroupVersion.Group || ref.kind != ParametersKind {
			return Parameters{Invalid: fmt.Sprintf("%s names %s %s of group %q: the parameters of this implementation are %s of group %s",
				ref.what, ref.kind, ref.name, ref.group, ParametersKind, v1beta1.GroupVersion.Group)}, nil
		}
		if ref.ns == "" {
			return Parameters{Invalid: fmt.Sprintf("%s names %s %s without a namespace: name the namespace it is in", ref.what, ParametersKind, ref.name)}, nil
		}
		var p v1beta1.NginxGatewayParameters
		if err := c.Get(ctx, types.NamespacedName{Namespace: ref.ns, Name: ref.name}, &p); err != nil {
			if apierrors.IsNotFound(err) {
				return Parameters{Invalid: fmt.Sprintf("%s names %s %s/%s, which does not exist", ref.what, ParametersKind, ref.ns, ref.name)}, nil
			}
			return Parameters{}, err
		}
		out.Spec = overlaid(out.Spec, &p.Spec)
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

// overlaid is base with each field over sets (not its zero value)
// replacing base's, whole: a Gateway's pod settings replace its class's,
// rather than merge with them.
func overlaid(base, over *v1beta1.NginxGatewayParametersSpec) *v1beta1.NginxGatewayParametersSpec {
	if base == nil {
		return over.DeepCopy()
	}
	out := base.DeepCopy()
	from, to := reflect.ValueOf(over.DeepCopy()).Elem(), reflect.ValueOf(out).Elem()
	for i := range from.NumField() {
		if !from.Field(i).IsZero() {
			to.Field(i).Set(from.Field(i))
		}
	}
	return out
}

// applyParameters sets p's settings in spec, a Gateway's instance's.
func applyParameters(spec *v1beta1.NginxOperatorSpec, p *v1beta1.NginxGatewayParametersSpec) {
	if p == nil {
		return
	}
	p = p.DeepCopy()
	spec.Replicas, spec.Image, spec.ImagePullPolicy, spec.ImagePullSecrets = p.Replicas, p.Image, p.ImagePullPolicy, p.ImagePullSecrets
	spec.PodDisruptionBudget, spec.NetworkPolicy = p.PodDisruptionBudget, p.NetworkPolicy
	setIfSet(&spec.Config.NginxSettings, p.Config)
	setIfSet(&spec.Metrics, p.Metrics)
	setIfSet(&spec.Service, p.Service)
	setIfSet(&spec.Resources, p.Resources)
	setIfSet(&spec.Pod, p.Pod)
}

// setIfSet sets *field to *value, unless value is nil.
func setIfSet[T any](field *T, value *T) {
	if value != nil {
		*field = *value
	}
}
