// Package instance is the instance stage of the Gateway wing: the one
// value a Gateway becomes, the spec of its NginxOperator (ports, settings,
// HTTP servers and streams), made of what the graph stage placed and the
// Gateway's parameters.
//
// It guarantees: Spec is pure and total (every graph has a spec; what the
// graph refused is not in it), and it adds only what every Gateway's
// instance has: a default server on each HTTP port, a 404 location in
// every server (both counted by the graph's room), one replica unless the
// parameters say, HTTP/2 without TLS on a
// port whose plain-text servers send gRPC, the Gateway's infrastructure
// labels and annotations on every child, and the parameters' settings. It
// imports no client, no controller-runtime and no nginx controller
// (hack/structure holds it to that).
package instance

import (
	"reflect"
	"slices"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// Spec is the NginxOperator spec of g's Gateway.
func Spec(g graph.Graph) v1beta1.NginxOperatorSpec {
	spec := placedSpec(g.Placed)
	spec.ChildMetadata = childMetadata(g.Gateway)
	applyParameters(&spec, g.Parameters.Spec)
	if spec.Replicas == nil {
		// A Gateway's instance has its replicas set: one unless the
		// parameters say, where a hand-written NginxOperator without
		// replicas leaves them to whoever scales its StatefulSet.
		spec.Replicas = ptr.To[int32](1)
	}
	return spec
}

// placedSpec is the instance's spec of what the routes placed: its ports,
// its servers, and on each HTTP port a default server answering 404 where
// no listener takes any host.
func placedSpec(p graph.Placed) v1beta1.NginxOperatorSpec {
	servers := slices.Clone(p.Servers)
	for _, port := range p.Ports {
		if p.HTTPPorts[port.Name] && !slices.ContainsFunc(servers, func(s v1beta1.Server) bool { return s.Port == port.Name && s.DefaultServer }) {
			var tls *v1beta1.TLS
			if i := slices.IndexFunc(servers, func(s v1beta1.Server) bool { return s.Port == port.Name }); i >= 0 {
				tls = servers[i].TLS
			}
			servers = append(servers, v1beta1.Server{Port: port.Name, DefaultServer: true, TLS: tls})
		}
	}
	notFound := v1beta1.LocationMatchKey(graph.NotFoundLocation)
	for i := range servers {
		if !slices.ContainsFunc(servers[i].Locations, func(l v1beta1.Location) bool { return v1beta1.LocationMatchKey(l) == notFound }) {
			// Appended in place, not to a copy: a server of a shared
			// Gateway holds thousands of locations (1.5 MB at 1,000), and
			// what p's slices show does not change (their length does not).
			servers[i].Locations = append(servers[i].Locations, graph.NotFoundLocation)
		}
	}
	ports := slices.Clone(p.Ports)
	for i := range ports {
		ports[i].H2C = servesGRPCInPlainText(servers, ports[i].Name)
	}
	return v1beta1.NginxOperatorSpec{Ports: ports, Config: v1beta1.NginxConfig{Servers: servers, Streams: slices.Clone(p.Streams)}}
}

// servesGRPCInPlainText reports whether a plain-text server of port sends
// gRPC: its clients then speak HTTP/2 without TLS (h2c), which the port
// must accept (nginx 1.25.1 and later keep HTTP/1.1 on it too).
func servesGRPCInPlainText(servers []v1beta1.Server, port string) bool {
	for _, s := range servers {
		if s.Port != port || s.TLS != nil {
			continue
		}
		for _, l := range s.Locations {
			if l.Proxy != nil && l.Proxy.BackendProtocol == "GRPC" {
				return true
			}
		}
	}
	return false
}

// childMetadata are the labels and annotations of every object of gw's
// instance: its spec.infrastructure's, and the gateway-name label, by which
// Gateway API finds the objects a Gateway made.
func childMetadata(gw *gatewayv1.Gateway) v1beta1.ChildMetadata {
	out := v1beta1.ChildMetadata{Labels: map[string]string{graph.LabelGatewayName: gw.Name}}
	infra := gw.Spec.Infrastructure
	if infra == nil {
		return out
	}
	for k, v := range infra.Labels {
		if k != graph.LabelGatewayName {
			out.Labels[string(k)] = string(v)
		}
	}
	for k, v := range infra.Annotations {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[string(k)] = string(v)
	}
	return out
}

// Overlaid is base with each field over sets (not its zero value)
// replacing base's, whole: a Gateway's pod settings replace its class's,
// rather than merge with them.
func Overlaid(base, over *v1beta1.NginxGatewayParametersSpec) *v1beta1.NginxGatewayParametersSpec {
	if base == nil {
		return over.DeepCopy()
	}
	out := base.DeepCopy()
	from, to := reflect.ValueOf(over.DeepCopy()).Elem(), reflect.ValueOf(out).Elem()
	for i := range from.NumField() {
		if !from.Field(i).IsZero() {
			to.Field(i).Set(from.Field(i))
		}
	}
	return out
}

// applyParameters sets p's settings in spec, a Gateway's instance's.
func applyParameters(spec *v1beta1.NginxOperatorSpec, p *v1beta1.NginxGatewayParametersSpec) {
	if p == nil {
		return
	}
	p = p.DeepCopy()
	spec.Replicas, spec.Image, spec.ImagePullPolicy, spec.ImagePullSecrets = p.Replicas, p.Image, p.ImagePullPolicy, p.ImagePullSecrets
	spec.PodDisruptionBudget, spec.NetworkPolicy = p.PodDisruptionBudget, p.NetworkPolicy
	setIfSet(&spec.Config.NginxSettings, p.Config)
	setIfSet(&spec.Metrics, p.Metrics)
	setIfSet(&spec.Service, p.Service)
	setIfSet(&spec.Resources, p.Resources)
	setIfSet(&spec.Pod, p.Pod)
}

// setIfSet sets *field to *value, unless value is nil.
func setIfSet[T any](field *T, value *T) {
	if value != nil {
		*field = *value
	}
}
