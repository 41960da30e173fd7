// Package render builds nginx.conf from an NginxOperator spec. Its files
// follow nginx.conf's own shape: core.go the main and events contexts,
// http.go the http context, variables.go the maps and geo blocks proxies
// and redirects read, server.go a server, location.go a location,
// proxy.go a proxy location, upstream.go its upstream block (balancing,
// affinity, keepalive), grpc.go a gRPC location's statuses, redirect.go a
// redirect, access.go the access rules and rate limits of a server or a
// location, and references.go the objects a spec names and where their
// files are.
//
// It imports only the API types, the emitter (pkg/nginx/conf) and the
// instance's layout (pkg/layout): it is a pure function of the spec, which
// the controller has validated and defaulted (pkg/validation) before it
// renders. Its errors are plain; the controller reports them as the spec's.
package render

import (
	"strconv"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// Paths are where nginx finds its files. In a pod they are fixed (PodPaths);
// tests that run a real nginx point them at a temporary directory.
type Paths struct {
	// Temp is a writable directory: pid file and temp paths.
	Temp string
	// Content is the document root.
	Content string
	// TLS holds one directory per TLS Secret, each with tls.crt and tls.key.
	TLS string
	// CA holds one directory per CA certificate reference (of a proxy
	// location or of a server's client certificates): CAFile names the
	// file in it.
	CA string
	// Auth holds one directory per basic-auth Secret: AuthFile names the
	// file in it.
	Auth string
	// MimeTypes is the mime.types file to include.
	MimeTypes string
}

// PodPaths are the paths inside the nginx pods the operator builds.
func PodPaths() Paths {
	return Paths{
		Temp: layout.TempMountPath, Content: layout.ContentMountPath, TLS: layout.TLSMountPath,
		CA: layout.CAMountPath, Auth: layout.AuthMountPath, MimeTypes: "/etc/nginx/mime.types",
	}
}

// Options are the inputs of Config besides the spec.
type Options struct {
	Paths Paths
	// Namespace of the instance: proxied Services are resolved in it.
	Namespace string
	// UpstreamHost maps a proxied Service to the host nginx connects to; default
	// "<service>.<namespace>.svc". Tests point it at a local server.
	UpstreamHost func(service, namespace string) string
	// Endpoints are the "address:port" nginx sends a proxied Service's
	// port to: its ready pods. ok false sends it to UpstreamHost instead (an
	// ExternalName Service; unset, every Service).
	Endpoints func(service string, port int32) (addrs []string, ok bool)
	// HealthPort and StubStatusPort default to the reserved pod ports.
	HealthPort, StubStatusPort int
	// IPv6 makes every server listen on IPv6 too. The controller sets it
	// when the cluster gave the instance's Service an IPv6 address: then the
	// pods have IPv6, and where it did not, nginx must not ask for it (a pod
	// without IPv6 cannot open an IPv6 socket, and nginx would not start).
	IPv6 bool
	// HTTPSPort is the port of the https URL a redirectToHTTPS without port
	// sends clients to: the Service port of the instance's TLS port, as
	// the controller decides it (serviceport.Resolve). 0 is 443, which the
	// URL leaves out.
	HTTPSPort int32
}

// ServiceDNSName is a Service's name in the cluster DNS: where nginx
// connects by default (Options.UpstreamHost) and the name a backend's
// certificate is checked against.
func ServiceDNSName(service, namespace string) string { return service + "." + namespace + ".svc" }

func (o Options) withDefaults() Options {
	if o.UpstreamHost == nil {
		o.UpstreamHost = ServiceDNSName
	}
	if o.HealthPort == 0 {
		o.HealthPort = v1beta1.HealthPort
	}
	if o.StubStatusPort == 0 {
		o.StubStatusPort = v1beta1.StubStatusPort
	}
	return o
}

// Config builds nginx.conf for spec, which must be the spec as
// validation.NginxOperator returns it: with the CRD's defaults, every value
// within the CRD's rules and pkg/validation's. Config restates none of
// them. Every user value becomes a quoted argument of a directive chosen
// here, so no spec can add directives whatever it holds; an argument the
// emitter cannot quote safely is the error.
func Config(spec *v1beta1.NginxOperatorSpec, opts Options) ([]byte, error) {
	return conf.Render(Directives(spec, opts))
}

// Directives is Config before text: the whole configuration as a tree.
func Directives(spec *v1beta1.NginxOperatorSpec, opts Options) []conf.Directive {
	r := &renderer{opts: opts.withDefaults(), refs: ReferencesOf(spec)}
	return r.main(spec)
}

// renderer renders one spec. Locations may need blocks at the http level
// (an upstream, a map, a rate limit zone); they collect in httpBlocks.
type renderer struct {
	opts       Options
	refs       References
	httpBlocks []conf.Directive
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }
