// Package operator assembles the controller-runtime manager every controller
// runs in: the scheme, a cache scoped to what the operator manages, leader
// election, health and readiness probes, and the secured metrics endpoint.
package operator

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
)

// NewScheme knows the built-in kinds, both versions of the operator's API,
// Gateway API's v1 kinds, and the part of cert-manager's API the operator
// writes (the Certificate).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(gatewayv1.Install(s))
	utilruntime.Must(certmanager.AddToScheme(s))
	return s
}
