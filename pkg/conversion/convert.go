package conversion

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// Annotations of a v1alpha1 NginxOperator that carry what v1alpha1 cannot
// express. Each holds a JSON object: the v1beta1 spec (or status) without the
// fields v1alpha1 has itself, that is without replicas, forceRedeploy and
// ports[0].containerPort (or without conditions). They are absent when there
// is nothing beyond what the v1alpha1 fields imply. The spec comes back on
// up-conversion, where the webhook validates it as v1beta1 admission would;
// the status never does (see ToV1beta1).
//
// The keys are reserved: up-conversion removes them, and down-conversion
// overwrites or removes whatever a v1beta1 object held under them.
const (
	AnnotationSpec   = "nginx.operator.dev/v1beta1-spec"
	AnnotationStatus = "nginx.operator.dev/v1beta1-status"
)

// PortName is the name a v1alpha1 port gets as the first of v1beta1's ports.
const PortName = "http"

// JSON names of the fields both versions have (the DESIGN §4 contract). They
// are the only v1beta1 fields this package names.
const (
	fieldReplicas      = "replicas"
	fieldForceRedeploy = "forceRedeploy"
	fieldPorts         = "ports"
	fieldContainerPort = "containerPort"
	fieldConditions    = "conditions"
)

// ToV1beta1 converts a v1alpha1 NginxOperator to v1beta1. The spec
// preserved in its annotation is restored, then port, replicas,
// forceRedeploy and conditions are taken from the v1alpha1 fields, so a
// v1alpha1 client's edits of those fields win:
//
//   - port set: it becomes ports[0].containerPort, keeping that port's name
//     and protocol when the annotation preserved them, else {http, port, TCP}.
//   - port unset: ports[0] is dropped, since port is what stood for it. With
//     no ports left, spec.ports is absent and the apiserver applies the v1beta1
//     schema default [{name: http, containerPort: 8080}] when it reads the
//     object, so a v1alpha1 client writing no port reads back port 8080 — the
//     port nginx then really listens on.
//
// The status annotation is never restored: the status is the operator's to
// write, and a client could put anything in an annotation. Only the
// conditions, a v1alpha1 field, are converted; the rest of the status is
// empty, which only matters to a v1alpha1 client writing the status
// subresource, and the operator rewrites it on its next reconcile. The
// annotation is removed like the spec's.
//
// ToV1alpha1(ToV1beta1(a)) equals a for every v1alpha1 object a client can
// hold: one written without the annotations, or one read from the apiserver
// (so annotated by ToV1alpha1) whose port, replicas, forceRedeploy or
// conditions were then edited — all but removing port while ports are
// preserved, which drops ports[0] as described above.
//
// A malformed annotation, or one naming fields v1beta1 does not have (say,
// written by a newer operator), is an error rather than being dropped.
func ToV1beta1(in *v1alpha1.NginxOperator) (*v1beta1.NginxOperator, error) {
	if in == nil {
		return nil, errors.New("nil v1alpha1 NginxOperator")
	}
	out := &v1beta1.NginxOperator{TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator"}}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	specJSON, hasSpec := out.Annotations[AnnotationSpec]
	out.Annotations = withoutReserved(out.Annotations)

	spec := map[string]any{}
	if hasSpec {
		var err error
		if spec, err = parsePreserved(specJSON); err != nil {
			return nil, annotationError(in, AnnotationSpec, err)
		}
	}
	if err := overlaySpec(spec, in.Spec); err != nil {
		return nil, annotationError(in, AnnotationSpec, err)
	}
	if err := fromMap(spec, &out.Spec); err != nil {
		return nil, annotationError(in, AnnotationSpec, err)
	}

	out.Status.Conditions = copyConditions(in.Status.Conditions)
	return out, nil
}

// ToV1alpha1 converts a v1beta1 NginxOperator to v1alpha1: port is
// ports[0].containerPort, replicas, forceRedeploy and conditions are copied,
// and the rest of the spec and status goes into the annotations. ToV1beta1
// restores the spec's: ToV1beta1(ToV1alpha1(x)) equals x, but for the status
// beyond its conditions, for every x that does not itself carry the reserved
// annotation keys. The status annotation is for v1alpha1 readers only.
func ToV1alpha1(in *v1beta1.NginxOperator) (*v1alpha1.NginxOperator, error) {
	if in == nil {
		return nil, errors.New("nil v1beta1 NginxOperator")
	}
	out := &v1alpha1.NginxOperator{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NginxOperator"}}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Annotations = withoutReserved(out.Annotations)

	if in.Spec.Replicas != nil {
		r := *in.Spec.Replicas
		out.Spec.Replicas = &r
	}
	out.Spec.ForceRedeploy = in.Spec.ForceRedeploy
	if len(in.Spec.Ports) > 0 {
		p := in.Spec.Ports[0].ContainerPort
		out.Spec.Port = &p
	}
	out.Status.Conditions = copyConditions(in.Status.Conditions)

	// Annotate only what differs from what the v1alpha1 fields alone imply, so
	// that an object created as v1alpha1 reads back as v1alpha1 unchanged.
	restOfSpec, err := specRest(in.Spec)
	if err != nil {
		return nil, fmt.Errorf("encoding the spec of %s: %w", objectName(in), err)
	}
	implied, err := impliedSpecRest(out.Spec)
	if err != nil {
		return nil, fmt.Errorf("encoding the spec of %s: %w", objectName(in), err)
	}
	preserved := map[string][]byte{}
	if err := preserveUnlessSame(preserved, AnnotationSpec, restOfSpec, implied); err != nil {
		return nil, err
	}

	restOfStatus, err := statusRest(in.Status)
	if err != nil {
		return nil, fmt.Errorf("encoding the status of %s: %w", objectName(in), err)
	}
	impliedStatus, err := statusRest(v1beta1.NginxOperatorStatus{})
	if err != nil {
		return nil, err
	}
	if err := preserveUnlessSame(preserved, AnnotationStatus, restOfStatus, impliedStatus); err != nil {
		return nil, err
	}
	if err := setPreserved(&out.ObjectMeta, preserved); err != nil {
		return nil, fmt.Errorf("NginxOperator %s: %w", objectName(in), err)
	}
	return out, nil
}

// overlaySpec writes the v1alpha1 fields into spec, a v1beta1 spec as JSON.
func overlaySpec(spec map[string]any, a v1alpha1.NginxOperatorSpec) error {
	if a.Replicas != nil {
		spec[fieldReplicas] = int64(*a.Replicas)
	} else {
		delete(spec, fieldReplicas)
	}
	if a.ForceRedeploy != "" {
		spec[fieldForceRedeploy] = a.ForceRedeploy
	} else {
		delete(spec, fieldForceRedeploy)
	}

	var ports []any
	if raw := spec[fieldPorts]; raw != nil {
		var ok bool
		if ports, ok = raw.([]any); !ok {
			return fmt.Errorf("%s is %T, not a list", fieldPorts, raw)
		}
	}
	switch {
	case a.Port != nil && len(ports) > 0:
		first, ok := ports[0].(map[string]any)
		if !ok {
			return fmt.Errorf("%s[0] is %T, not an object", fieldPorts, ports[0])
		}
		p := make(map[string]any, len(first)+1)
		for k, v := range first {
			p[k] = v
		}
		p[fieldContainerPort] = int64(*a.Port)
		ports = append([]any{p}, ports[1:]...)
	case a.Port != nil:
		ports = []any{map[string]any{"name": PortName, fieldContainerPort: int64(*a.Port), "protocol": string(corev1.ProtocolTCP)}}
	case len(ports) > 0:
		ports = ports[1:]
	}
	if len(ports) == 0 {
		delete(spec, fieldPorts)
	} else {
		spec[fieldPorts] = ports
	}
	return nil
}

// specRest is s as JSON without what v1alpha1 holds in its own fields.
func specRest(s v1beta1.NginxOperatorSpec) (map[string]any, error) {
	m, err := toMap(s)
	if err != nil {
		return nil, err
	}
	delete(m, fieldReplicas)
	delete(m, fieldForceRedeploy)
	if ports, ok := m[fieldPorts].([]any); ok && len(ports) > 0 {
		if first, ok := ports[0].(map[string]any); ok {
			rest := make(map[string]any, len(first))
			for k, v := range first {
				if k != fieldContainerPort {
					rest[k] = v
				}
			}
			m[fieldPorts] = append([]any{rest}, ports[1:]...)
		}
	}
	return m, nil
}

// impliedSpecRest is the specRest of the v1beta1 spec a v1alpha1 spec
// converts to when no annotation is present.
func impliedSpecRest(a v1alpha1.NginxOperatorSpec) (map[string]any, error) {
	m := map[string]any{}
	if err := overlaySpec(m, a); err != nil {
		return nil, err
	}
	var s v1beta1.NginxOperatorSpec
	if err := fromMap(m, &s); err != nil {
		return nil, err
	}
	return specRest(s)
}

// statusRest is s as JSON without the conditions.
func statusRest(s v1beta1.NginxOperatorStatus) (map[string]any, error) {
	m, err := toMap(s)
	if err != nil {
		return nil, err
	}
	delete(m, fieldConditions)
	return m, nil
}

// preserveUnlessSame records rest under key unless it is what the v1alpha1
// fields imply anyway.
func preserveUnlessSame(preserved map[string][]byte, key string, rest, implied map[string]any) error {
	same, err := sameJSON(rest, implied)
	if err != nil || same {
		return err
	}
	b, err := canonical(rest)
	if err != nil {
		return err
	}
	preserved[key] = b
	return nil
}

func parsePreserved(value string) (map[string]any, error) {
	b, err := preservedJSON(value)
	if err != nil {
		return nil, err
	}
	return parseObject(b)
}

// withoutReserved removes the preservation annotations; an emptied map
// becomes nil, which JSON cannot tell from an empty one anyway.
func withoutReserved(a map[string]string) map[string]string {
	delete(a, AnnotationSpec)
	delete(a, AnnotationStatus)
	if len(a) == 0 {
		return nil
	}
	return a
}

func copyConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, len(in))
	copy(out, in)
	return out
}

func objectName(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func annotationError(in *v1alpha1.NginxOperator, key string, err error) error {
	return fmt.Errorf("NginxOperator %s: annotation %s cannot be restored: %w", objectName(in), key, err)
}
