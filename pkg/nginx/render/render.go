// Package nginx is the NginxOperator controller: it renders a safe nginx.conf
// from the typed spec and builds the StatefulSet, Services, Secret,
// ServiceAccount and PodDisruptionBudget of each instance.
package nginx

import (
	"strconv"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
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
		Temp: "/tmp", Content: layout.ContentMountPath, TLS: layout.TLSMountPath,
		CA: layout.CAMountPath, Auth: layout.AuthMountPath, MimeTypes: "/etc/nginx/mime.types",
	}
}

// CAFile is where ref's certificates are under paths.
func (p Paths) CAFile(ref v1beta1.CACertificateRef) string {
	return p.CA + "/" + caDir(ref) + "/" + ref.Key
}

// AuthFile is where the htpasswd file of a's Secret is under paths.
func (p Paths) AuthFile(a v1beta1.HTTPBasicAuth) string {
	return p.Auth + "/" + a.SecretName + "/" + a.Key
}

// caDir is ref's directory under Paths.CA: a ConfigMap and a
// Secret may share a name.
func caDir(ref v1beta1.CACertificateRef) string {
	if ref.Kind == "Secret" {
		return "secret/" + ref.Name
	}
	return "configmap/" + ref.Name
}

// RenderOptions are the inputs of Render besides the spec.
type RenderOptions struct {
	Paths Paths
	// Namespace of the instance: proxied Services are resolved in it.
	Namespace string
	// UpstreamHost maps a proxied Service to the host nginx connects to; default
	// "<service>.<namespace>.svc". Tests point it at a local server.
	UpstreamHost func(service, namespace string) string
	// HealthPort and StubStatusPort default to the reserved pod ports.
	HealthPort, StubStatusPort int
	// IPv6 makes every server listen on IPv6 too. The controller sets it
	// when the cluster gave the instance's Service an IPv6 address: then the
	// pods have IPv6, and where it did not, nginx must not ask for it (a pod
	// without IPv6 cannot open an IPv6 socket, and nginx would not start).
	IPv6 bool
}

// ConfigError is a spec that cannot be applied (nginx or the apiserver would
// refuse it), reported as condition Degraded with reason InvalidConfig; the
// controller does not retry it until the spec changes.
type ConfigError = k8sutil.SpecError

func configErrorf(format string, args ...any) error {
	return k8sutil.InvalidSpec(ReasonInvalidConfig, format, args...)
}

// Render builds nginx.conf for spec, which must be the spec as
// validation.NginxOperator returns it: with the CRD's defaults, every value
// within the CRD's rules. Render restates none of them (the CRD is their one
// source); it checks only the cross-field rules the CRD cannot hold (see
// checkCrossField). Every user value becomes a quoted argument of a
// directive chosen here, so no spec can add directives whatever it holds.
func Render(spec *v1beta1.NginxOperatorSpec, opts RenderOptions) ([]byte, error) {
	dirs, err := Directives(spec, opts)
	if err != nil {
		return nil, err
	}
	out, err := conf.Render(dirs)
	if err != nil {
		// The emitter refuses an argument it cannot quote safely: the spec is
		// at fault, and retrying cannot help.
		return nil, configErrorf("%v", err)
	}
	return out, nil
}

