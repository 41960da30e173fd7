// Package v1beta1 is the storage and hub version of the nginx.operator.dev API:
// NginxOperator, NginxMonitor and NginxBackup.
//
// +kubebuilder:object:generate=true
// +groupName=nginx.operator.dev
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "nginx.operator.dev", Version: "v1beta1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
