package render

import "slices"

// Service is one proxied Service as the controller resolved it from the
// cluster (its Service object and EndpointSlices), read once per
// reconcile: the renderer's upstreams and the status's upstreams both come
// from it.
type Service struct {
	// Address is the Service's own address: its ClusterIP (in brackets
	// for IPv6), an ExternalName's target, a headless Service's DNS name.
	// nginx connects there for a location with useClusterIP, for an
	// ExternalName Service, and as the backup of an upstream of pods.
	Address string
	// AtEndpoints sends to the Service's pods (Endpoints) rather than to
	// Address.
	AtEndpoints bool
	// Endpoints are the "address:port" of the ready pods behind each
	// Service port of protocol TCP, sorted; a port without any has none.
	Endpoints map[int32][]string
	// UDPEndpoints are Endpoints for the Service's UDP ports.
	UDPEndpoints map[int32][]string
}

// Upstream is where nginx sends the Service's port (of protocol UDP with
// udp, else TCP): its endpoints
// (atEndpoints), or its own address where the Service is not reached at
// its pods or the location asks for that (clusterIP).
func (s Service) Upstream(port int32, udp, clusterIP bool) (addrs []string, atEndpoints bool) {
	if s.AtEndpoints && !clusterIP {
		if udp {
			return slices.Clip(s.UDPEndpoints[port]), true
		}
		return slices.Clip(s.Endpoints[port]), true
	}
	return []string{s.Address + ":" + itoa(port)}, false
}

// service is the Service b sends to as resolved, or, where the caller
// resolved none (tests, tools that render without a cluster), one reached
// at FallbackHost or at its cluster DNS name.
func (o Options) service(b backend) Service {
	if s, ok := o.Services[b.key()]; ok {
		return s
	}
	if o.FallbackHost != "" {
		return Service{Address: o.FallbackHost}
	}
	namespace := o.Namespace
	if b.namespace != "" {
		namespace = b.namespace
	}
	return Service{Address: ServiceDNSName(b.service, namespace)}
}
