package gateway

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// A class naming its parameters without their namespace, or parameters of
// another kind, or ones that do not exist, gets the reason, not an error.
func TestUnusableParametersSayWhy(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	group := gatewayv1.Group(v1beta1.GroupVersion.Group)
	class := func(ref gatewayv1.ParametersReference) *gatewayv1.GatewayClass {
		return &gatewayv1.GatewayClass{Spec: gatewayv1.GatewayClassSpec{ParametersRef: &ref}}
	}
	for _, tc := range []struct {
		name string
		ref  gatewayv1.ParametersReference
		want string
	}{
		{"no namespace", gatewayv1.ParametersReference{Group: group, Kind: ParametersKind, Name: "p"}, "without a namespace"},
		{"another kind", gatewayv1.ParametersReference{Group: "", Kind: "ConfigMap", Name: "p", Namespace: ptr.To(gatewayv1.Namespace("a"))}, `ConfigMap p of group ""`},
		{"missing", gatewayv1.ParametersReference{Group: group, Kind: ParametersKind, Name: "p", Namespace: ptr.To(gatewayv1.Namespace("a"))}, "a/p, which does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readParameters(context.Background(), c, classRef(class(tc.ref)))
			if err != nil || !strings.Contains(got.Invalid, tc.want) || got.Spec != nil {
				t.Errorf("got %+v, %v; want Invalid mentioning %q", got, err, tc.want)
			}
		})
	}
}