// Directives is Render before text: the whole configuration as a tree.
func Directives(spec *v1beta1.NginxOperatorSpec, opts RenderOptions) ([]conf.Directive, error) {
	if opts.UpstreamHost == nil {
		opts.UpstreamHost = func(service, namespace string) string { return service + "." + namespace + ".svc" }
	}
	if opts.HealthPort == 0 {
		opts.HealthPort = v1beta1.HealthPort
	}
	if opts.StubStatusPort == 0 {
		opts.StubStatusPort = v1beta1.StubStatusPort
	}
	if err := checkCrossField(spec); err != nil {
		return nil, err
	}
	cfg := spec.Config
	p := opts.Paths
	temp := func(name string) string { return p.Temp + "/" + name }

	http := []conf.Directive{
		conf.D("include", p.MimeTypes),
		conf.D("default_type", "application/octet-stream"),
		conf.D("server_tokens", "off"),
	}
	http = append(http, accessLog(cfg.AccessLog)...)
	http = append(http,
		conf.D("sendfile", "on"),
		conf.D("keepalive_timeout", itoa(cfg.KeepaliveTimeoutSeconds)),
		conf.D("client_max_body_size", cfg.ClientMaxBodySize),
		// Room for the longest server name the schema allows (253
		// characters) and for 32 servers of 32 names each: nginx's defaults
		// (buckets of one cache line, 512 entries) refuse such configs.
		conf.D("server_names_hash_bucket_size", "512"),
		conf.D("server_names_hash_max_size", "4096"),
		// Room for the longest header name the schema allows (128
		// characters) in the hashes of proxy_set_header and
		// proxy_hide_header: nginx's default bucket of 64 bytes refuses it.
		conf.D("proxy_headers_hash_bucket_size", "256"),
		// The root filesystem is read-only: every temp path lives on the writable emptyDir.
		conf.D("client_body_temp_path", temp("client_body")),
		conf.D("proxy_temp_path", temp("proxy")),
		conf.D("fastcgi_temp_path", temp("fastcgi")),
		conf.D("uwsgi_temp_path", temp("uwsgi")),
		conf.D("scgi_temp_path", temp("scgi")),
	)
	http = append(http, compression(cfg.Gzip)...)
	if len(TLSSecrets(spec)) > 0 {
		http = append(http, tlsPolicy(cfg.TLS)...)
	}
	http = append(http, realIP(cfg)...)
	http = append(http, requestVariables(cfg)...)
	health := []conf.Directive{conf.D("listen", itoa(int32(opts.HealthPort)))}
	if opts.IPv6 {
		health = append(health, conf.D("listen", "[::]:"+itoa(int32(opts.HealthPort))))
	}
	http = append(http,
		// The kubelet probes this port, on the pod's address of the
		// cluster's primary family; it answers without touching user content.
		conf.B("server", nil, append(health,
			conf.D("access_log", "off"),
			conf.B("location", []string{"=", "/healthz"}, conf.D("return", "200", "ok\n")),
		)...))
	if spec.Metrics.Enabled {
		// stub_status listens on loopback only: the exporter sidecar shares the
		// pod's network namespace; nothing outside the pod can reach it.
		http = append(http, conf.B("server", nil,
			conf.D("listen", "127.0.0.1:"+strconv.Itoa(opts.StubStatusPort)),
			conf.D("access_log", "off"),
			conf.B("location", []string{"=", "/stub_status"}, conf.D("stub_status")),
		))
	}
	r := &renderer{opts: opts}
	servers := r.servers(spec)
	// Upstreams, maps and rate limit zones are http-level blocks the
	// servers' locations refer to.
	http = append(http, r.httpBlocks...)
	http = append(http, servers...)

	return []conf.Directive{
		conf.D("worker_processes", workerProcesses(spec.Resources)),
		conf.D("worker_shutdown_timeout", strconv.FormatInt(workerShutdownTimeout(spec.Pod.TerminationGracePeriodSeconds), 10)+"s"),
		conf.D("pid", temp("nginx.pid")),
		conf.D("error_log", "stderr", "warn"),
		conf.B("events", nil, conf.D("worker_connections", itoa(cfg.WorkerConnections))),
		conf.B("http", nil, http...),
	}, nil
}

// renderer renders the user's servers. Locations may need blocks at the
// http level (an upstream, a map); they collect in httpBlocks.
type renderer struct {
	opts       RenderOptions
	httpBlocks []conf.Directive
}

