package validation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// RoutedNginxOperator is NginxOperator for an instance whose servers a
// Gateway's routes make (pkg/gateway): as many servers and locations as
// the routes need, where the CRD's bounds (v1beta1.MaxServers and
// MaxLocations) hold every other instance.
//
// Both controllers check such an instance on every change of its routes,
// and a Gateway with 1,000 routes took 180 to 250 ms to check as a whole,
// most of it the CEL rules of each server and location looking up fields.
// So each server and each location is checked on its own, against its
// part of the schema, and the verdict kept by its content: a route change
// checks what it changed. A server is checked with one stand-in location
// in place of its own, if it has any, and the rest of the instance with
// one stand-in server for each port and TLS mode its servers have: no rule
// above a location looks into locations but for whether there are any (a
// redirecting server has none), and no rule above a server looks at more
// than its port and whether it has TLS, which
// TestCheckingPartsApartGivesTheWholeVerdict holds for every rule of the
// shipped CRD.
func RoutedNginxOperator(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	return routedNginxOperator(ctx, obj, nothingChecked)
}

// RoutedNginxOperatorOfCheckedLocations is RoutedNginxOperator for an
// instance whose every location is what RoutedLocation returned without an
// error (the Gateway's graph checks each as a route makes it, to refuse
// that route alone): the locations are used as they are, not checked or
// copied again. Looking each one's verdict up again took 3 to 4 ms of
// every change of a Gateway of 1,000 routes, and 0.5 to 0.9 ms is left
// (BenchmarkARouteChangeAtAThousandRoutes, paths/check).
func RoutedNginxOperatorOfCheckedLocations(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	return routedNginxOperator(ctx, obj, locationsChecked)
}

// RoutedNginxOperatorOfCheckedServers is RoutedNginxOperator for an
// instance whose servers are what RoutedNginxOperator returned without an
// error (the Gateway controller publishes only those): what a server's or
// a location's own rules say cannot change, so only the rest of the
// instance, and how the servers fit it, is checked, and the servers are
// used as they are, not copied.
func RoutedNginxOperatorOfCheckedServers(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	return routedNginxOperator(ctx, obj, serversChecked)
}

// checkedParts says which parts of an instance routedNginxOperator takes as
// checked, and defaulted, already.
type checkedParts int

const (
	nothingChecked checkedParts = iota
	locationsChecked
	serversChecked
)

func routedNginxOperator(ctx context.Context, obj *v1beta1.NginxOperator, checked checkedParts) (*v1beta1.NginxOperator, field.ErrorList) {
	// The rest of the instance, with stand-in servers, has its verdict
	// kept too: it changes when the Gateway's settings do, not with its
	// routes. Only the name and namespace of its metadata are the schema's.
	outline := v1beta1.NginxOperator{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: obj.Name, Namespace: obj.Namespace},
		Spec:       obj.Spec,
	}
	outline.Spec.Config.Servers = serverStandIns(obj.Spec.Config.Servers)
	v, err := outlineVerdicts.check(ctx, outline)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	out, errs := v.defaulted.DeepCopy(), slices.Clone(v.errs)
	out.ObjectMeta, out.Status = *obj.ObjectMeta.DeepCopy(), *obj.Status.DeepCopy()
	if checked == serversChecked {
		out.Spec.Config.Servers = obj.Spec.Config.Servers
		errs = append(errs, goRules(&out.Spec)...)
		return out, append(errs, serverPairRules(out.Spec.Config.Servers, field.NewPath("spec", "config"))...)
	}
	path := field.NewPath("spec", "config", "servers")
	servers := make([]v1beta1.Server, len(obj.Spec.Config.Servers))
	for i, server := range obj.Spec.Config.Servers {
		at := path.Index(i)
		locations := server.Locations
		if len(locations) > 0 {
			server.Locations = []v1beta1.Location{locationStandIn}
		}
		v, err := serverVerdicts.check(ctx, server)
		if err != nil {
			return nil, append(errs, field.InternalError(at, err))
		}
		servers[i] = *v.defaulted.DeepCopy()
		errs = append(errs, under(at, v.errs)...)
		if len(locations) == 0 {
			continue
		}
		if checked == locationsChecked {
			servers[i].Locations = locations
			continue
		}
		servers[i].Locations = make([]v1beta1.Location, len(locations))
		for j, l := range locations {
			v, err := locationVerdicts.check(ctx, l)
			if err != nil {
				return nil, append(errs, field.InternalError(at.Child("locations").Index(j), err))
			}
			servers[i].Locations[j] = *v.defaulted.DeepCopy()
			errs = append(errs, under(at.Child("locations").Index(j), v.errs)...)
		}
	}
	out.Spec.Config.Servers = servers
	errs = append(errs, goRules(&out.Spec)...)
	return out, append(errs, serverPairRules(out.Spec.Config.Servers, field.NewPath("spec", "config"))...)
}

