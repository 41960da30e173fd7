package hostile

// One send: a case written through one API version, read back as v1beta1,
// re-checked and rendered, and what came of it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/conversion"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
)

// The two paths every case is sent through, named by the API version it is
// written as.
const (
	pathBeta  = "v1beta1"
	pathAlpha = "v1alpha1"
)

const (
	outcomeRefused        = "a refused by the apiserver"
	outcomeRenderConfig   = "b refused by the controller (*nginx.ConfigError)"
	outcomeRenderOther    = "b refused by the controller (other error: retried, not terminal)"
	outcomeRendered       = "c rendered"
	outcomeInfrastructure = "request failed"
	outcomeUndecodable    = "stored, but the operator cannot decode it"
)

type send struct {
	c    *specCase
	path string // pathBeta or pathAlpha

	err     string         // the test could not complete the send
	refused string         // outcome a: what the apiserver said
	stored  map[string]any // the spec as read back as v1beta1, when admitted
	bypass  string         // the stored spec, re-sent as v1beta1, is refused: what the apiserver said
	built
	nginxRan  bool
	nginxSaid string // "" when `nginx -t` accepted the file
}

// built is what the controller makes of a stored spec, the same for every
// send that stored the same spec (most cases store one spec through both
// versions).
type built struct {
	undecodable string // stored, but the operator's Go types cannot hold it
	renderErr   error
	// childRefused is what the API server said of a child (StatefulSet,
	// NetworkPolicy, Service, PodDisruptionBudget) built from the admitted
	// spec: a rule the CRD should have held, unless the field is one of
	// the few only the child's API can judge (apiserverOnly).
	childRefused string
	renderPanic  string
	config       []byte
	treeDiff     string
	meaning      []string
}

func (s *send) outcome() string {
	var cfgErr *nginx.ConfigError
	switch {
	case s.err != "":
		return outcomeInfrastructure
	case s.refused != "":
		return outcomeRefused
	case s.undecodable != "":
		return outcomeUndecodable
	case s.renderPanic != "":
		return "renderer panicked"
	case errors.As(s.renderErr, &cfgErr):
		return outcomeRenderConfig
	case s.renderErr != nil:
		return outcomeRenderOther
	default:
		return outcomeRendered
	}
}

// problems are why this send is a failure; none for a, b and a clean c.
func (s *send) problems() []string {
	var p []string
	if s.err != "" {
		p = append(p, "request failed: "+s.err)
	}
	if s.undecodable != "" {
		p = append(p, "undecodable: stored, and the operator's types cannot decode it: "+s.undecodable)
	}
	if s.bypass != "" {
		p = append(p, "schema bypass: stored, yet refused as v1beta1: "+s.bypass)
	}
	if s.renderPanic != "" {
		p = append(p, "renderer panicked: "+s.renderPanic)
	}
	if why, ok := apiserverOnly[s.c.field]; s.childRefused != "" && !(ok && strings.Contains(s.childRefused, why)) {
		p = append(p, "child refused: admitted, yet the API server refuses a child built from it (the CRD should refuse it): "+s.childRefused)
	}
	if s.outcome() == outcomeRenderOther {
		// The controller would retry it with backoff forever: bad input
		// must end in a condition that waits for the spec to change.
		p = append(p, "refused, but not as the spec's fault (retried forever): "+s.renderErr.Error())
	}
	if s.config != nil {
		if !s.nginxRan {
			p = append(p, "nginx -t did not run")
		} else if s.nginxSaid != "" {
			p = append(p, "nginx -t refused (see the nginx column)")
		}
		if s.treeDiff != "" {
			p = append(p, "parsed tree differs from render.Directives: "+s.treeDiff)
		}
		for _, m := range s.meaning {
			p = append(p, "meaning changed: "+m)
		}
	}
	return p
}

// nginxVerdict is how far the stored spec got past the apiserver.
func (s *send) nginxVerdict() string {
	switch {
	case s.renderPanic != "":
		return "renderer panicked"
	case s.renderErr != nil:
		return "renderer refused: " + s.renderErr.Error()
	case s.config == nil:
		return "-"
	case !s.nginxRan:
		return "rendered; nginx -t did not run"
	case s.nginxSaid != "":
		return "rendered; nginx -t: " + s.nginxSaid
	default:
		return "rendered; nginx -t: ok"
	}
}

// apiserverOnly are the corpus fields whose values only the API server of a
// child can judge (Documentation/nginxoperator.md lists them), each with
// what its refusal says: an admitted value it refuses in the child ends in
// InvalidConfig with no child written, which is what the controller
// promises for them.
var apiserverOnly = map[string]string{
	// The node port range is a flag of the API server
	// (--service-node-port-range), and a port may be taken by another
	// Service: the Service's API server alone knows.
	"ports[].nodePort": "NodePort",
	// An annotation value may be any string, but the API server decodes an
	// apply request as YAML, which refuses DEL (U+007F) and the C1 controls
	// unescaped; no CEL rule can afford a pattern on 64 values of
	// unbounded length.
	"pod.annotations (value)":           "error decoding YAML",
	"service.annotations (value)":       "error decoding YAML",
	"childMetadata.annotations (value)": "error decoding YAML",
	// The CRD compares a request with its limit as doubles; the API server
	// compares the quantities exactly, and alone sees a request above its
	// limit by less than one part in 2^52.
	"resources.requests.memory (limit 2^53)": "must be less than or equal to memory limit",
}