// servers renders spec.config.servers, or one default server on the first
// port serving the content when there are none.
func (r *renderer) servers(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	ports := map[string]int32{}
	for _, p := range spec.Ports {
		ports[p.Name] = p.ContainerPort
	}
	servers := spec.Config.Servers
	if len(servers) == 0 && len(spec.Ports) > 0 {
		servers = []v1beta1.Server{{Port: spec.Ports[0].Name, DefaultServer: true}}
	}
	var out []conf.Directive
	for i, s := range servers {
		block := r.listen(spec.Config, s, ports[s.Port])
		if len(s.ServerNames) > 0 {
			block = append(block, conf.D("server_name", s.ServerNames...))
		}
		if s.RedirectToHTTPS != nil {
			// $host is the request's host without its port, lower-cased;
			// $request_uri is its path and query exactly as the client sent
			// them.
			target := "https://$host"
			if port := s.RedirectToHTTPS.Port; port != nil && *port != 443 {
				target += ":" + itoa(*port)
			}
			block = append(block, conf.D("return", itoa(s.RedirectToHTTPS.Code), target+"$request_uri"))
			out = append(out, conf.B("server", nil, block...))
			continue
		}
		block = append(block, r.serverTLS(s.TLS)...)
		block = append(block, conf.D("root", r.opts.Paths.Content), conf.D("index", "index.html"))
		block = append(block, r.access("s"+strconv.Itoa(i), s.IPAccess, s.BasicAuth, s.RateLimit)...)
		block = append(block, r.errorPages(i, s.ErrorPages)...)
		block = append(block, r.locations(i, s)...)
		out = append(out, conf.B("server", nil, block...))
	}
	return out
}

// listen is a server's listen directives: on IPv4, and on IPv6 where the
// Service has it, with the same options.
func (r *renderer) listen(cfg v1beta1.NginxConfig, s v1beta1.Server, port int32) []conf.Directive {
	var options []string
	if s.TLS != nil {
		options = append(options, "ssl")
		// "listen ... http2" is what nginx before 1.25.1 knows; later ones
		// accept it with a deprecation warning.
		if !cfg.DisableHTTP2 {
			options = append(options, "http2")
		}
	}
	if cfg.RealIP != nil && cfg.RealIP.ProxyProtocol {
		options = append(options, "proxy_protocol")
	}
	if s.DefaultServer {
		options = append(options, "default_server")
	}
	out := []conf.Directive{conf.D("listen", append([]string{itoa(port)}, options...)...)}
	if r.opts.IPv6 {
		out = append(out, conf.D("listen", append([]string{"[::]:" + itoa(port)}, options...)...))
	}
	return out
}

// errorPages sends each listed status to a named location that serves the
// page's file: a named location cannot collide with a user's path, and
// error_page without "=" keeps the original status.
func (r *renderer) errorPages(server int, pages []v1beta1.ErrorPage) []conf.Directive {
	var out []conf.Directive
	for i, p := range pages {
		name := "@error_page_" + strconv.Itoa(server) + "_" + strconv.Itoa(i)
		args := make([]string, 0, len(p.Codes)+1)
		for _, c := range p.Codes {
			args = append(args, itoa(c))
		}
		out = append(out,
			conf.D("error_page", append(args, name)...),
			conf.B("location", []string{name}, conf.D("rewrite", "^", p.Path, "break")),
		)
	}
	return out
}

// locationArgs are the arguments of a location block: the path, after "="
// for an exact match.
func locationArgs(l v1beta1.Location) []string {
	if l.Exact {
		return []string{"=", l.Path}
	}
	return []string{l.Path}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

// workerShutdownTimeout is how long nginx's workers may finish their
// requests after a graceful quit or a reload: what the pod's grace period
// leaves after the preStop delay, less 2 s for nginx to exit before the
// kubelet kills it.
func workerShutdownTimeout(gracePeriod int64) int64 {
	return max(gracePeriod-PreStopDelaySeconds-2, 1)
}
