package naming

import (
	"k8s.io/apimachinery/pkg/labels"
)

// Standard label keys (https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/).
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// ManagedBy is the value of app.kubernetes.io/managed-by on every object the
// operator creates, and the operator's server-side apply field manager.
const ManagedBy = "nginx-operator"

// ManagedSelector selects every object the operator manages. The informer cache
// is restricted to it so the operator never caches the cluster's other objects.
func ManagedSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy})
}

// Labels are the standard labels of a child of the custom resource named
// instance. name is what the child runs (for example "nginx"); component is its
// role (for example "server", "backup").
func Labels(name, instance, component string) map[string]string {
	l := SelectorLabels(name, instance, component)
	l[LabelManagedBy] = ManagedBy
	return l
}

// SelectorLabels are the labels that identify one instance's pods. They never
// change for the life of an instance, because a StatefulSet's selector is
// immutable, and they include the instance so two instances in one namespace
// never select each other's pods.
func SelectorLabels(name, instance, component string) map[string]string {
	return map[string]string{
		LabelName:      name,
		LabelInstance:  instance,
		LabelComponent: component,
	}
}