// RoutedLocation is RoutedNginxOperator's verdict on one location, which a
// front asks of each location a route makes as it builds them: a route
// whose location breaks a rule is left out and told why, and the others
// are served. It returns the location with the schema's defaults and the
// errors, whose paths start at the location.
func RoutedLocation(ctx context.Context, l v1beta1.Location) (v1beta1.Location, field.ErrorList) {
	v, err := locationVerdicts.check(ctx, l)
	if err != nil {
		return l, field.ErrorList{field.InternalError(nil, err)}
	}
	return *v.defaulted.DeepCopy(), append(slices.Clone(v.errs), locationRules(v.defaulted, nil)...)
}

// RoutedStream is RoutedLocation for a stream a route makes.
func RoutedStream(ctx context.Context, s v1beta1.Stream) (v1beta1.Stream, field.ErrorList) {
	v, err := streamVerdicts.check(ctx, s)
	if err != nil {
		return s, field.ErrorList{field.InternalError(nil, err)}
	}
	return *v.defaulted.DeepCopy(), slices.Clone(v.errs)
}

// locationStandIn takes a server's locations' place while the server is
// checked: a location every rule accepts.
var locationStandIn = v1beta1.Location{Path: "/", Static: &v1beta1.StaticLocation{}}

// serverStandIns take the servers' place while the rest of the instance
// is checked: one for each port and TLS mode they have, in the order they
// first appear, which every rule of a server accepts.
func serverStandIns(servers []v1beta1.Server) []v1beta1.Server {
	var out []v1beta1.Server
	seen := map[string]bool{}
	for _, s := range servers {
		key := fmt.Sprintf("%s %v", s.Port, s.TLS != nil)
		if seen[key] {
			continue
		}
		seen[key] = true
		standIn := v1beta1.Server{Port: s.Port}
		if s.TLS != nil {
			standIn.TLS = &v1beta1.TLS{SecretName: "stand-in"}
		}
		out = append(out, standIn)
	}
	return out
}

// The parts of the controller's schema checked apart, with their kept
// verdicts.
var (
	outlineVerdicts = &partVerdicts[v1beta1.NginxOperator]{schema: nginxOperatorForController}
	serverVerdicts  = &partVerdicts[v1beta1.Server]{schema: lazyFrom(func() (*apiextensionsv1.JSONSchemaProps, error) {
		props, err := controllerProps()
		if err != nil {
			return nil, err
		}
		return props.Properties["spec"].Properties["config"].Properties["servers"].Items.Schema, nil
	})}
	locationVerdicts = &partVerdicts[v1beta1.Location]{schema: lazyFrom(func() (*apiextensionsv1.JSONSchemaProps, error) {
		props, err := controllerProps()
		if err != nil {
			return nil, err
		}
		servers := props.Properties["spec"].Properties["config"].Properties["servers"]
		return servers.Items.Schema.Properties["locations"].Items.Schema, nil
	})}
	streamVerdicts = &partVerdicts[v1beta1.Stream]{schema: lazyFrom(func() (*apiextensionsv1.JSONSchemaProps, error) {
		props, err := controllerProps()
		if err != nil {
			return nil, err
		}
		return props.Properties["spec"].Properties["config"].Properties["streams"].Items.Schema, nil
	})}
)

// partVerdicts keep the verdict on each part (a server, a location) by the
// SHA-256 of its JSON, up to maxVerdicts of them (then they start
// afresh): a Gateway's routes change a few parts at a time.
type partVerdicts[T any] struct {
	schema    func() (*Schema, error)
	mu        sync.Mutex
	byContent map[[sha256.Size]byte]verdict[T]
}

// verdict is a part with the schema's defaults, and what the schema says
// of it, with paths from the part.
type verdict[T any] struct {
	defaulted T
	errs      field.ErrorList
}

const maxVerdicts = 8192

// check is the verdict on part, kept or made.
func (p *partVerdicts[T]) check(ctx context.Context, part T) (verdict[T], error) {
	b, err := json.Marshal(part)
	if err != nil {
		return verdict[T]{}, err
	}
	key := sha256.Sum256(b)
	p.mu.Lock()
	v, ok := p.byContent[key]
	p.mu.Unlock()
	if ok {
		return v, nil
	}
	s, err := p.schema()
	if err != nil {
		return verdict[T]{}, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&part)
	if err != nil {
		return verdict[T]{}, err
	}
	m, v.errs = s.admit(ctx, m, false)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &v.defaulted); err != nil {
		return verdict[T]{}, err
	}
	p.mu.Lock()
	if p.byContent == nil || len(p.byContent) >= maxVerdicts {
		p.byContent = map[[sha256.Size]byte]verdict[T]{}
	}
	p.byContent[key] = v
	p.mu.Unlock()
	return v, nil
}

// under are errs, whose fields are paths from a location, with the
// location's path in front, in their fields and in the messages that name
// them.
func under(at *field.Path, errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, len(errs))
	for i, e := range errs {
		moved, rel := *e, e.Field
		switch {
		case rel == "" || rel == "<nil>":
			moved.Field = at.String()
		case strings.HasPrefix(rel, "["):
			moved.Field = at.String() + rel
		default:
			moved.Field = at.String() + "." + rel
		}
		// The OpenAPI checks name the field in their messages too.
		if rel != "" && strings.HasPrefix(e.Detail, rel+" in body ") {
			moved.Detail = moved.Field + strings.TrimPrefix(e.Detail, rel)
		}
		out[i] = &moved
	}
	return out
}
