// Package render builds nginx.conf from an NginxOperator spec. Its files
// follow nginx.conf's own shape: core.go the main and events contexts,
// http.go the http context, inherit.go the settings every proxy location
// shares, said once there, variables.go the maps and geo blocks proxies
// and redirects read, requestmetrics.go the per-request log the metrics
// are made of, server.go a server, match.go which location of a server
// answers a request, location.go a location, client.go its limits on
// request bodies, proxy.go a proxy location, timeouts.go its timeouts,
// mirror.go its mirrors, upstream.go its upstream block (balancing,
// affinity, keepalive) and upstreamservers.go its server lines, grpc.go a
// gRPC location's statuses, redirect.go a redirect, cors.go a location's
// CORS, auth.go external authentication, access.go what a server or a
// location checks of a request first (addresses, basic auth, rate and
// connection limits) and limits.go the names of those limits' zones,
// references.go the objects a spec names and where their files are,
// resolved.go what the controller read of the proxied Services, and
// stream.go the stream context (config.streams: TCP, UDP and TLS
// passthrough and termination). The http-level blocks that locations refer
// to (upstreams, maps, rate limit zones) are built in a pass of their own
// (http.go's httpBlocks).
//
// It imports only the API types, the emitter (pkg/nginx/conf) and the
// instance's layout (pkg/layout), and takes plain values (Options): it is
// a pure function of the spec, which the controller has validated and
// defaulted (pkg/validation) before it renders, and of what the controller
// resolved from the cluster. Its errors are plain; the controller reports
// them as the spec's.
package render

import (
	"errors"
	"fmt"
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
	// Files holds every file nginx reads of the objects the spec
	// references, in one directory: the certificate and key of each TLS
	// Secret, the CA certificates of proxy locations and of servers'
	// client certificates, the htpasswd files of basic auth, each under
	// its FileName (TLSFiles, CAFile and AuthFile name them).
	Files string
	// MimeTypes is the mime.types file to include.
	MimeTypes string
	// RequestLog is the loopback UDP address the nginx-reloader counts
	// requests from (requestmetrics.go); "" where no reloader listens:
	// then no request is counted.
	RequestLog string
}

// PodPaths are the paths inside the nginx pods the operator builds.
func PodPaths() Paths {
	return Paths{
		Temp: layout.TempMountPath, Content: layout.ContentMountPath, Files: layout.FilesMountPath,
		MimeTypes:  "/etc/nginx/mime.types",
		RequestLog: layout.RequestLogAddress,
	}
}

// Options are the inputs of Config besides the spec: plain values, which
// the controller resolves from the cluster before it renders (pkg/nginx,
// resolve.go); the renderer calls nothing back.
type Options struct {
	Paths Paths
	// Namespace of the instance: proxied Services are resolved in it.
	Namespace string
	// Services are the proxied Services by ServiceKey, as resolved from the
	// cluster.
	Services map[string]Service
	// FallbackHost is the address of a proxied Service not in Services;
	// "" is its cluster DNS name. Tests point it at a local server.
	FallbackHost string
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
	// ServicePorts are the Service port of each container port where the
	// two differ: the port a client of the Service used, which redirects
	// and X-Forwarded-Port name rather than the one nginx listens on.
	ServicePorts map[int32]int32
}

// ServiceDNSName is a Service's name in the cluster DNS: where nginx
// connects for a Service the caller did not resolve (Options.Services) and
// the name a backend's certificate is checked against.
func ServiceDNSName(service, namespace string) string { return service + "." + namespace + ".svc" }

func (o Options) withDefaults() Options {
	if o.HealthPort == 0 {
		o.HealthPort = layout.HealthPort
	}
	if o.StubStatusPort == 0 {
		o.StubStatusPort = layout.StubStatusPort
	}
	return o
}

// Config builds nginx.conf for spec, which must be the spec as
// validation.NginxOperator returns it: with the CRD's defaults, every value
// within the CRD's rules and pkg/validation's. Config restates none of
// them. Every user value becomes a quoted argument of a directive chosen
// here, so no spec can add directives whatever it holds; an argument the
// emitter cannot quote safely is the error, and so is a spec the rules
// should have refused (Config is total: it never panics, whatever spec it
// is given).
func Config(spec *v1beta1.NginxOperatorSpec, opts Options) ([]byte, error) {
	tree, err := Directives(spec, opts)
	if err != nil {
		return nil, err
	}
	return conf.Render(tree)
}

// Directives is Config before text: the whole configuration as a tree.
func Directives(spec *v1beta1.NginxOperatorSpec, opts Options) ([]conf.Directive, error) {
	r := &renderer{opts: opts.withDefaults(), behindRouter: portsBehindRouter(spec)}
	r.countRequests = r.requestMetricsOn(spec)
	tree := inheritShared(r.main(spec))
	return tree, errors.Join(r.invalid...)
}

// renderer renders one spec.
type renderer struct {
	opts Options
	// invalid are the spec's faults that validation should have refused
	// (a field its rules require, missing): rendering goes on without the
	// field, and Directives returns them.
	invalid []error
	// matches are the servers' request matching, by server number.
	matches map[int]*serverMatch
	// upstreams name the upstream block of each proxy location by its id,
	// and the blocks by what makes them the same (sharedUpstream).
	upstreams, upstreamsByKey map[string]string
	// countRequests logs every request to the reloader's socket
	// (requestmetrics.go).
	countRequests bool
	// behindRouter are the ports whose TLS servers listen behind a stream
	// router (stream.go), by name.
	behindRouter map[string]bool
}

// fault records a fault of the spec (see renderer.invalid).
func (r *renderer) fault(format string, args ...any) {
	r.invalid = append(r.invalid, fmt.Errorf(format, args...))
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }
