// Package serviceport decides the ports of an instance's Service: the port
// clients connect to for each of spec.ports, and the port a redirect to
// https names when redirectToHTTPS.port is unset. It is a pure function of
// the spec and of the rule the instance's existing Service follows, so that
// the Service builder, the renderer and their tests agree on one answer.
//
// The defaults are decided here and not by the CRD: a schema default is
// applied whenever the API server reads a stored object, so it would move
// the Service ports of every instance an earlier operator created the
// moment the new CRD is installed. The Service carries the rule instead
// (layout.ServicePortsAnnotation), and an instance keeps the rule its Service was created with.
package serviceport

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// Rule is how a port without servicePort gets its Service port.
type Rule string

const (
	// Standard: 443 for a port with TLS servers, 80 for a port with
	// plain-HTTP servers, the containerPort otherwise (see Resolve).
	Standard Rule = "standard"
	// Container: the containerPort, as operators of release 0.3.0 and
	// earlier did; the rule of their instances from then on.
	Container Rule = "container"
)

// Well-known ports clients expect.
const (
	HTTP  int32 = 80
	HTTPS int32 = 443
)

// RuleOf is the rule for an instance whose Service is existing (nil: it
// has none yet). A new Service follows Standard. An existing one follows
// what its annotation says; without it (or with a value this operator does
// not know, which it never wrote), Container, so that an upgrade never
// moves the ports clients of an existing instance use.
func RuleOf(existing *corev1.Service) Rule {
	if existing == nil {
		return Standard
	}
	if Rule(existing.Annotations[layout.ServicePortsAnnotation]) == Standard {
		return Standard
	}
	return Container
}

// Ports are an instance's Service ports.
type Ports struct {
	// Rule the ports follow, the value of Annotation.
	Rule Rule
	// Service is the Service port of each of spec.ports, in its order.
	Service []int32
	// HTTPSRedirect is the port a redirectToHTTPS without port sends
	// clients to; 443, the https default, leaves the URL without a port.
	HTTPSRedirect int32
}

// serves is what a port's servers speak.
type serves int

const (
	servesNothing serves = iota
	servesHTTP
	servesTLS
)

// servedBy says what each of spec.ports serves: TLS when its servers use
// it, plain HTTP when they do not, nothing when no server listens on it
// (streams alone, or nothing at all). An instance without servers or
// streams gets nginx's default server on its first port (see render), a
// plain-HTTP one.
func servedBy(spec *v1beta1.NginxOperatorSpec) []serves {
	out := make([]serves, len(spec.Ports))
	if len(spec.Config.Servers) == 0 && len(spec.Config.Streams) == 0 && len(out) > 0 {
		out[0] = servesHTTP
	}
	for _, s := range spec.Config.Servers {
		for i, p := range spec.Ports {
			if p.Name != s.Port {
				continue
			}
			if s.TLS != nil {
				out[i] = servesTLS
			} else if out[i] != servesTLS {
				out[i] = servesHTTP
			}
		}
	}
	return out
}

// Resolve decides the Service ports of spec under rule. An explicit
// servicePort is always the port's. Under Standard, every other port wants
// 443 when its servers use TLS, 80 when they speak plain HTTP, and its
// containerPort otherwise; a port whose wish is taken (by an explicit
// servicePort, or by a port earlier in spec.ports) gets its containerPort.
// Under Container, every other port gets its containerPort.
//
// The containerPort fallback is always free: containerPorts are unique and
// at least 1024 (so never 80 or 443), and the CRD refuses a servicePort
// equal to the containerPort of a port without servicePort.
//
// HTTPSRedirect is the Service port of the one port with TLS servers; with
// none or several, which one a redirect should name is unknowable, and it
// is 443. Under Container it is 443 unless that port sets servicePort, as
// operators of release 0.3.0 and earlier rendered an unset
// redirectToHTTPS.port: an upgrade changes neither Service nor nginx.conf.
func Resolve(spec *v1beta1.NginxOperatorSpec, rule Rule) Ports {
	served := servedBy(spec)
	out := Ports{Rule: rule, Service: make([]int32, len(spec.Ports)), HTTPSRedirect: HTTPS}
	// A TCP and a UDP port may share a number: taken is by protocol.
	type portOf struct {
		number int32
		udp    bool
	}
	taken := map[portOf]bool{}
	for i, p := range spec.Ports {
		if p.ServicePort != 0 {
			out.Service[i] = p.ServicePort
			taken[portOf{p.ServicePort, p.Protocol == corev1.ProtocolUDP}] = true
		}
	}
	for i, p := range spec.Ports {
		if out.Service[i] != 0 {
			continue
		}
		port := p.ContainerPort
		if rule == Standard {
			switch served[i] {
			case servesTLS:
				port = HTTPS
			case servesHTTP:
				port = HTTP
			}
		}
		if taken[portOf{port, p.Protocol == corev1.ProtocolUDP}] {
			port = p.ContainerPort
		}
		out.Service[i] = port
		taken[portOf{port, p.Protocol == corev1.ProtocolUDP}] = true
	}
	tls := -1
	for i, s := range served {
		if s != servesTLS {
			continue
		}
		if tls >= 0 {
			return out
		}
		tls = i
	}
	if tls >= 0 && (rule == Standard || spec.Ports[tls].ServicePort != 0) {
		out.HTTPSRedirect = out.Service[tls]
	}
	return out
}

// Moved maps the containerPort of each TCP port of spec.ports whose
// Service port differs to that Service port: what a client of the Service
// used, which HTTP's redirects and X-Forwarded-Port name.
func (p Ports) Moved(spec *v1beta1.NginxOperatorSpec) map[int32]int32 {
	out := map[int32]int32{}
	for i, port := range spec.Ports {
		if i < len(p.Service) && p.Service[i] != port.ContainerPort && port.Protocol != corev1.ProtocolUDP {
			out[port.ContainerPort] = p.Service[i]
		}
	}
	return out
}
