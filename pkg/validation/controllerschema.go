package validation

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// nginxOperatorForController is the v1beta1 NginxOperator schema the
// controller checks every reconciled object against: the shipped one
// without the CEL rules inside the Kubernetes API types the spec embeds
// (tolerations, affinity, spread constraints, resources, NetworkPolicy
// peers; hack/crdembedded adds them). Those rules restate what the
// StatefulSet's and the NetworkPolicy's APIs refuse, and the controller
// asks those APIs itself, by a dry run, before it writes a child that
// carries them (apply.go): admission refuses such a spec, the conversion
// webhook too (NginxOperatorSchema keeps every rule), and an object stored
// before a rule existed is InvalidConfig naming the field all the same.
// Compiled, those rules took 6.6 of the schema's 12.4 MiB of heap in every
// operator; without them it takes 5.1.
var nginxOperatorForController = lazyFrom(controllerProps)

// controllerProps is nginxOperatorForController's schema, decoded afresh.
func controllerProps() (*apiextensionsv1.JSONSchemaProps, error) {
	props, err := ShippedSchema("NginxOperator", "v1beta1")
	if err != nil {
		return nil, err
	}
	withoutEmbeddedRules(reflect.TypeFor[v1beta1.NginxOperator](), props, false)
	return props, withoutRoom(props)
}

// withoutRoom takes out of the NginxOperator schema props the bounds on
// how many servers and locations an instance has (maxItems) and the rules
// that compare every pair of servers: the servers a Gateway's routes make
// (RoutedNginxOperator) never pass admission, whose cost budget is what
// those bounds are for, and go far beyond them (a Gateway with 1,000
// routes). Go checks the same in linear time (serverPairRules), and
// NginxOperator holds every other instance to the CRD's bounds (room).
func withoutRoom(props *apiextensionsv1.JSONSchemaProps) error {
	spec := props.Properties["spec"]
	config := spec.Properties["config"]
	servers := config.Properties["servers"]
	servers.MaxItems = nil
	server := servers.Items.Schema
	locations := server.Properties["locations"]
	locations.MaxItems = nil
	server.Properties["locations"] = locations
	config.Properties["servers"] = servers
	rules := len(config.XValidations)
	config.XValidations = slices.DeleteFunc(config.XValidations, func(r apiextensionsv1.ValidationRule) bool {
		return slices.Contains(serverPairMessages, r.Message)
	})
	if removed := rules - len(config.XValidations); removed != len(serverPairMessages) {
		// serverPairRules restates rules the CRD no longer has, or misses
		// one it has.
		return fmt.Errorf("the NginxOperator CRD has %d of the %d rules on pairs of servers the controller checks in Go", removed, len(serverPairMessages))
	}
	spec.Properties["config"] = config
	props.Properties["spec"] = spec
	return nil
}

// withoutEmbeddedRules removes the CEL rules of s, the schema of Go type t,
// at and below every Kubernetes API type (package k8s.io/api/...) it
// embeds; inside says s is one already.
func withoutEmbeddedRules(t reflect.Type, s *apiextensionsv1.JSONSchemaProps, inside bool) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	inside = inside || strings.HasPrefix(t.PkgPath(), "k8s.io/api/")
	if inside {
		s.XValidations = nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			withoutEmbeddedRules(t.Elem(), s.Items.Schema, inside)
		}
	case reflect.Map:
		if s.AdditionalProperties != nil {
			withoutEmbeddedRules(t.Elem(), s.AdditionalProperties.Schema, inside)
		}
	case reflect.Struct:
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				withoutEmbeddedRules(f.Type, s, inside)
				continue
			}
			if prop, ok := s.Properties[name]; ok {
				withoutEmbeddedRules(f.Type, &prop, inside)
				s.Properties[name] = prop
			}
		}
	}
}
