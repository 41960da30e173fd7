package validation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
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
// children the operator builds from the spec (label and annotation syntax,
// tolerations), checked before any child is applied so that a bad spec
// changes nothing. obj itself is left as it is.
func NginxOperator(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	s, err := nginxOperatorV1beta1()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return NginxOperatorBy(ctx, s, obj)
}

// NginxOperatorBy is NginxOperator against the schema s instead of the
// shipped one.
func NginxOperatorBy(ctx context.Context, s *Schema, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	out, errs := Admit(ctx, s, "NginxOperator", obj)
	if out == nil {
		return nil, errs
	}
	spec := field.NewPath("spec")
	errs = append(errs, crossField(&out.Spec, spec)...)
	return out, append(errs, childRules(&out.Spec, spec)...)
}

func childRules(spec *v1beta1.NginxOperatorSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	pod := path.Child("pod")
	errs = append(errs, metav1validation.ValidateLabels(spec.Pod.Labels, pod.Child("labels"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.Pod.NodeSelector, pod.Child("nodeSelector"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(spec.Pod.Annotations, pod.Child("annotations"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(spec.Service.Annotations, path.Child("service", "annotations"))...)
	if n := spec.Pod.PriorityClassName; n != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n, false) {
			errs = append(errs, field.Invalid(pod.Child("priorityClassName"), n, msg))
		}
	}
	for i, t := range spec.Pod.Tolerations {
		errs = append(errs, toleration(t, pod.Child("tolerations").Index(i))...)
	}
	for i, c := range spec.Pod.TopologySpreadConstraints {
		p := pod.Child("topologySpreadConstraints").Index(i)
		if c.MaxSkew < 1 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be at least 1"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		if c.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		}
	}
	errs = append(errs, resources(spec.Resources, path.Child("resources"))...)
	return errs
}

func toleration(t corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, path.Child("key"))...)
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
	}
	if t.Key == "" && t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "must be Exists when key is empty"))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(path.Child("tolerationSeconds"), *t.TolerationSeconds, "needs effect NoExecute"))
	}
	return errs
}

// resources refuses negative quantities and requests above limits, which the
// apiserver refuses in the StatefulSet's pod template.
func resources(r corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), q.String(), "must not be negative"))
		}
	}
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(), "must not be negative"))
		}
		if limit, ok := r.Limits[name]; ok && q.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(), "must not exceed the limit "+limit.String()))
		}
	}
	return errs
}
