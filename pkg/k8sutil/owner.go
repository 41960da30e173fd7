package k8sutil

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// SetOwner makes owner the controlling owner of child, so deleting the custom
// resource garbage-collects the child and the child's events requeue the owner.
// It fails when child already has a different controller: the operator never
// takes over an object someone else controls.
func SetOwner(owner, child client.Object, scheme *runtime.Scheme) error {
	return controllerutil.SetControllerReference(owner, child, scheme)
}
