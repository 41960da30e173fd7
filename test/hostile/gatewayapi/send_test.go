package gatewayapi

// One case: the hostile route created through the apiserver, read back,
// translated with the baseline into the Gateway's instance, rendered and
// checked, and what came of it.

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

const (
	outcomeRefused     = "a refused by Gateway API (admission)"
	outcomeNotAccepted = "b left out, told why (Accepted False)"
	outcomeUnresolved  = "c left out, told why (ResolvedRefs False)"
	outcomeServedFault = "d served, told of unresolved references"
	outcomeServed      = "e served"
	outcomeOverridden  = "e2 attached, told older routes serve all it matches"
	outcomeSilent      = "f attached, yet not served and not told"
	outcomeNotTold     = "g served, yet told it is not accepted"
	outcomeNoStatus    = "h no status entry for the Gateway"
	outcomeInstance    = "x the whole instance refused"
	outcomeRender      = "x the instance does not render"
	outcomePanic       = "x the translation or renderer panicked"
	outcomeUndecodable = "x stored, but the operator cannot decode it"
	outcomeRequest     = "x request failed"
)

// send is one case's run.
type send struct {
	c *routeCase

	err         string // the test could not complete the case
	refused     string // what the apiserver said
	undecodable string
	panicked    string
	route       client.Object // as stored
	tr          gateway.Translation
	spec        *v1beta1.NginxOperatorSpec
	instanceErr error // why the Gateway controller leaves the instance as it is
	renderErr   error
	config      []byte
	tree        []conf.Directive
	nginxRan    bool
	nginxSaid   string // "" when `nginx -t` accepted the file

	// The tenancy verdicts (tenancy_test.go).
	hostile   routeVerdict
	lost      []string // baseline routes no longer served, and how
	variables []string // values of the route that define or expand nginx variables
}

// routeVerdict is what a route's translation says of it: its status
// entries for the Gateway and whether the instance serves it.
type routeVerdict struct {
	entries  int
	accepted bool   // on some entry
	resolved bool   // every entry's ResolvedRefs
	message  string // of the first entry not accepted or not resolved
	served   bool
	// overridden: accepted, and told that older routes take all it
	// would serve (Gateway API's precedence).
	overridden bool
}

func (s *send) outcome() string {
	switch {
	case s.err != "":
		return outcomeRequest
	case s.refused != "":
		return outcomeRefused
	case s.undecodable != "":
		return outcomeUndecodable
	case s.panicked != "":
		return outcomePanic
	case s.instanceErr != nil:
		return outcomeInstance
	case s.renderErr != nil:
		return outcomeRender
	}
	v := s.hostile
	switch {
	case v.entries == 0:
		return outcomeNoStatus
	case v.served && !v.accepted:
		return outcomeNotTold
	case v.served && !v.resolved:
		return outcomeServedFault
	case v.served:
		return outcomeServed
	case !v.accepted && v.message != "":
		return outcomeNotAccepted
	case !v.resolved && v.message != "":
		return outcomeUnresolved
	case v.overridden:
		return outcomeOverridden
	default:
		return outcomeSilent
	}
}

// problems are why the case is a failure: none for a refusal, a route left
// out and told why, or one served, when nginx accepts the file, every
// baseline route is served as before and no value of the route reaches an
// nginx variable.
func (s *send) problems() []string {
	var p []string
	if s.err != "" {
		p = append(p, "request failed: "+s.err)
	}
	if s.undecodable != "" {
		p = append(p, "undecodable: stored, and the operator's types cannot decode it: "+s.undecodable)
	}
	if s.panicked != "" {
		p = append(p, "panic: "+s.panicked)
	}
	if s.instanceErr != nil {
		p = append(p, "instance refused: no tenant's change reaches nginx while this route exists: "+s.instanceErr.Error())
	}
	if s.renderErr != nil {
		p = append(p, "not rendered: "+s.renderErr.Error())
	}
	if s.config != nil {
		switch {
		case !s.nginxRan:
			p = append(p, "nginx -t did not run")
		case s.nginxSaid != "":
			p = append(p, "nginx -t refused the instance (see the nginx column)")
		}
	}
	for _, l := range s.lost {
		p = append(p, "baseline: "+l)
	}
	if s.spec != nil && s.route != nil {
		switch s.outcome() {
		case outcomeSilent:
			p = append(p, "untold: the route is attached, its status says nothing is wrong, and the instance serves none of it")
		case outcomeNotTold:
			p = append(p, "untold: the instance serves the route, whose status says it is not accepted: "+s.hostile.message)
		case outcomeNoStatus:
			p = append(p, "untold: the translation owes the route no status entry for the Gateway")
		}
	}
	for _, v := range s.variables {
		p = append(p, "variable: "+v)
	}
	return p
}

