package validation

import (
	"context"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

var nginxOperatorV1beta1 = lazy("NginxOperator", "v1beta1")

// NginxOperatorSchema checks obj against the v1beta1 NginxOperator CRD: what
// v1beta1 admission would refuse, it refuses with the same messages. The
// conversion webhook runs it on every object a v1alpha1 client writes.
func NginxOperatorSchema(ctx context.Context, obj *v1beta1.NginxOperator) field.ErrorList {
	s, err := nginxOperatorV1beta1()
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	_, errs := Admit(ctx, s, "NginxOperator", obj)
	return errs
}

// NginxOperator is what the controller renders and builds from: obj with the
// CRD's defaults, checked against the CRD (as NginxOperatorSchema) and
// against the rules the schema cannot express: the cross-field rules beyond
// CEL's cost budget (crossField), and what the apiserver would refuse in the
// pod template and the Service that the CRD does not check (childRules),
// checked before any child is applied so that a bad spec changes nothing.
// obj itself is left as it is.
//
// The CEL rules inside the Kubernetes types the spec embeds are left to the
// children's APIs here (see nginxOperatorForController).
func NginxOperator(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	out, errs := wholeNginxOperator(ctx, obj)
	if out == nil {
		return nil, errs
	}
	return out, append(errs, room(&out.Spec, field.NewPath("spec"))...)
}

// wholeNginxOperator checks obj whole against the controller's schema and
// the rules it leaves to Go, with no bound on its servers and locations:
// what RoutedNginxOperator checks in parts, for an instance within the
// CRD's bounds, where keeping each part's verdict would cost more memory
// than it saves time.
func wholeNginxOperator(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	s, err := nginxOperatorForController()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	out, errs := NginxOperatorBy(ctx, s, obj)
	if out == nil {
		return nil, errs
	}
	return out, append(errs, serverPairRules(out.Spec.Config.Servers, field.NewPath("spec", "config"))...)
}

// NginxOperatorBy is NginxOperator against the schema s instead of the
// shipped one.
func NginxOperatorBy(ctx context.Context, s *Schema, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	out, errs := Admit(ctx, s, "NginxOperator", obj)
	if out == nil {
		return nil, errs
	}
	return out, append(errs, goRules(&out.Spec)...)
}

// goRules are the rules on a defaulted spec that the CRD leaves to Go:
// crossField's and childRules'.
func goRules(spec *v1beta1.NginxOperatorSpec) field.ErrorList {
	path := field.NewPath("spec")
	return append(crossField(spec, path), childRules(spec, path)...)
}

// childRules are what the apiserver refuses in the children's metadata that
// the CRD does not say: label and annotation syntax of the pods, the
// Service and every child (annotations also have a total size, which no
// CEL rule can sum).
// The priority class name and the embedded Kubernetes types (tolerations,
// affinity, spread constraints, resources, NetworkPolicy peers) are checked
// by the CRD's rules (the latter added by hack/crdembedded).
func childRules(spec *v1beta1.NginxOperatorSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	pod := path.Child("pod")
	errs = append(errs, metav1validation.ValidateLabels(spec.Pod.Labels, pod.Child("labels"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.Pod.NodeSelector, pod.Child("nodeSelector"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(spec.Pod.Annotations, pod.Child("annotations"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(spec.Service.Annotations, path.Child("service", "annotations"))...)
	children := path.Child("childMetadata")
	errs = append(errs, metav1validation.ValidateLabels(spec.ChildMetadata.Labels, children.Child("labels"))...)
	return append(errs, apimachineryvalidation.ValidateAnnotations(spec.ChildMetadata.Annotations, children.Child("annotations"))...)
}
