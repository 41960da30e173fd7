package validation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
// most of it the CEL rules of each location looking up fields. So each
// location is checked on its own, against the location's part of the
// schema, and its verdict kept by its content: a route change checks the
// locations it changed. The rest of the instance is checked with one
// stand-in location in each server that has any: no rule above a location
// looks into locations but for whether there are any (a redirecting
// server has none), which TestCheckingLocationsApartGivesTheWholeVerdict
// holds for every rule of the shipped CRD.
func RoutedNginxOperator(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
	s, err := nginxOperatorForController()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	outline := obj.DeepCopy()
	for i := range outline.Spec.Config.Servers {
		if len(outline.Spec.Config.Servers[i].Locations) > 0 {
			outline.Spec.Config.Servers[i].Locations = []v1beta1.Location{standIn}
		}
	}
	out, errs := Admit(ctx, s, "NginxOperator", outline)
	if out == nil {
		return nil, errs
	}
	servers := field.NewPath("spec", "config", "servers")
	for i, server := range obj.Spec.Config.Servers {
		if len(server.Locations) == 0 {
			continue
		}
		locations := make([]v1beta1.Location, len(server.Locations))
		for j, l := range server.Locations {
			v, err := checkLocation(ctx, l)
			if err != nil {
				return nil, append(errs, field.InternalError(servers.Index(i).Child("locations").Index(j), err))
			}
			locations[j] = *v.defaulted.DeepCopy()
			errs = append(errs, under(servers.Index(i).Child("locations").Index(j), v.errs)...)
		}
		out.Spec.Config.Servers[i].Locations = locations
	}
	spec := field.NewPath("spec")
	errs = append(errs, crossField(&out.Spec, spec)...)
	errs = append(errs, childRules(&out.Spec, spec)...)
	return out, append(errs, serverPairRules(out.Spec.Config.Servers, spec.Child("config"))...)
}

// standIn takes a server's locations' place while the rest of the
// instance is checked: a location every rule accepts.
var standIn = v1beta1.Location{Path: "/", Static: &v1beta1.StaticLocation{}}

// locationForController is the location's part of the controller's schema.
var locationForController = lazyFrom(func() (*apiextensionsv1.JSONSchemaProps, error) {
	props, err := controllerProps()
	if err != nil {
		return nil, err
	}
	servers := props.Properties["spec"].Properties["config"].Properties["servers"]
	location := servers.Items.Schema.Properties["locations"].Items.Schema
	return location, nil
})

// locationVerdict is a location with the schema's defaults, and what the
// schema says of it, with paths from the location.
type locationVerdict struct {
	defaulted v1beta1.Location
	errs      field.ErrorList
}

// locationVerdicts keep the verdict on each location by the SHA-256 of its
// JSON, up to maxLocationVerdicts of them (then they start afresh): a
// Gateway's routes change a few locations at a time.
var locationVerdicts = struct {
	sync.Mutex
	byContent map[[sha256.Size]byte]locationVerdict
}{byContent: map[[sha256.Size]byte]locationVerdict{}}

const maxLocationVerdicts = 8192

// checkLocation is the verdict on l, kept or made.
func checkLocation(ctx context.Context, l v1beta1.Location) (locationVerdict, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return locationVerdict{}, err
	}
	key := sha256.Sum256(b)
	locationVerdicts.Lock()
	v, ok := locationVerdicts.byContent[key]
	locationVerdicts.Unlock()
	if ok {
		return v, nil
	}
	s, err := locationForController()
	if err != nil {
		return locationVerdict{}, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&l)
	if err != nil {
		return locationVerdict{}, err
	}
	m, v.errs = s.admit(ctx, m, false)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &v.defaulted); err != nil {
		return locationVerdict{}, err
	}
	locationVerdicts.Lock()
	if len(locationVerdicts.byContent) >= maxLocationVerdicts {
		clear(locationVerdicts.byContent)
	}
	locationVerdicts.byContent[key] = v
	locationVerdicts.Unlock()
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