var betaGVK = v1beta1.GroupVersion.WithKind("NginxOperator")

// object is the case as its path's client writes it.
func (h *nginxEnv) object(s *send) (*unstructured.Unstructured, error) {
	name := fmt.Sprintf("hostile-%04d-%s", s.c.id, s.path)
	if s.path == pathBeta {
		return v1beta1Object(name, h.ns, runtime.DeepCopyJSON(s.c.spec)), nil
	}
	return v1alpha1Object(name, h.ns, runtime.DeepCopyJSON(s.c.spec))
}

// admitInProcess is the send's create and read-back, and the v1alpha1 path's
// re-check, by the in-process model of the apiserver (admission_test.go).
func (h *nginxEnv) admitInProcess(ctx context.Context, a *admission, s *send) {
	obj, err := h.object(s)
	if err != nil {
		s.err = err.Error()
		return
	}
	stored, refused := a.create(ctx, obj.Object)
	if refused != "" {
		s.refused = refused
		return
	}
	s.stored = storedSpec(stored)
	if s.path == pathAlpha {
		recheck := v1beta1Object(obj.GetName()+"-recheck", h.ns, runtime.DeepCopyJSON(s.stored))
		if _, refused := a.create(ctx, recheck.Object); refused != "" {
			s.bypass = refused
		}
	}
}

// admitThroughAPIServer creates the case through its path on the real
// apiserver, reads the stored object back as v1beta1, and re-checks a
// v1alpha1-stored spec against v1beta1 admission (a server-side dry-run).
func (h *nginxEnv) admitThroughAPIServer(ctx context.Context, c client.Client, s *send) {
	obj, err := h.object(s)
	if err != nil {
		s.err = err.Error()
		return
	}
	if err := c.Create(ctx, obj); err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			s.refused = err.Error()
		} else {
			s.err = "create: " + err.Error()
		}
		return
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(betaGVK)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
		s.err = "reading back as v1beta1: " + err.Error()
		return
	}
	s.stored = storedSpec(stored.Object)
	if s.path == pathAlpha {
		recheck := v1beta1Object(obj.GetName()+"-recheck", h.ns, runtime.DeepCopyJSON(s.stored))
		if err := c.Create(ctx, recheck, client.DryRunAll); err != nil {
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				s.err = "dry-run re-check: " + err.Error()
				return
			}
			s.bypass = err.Error()
		}
	}
}

// storedSpec is the spec of a stored object, {} when it has none.
func storedSpec(obj map[string]any) map[string]any {
	if spec, ok := obj["spec"].(map[string]any); ok {
		return spec
	}
	return map[string]any{}
}

// build is what the controller makes of an admitted send's stored spec,
// made once per distinct spec (buildSpec).
func (h *nginxEnv) build(ctx context.Context, c client.Client, s *send) {
	if s.stored == nil || s.err != "" {
		return
	}
	key, err := json.Marshal(s.stored)
	if err != nil {
		s.err = "encoding the stored spec: " + err.Error()
		return
	}
	once, _ := h.builds.LoadOrStore(string(key), &onceBuilt{})
	b := once.(*onceBuilt)
	b.once.Do(func() { b.built = h.buildSpec(ctx, c, s.stored) })
	s.built = b.built
}

type onceBuilt struct {
	once  sync.Once
	built built
}

// buildSpec decodes a stored spec as the operator's informer does and
// renders it as the controller would.
func (h *nginxEnv) buildSpec(ctx context.Context, c client.Client, stored map[string]any) built {
	var b built
	var spec v1beta1.NginxOperatorSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(stored), &spec); err != nil {
		// The operator's informer decodes into these types: one such
		// object stalls the controller's list and watch.
		b.undecodable = err.Error()
		return b
	}
	h.render(ctx, c, &b, &spec)
	return b
}

func v1beta1Object(name, ns string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(), "kind": "NginxOperator",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// v1alpha1Object is spec as a v1alpha1 client would send it: port,
// replicas and forceRedeploy in v1alpha1's fields, everything else in the
// v1beta1-spec annotation (the format conversion.ToV1alpha1 writes).
func v1alpha1Object(name, ns string, spec map[string]any) (*unstructured.Unstructured, error) {
	alpha := map[string]any{}
	if r, ok := spec["replicas"]; ok {
		alpha["replicas"] = r
		delete(spec, "replicas")
	}
	if f, ok := spec["forceRedeploy"]; ok {
		if f != "" {
			alpha["forceRedeploy"] = f
		}
		delete(spec, "forceRedeploy")
	}
	if ports, ok := spec["ports"].([]any); ok && len(ports) > 0 {
		if first, ok := ports[0].(map[string]any); ok {
			if p, ok := first["containerPort"]; ok {
				alpha["port"] = p
				delete(first, "containerPort")
			}
		}
	}
	meta := map[string]any{"name": name, "namespace": ns}
	if len(spec) > 0 {
		b, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		meta["annotations"] = map[string]any{conversion.AnnotationSpec: string(b)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "NginxOperator",
		"metadata": meta, "spec": alpha,
	}}, nil
}