// nginxVerdict is how far the instance got past the translation.
func (s *send) nginxVerdict() string {
	switch {
	case s.panicked != "":
		return "panicked"
	case s.instanceErr != nil:
		return "instance refused"
	case s.renderErr != nil:
		return "not rendered: " + s.renderErr.Error()
	case s.config == nil:
		return "-"
	case !s.nginxRan:
		return "rendered; nginx -t did not run"
	case s.nginxSaid != "":
		return "nginx -t: " + s.nginxSaid
	default:
		return "nginx -t: ok"
	}
}

// hostileName is the name of case id's route in the hostile namespace.
func hostileName(id int) string { return fmt.Sprintf("hostile-%04d", id) }

// typedRoute is an empty route of kind.
func typedRoute(kind gatewayv1.Kind) client.Object {
	switch kind {
	case graph.KindHTTPRoute:
		return &gatewayv1.HTTPRoute{}
	case graph.KindGRPCRoute:
		return &gatewayv1.GRPCRoute{}
	case graph.KindTLSRoute:
		return &gatewayv1.TLSRoute{}
	case graph.KindTCPRoute:
		return &gatewayv1.TCPRoute{}
	}
	return &gatewayv1.UDPRoute{}
}

// send creates the case's route, reads it back as the operator's informer
// decodes it, makes the Gateway's instance of it and the baseline
// (instanceOf), renders the instance and judges it (all but `nginx -t`,
// which the test runs once per distinct file).
func (h *harness) send(ctx context.Context, s *send) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked = fmt.Sprint(r)
			s.config = nil
		}
	}()
	obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(s.c.object)}
	obj.SetNamespace(h.tn.ns[roleHostile])
	obj.SetName(hostileName(s.c.id))
	if err := h.tn.c.Create(ctx, obj); err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			s.refused = err.Error()
		} else {
			s.err = "create: " + err.Error()
		}
		return
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: gatewayv1.GroupVersion.Version, Kind: string(s.c.kind)})
	if err := h.tn.c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
		s.err = "reading back: " + err.Error()
		return
	}
	rt := typedRoute(s.c.kind)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(stored.Object, rt); err != nil {
		// The operator's informer decodes into these types: one such
		// object stalls the controller's list and watch.
		s.undecodable = err.Error()
		return
	}
	s.route = rt
	h.instance(ctx, s, h.tn.inputs(rt))
}

// instance makes, renders and judges the instance of in: the baseline's
// alone (s.route nil) or with the case's route.
func (h *harness) instance(ctx context.Context, s *send, in graph.Inputs) {
	s.spec, s.tr, s.instanceErr = instanceOf(ctx, in)
	if s.instanceErr != nil {
		return
	}
	if s.config, s.renderErr = h.ngx.render(s.spec); s.renderErr != nil {
		return
	}
	tree, err := conf.Parse(s.config)
	if err != nil {
		s.renderErr = fmt.Errorf("the rendered file does not parse: %w", err)
		s.config = nil
		return
	}
	s.tree = tree
	h.ngx.mountCertificates(tree)
	if h.baseline != nil {
		h.judge(ctx, s)
	}
}
