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
	// MimeTypes is the mime.types file to include.
	MimeTypes string
}

// PodPaths are the paths inside the nginx pods the operator builds.
func PodPaths() Paths {
	return Paths{Temp: "/tmp", Content: layout.ContentMountPath, TLS: layout.TLSMountPath, MimeTypes: "/etc/nginx/mime.types"}
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
// source); it checks only the cross-field rule the CRD cannot hold (see
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
		conf.D("access_log", "/dev/stdout"),
		conf.D("sendfile", "on"),
		conf.D("keepalive_timeout", itoa(cfg.KeepaliveTimeoutSeconds)),
		conf.D("client_max_body_size", cfg.ClientMaxBodySize),
		// Room for the longest server name the schema allows (253
		// characters) and for 32 servers of 32 names each: nginx's defaults
		// (buckets of one cache line, 512 entries) refuse such configs.
		conf.D("server_names_hash_bucket_size", "512"),
		conf.D("server_names_hash_max_size", "4096"),
		// The root filesystem is read-only: every temp path lives on the writable emptyDir.
		conf.D("client_body_temp_path", temp("client_body")),
		conf.D("proxy_temp_path", temp("proxy")),
		conf.D("fastcgi_temp_path", temp("fastcgi")),
		conf.D("uwsgi_temp_path", temp("uwsgi")),
		conf.D("scgi_temp_path", temp("scgi")),
		// The kubelet probes this port; it answers without touching user content.
		conf.B("server", nil,
			conf.D("listen", itoa(int32(opts.HealthPort))),
			conf.D("access_log", "off"),
			conf.B("location", []string{"=", "/healthz"}, conf.D("return", "200", "ok\n")),
		),
	}
	if spec.Metrics.Enabled {
		// stub_status listens on loopback only: the exporter sidecar shares the
		// pod's network namespace; nothing outside the pod can reach it.
		http = append(http, conf.B("server", nil,
			conf.D("listen", "127.0.0.1:"+strconv.Itoa(opts.StubStatusPort)),
			conf.D("access_log", "off"),
			conf.B("location", []string{"=", "/stub_status"}, conf.D("stub_status")),
		))
	}
	http = append(http, userServers(spec, cfg, opts)...)

	return []conf.Directive{
		conf.D("worker_processes", "auto"),
		conf.D("pid", temp("nginx.pid")),
		conf.D("error_log", "stderr", "warn"),
		conf.B("events", nil, conf.D("worker_connections", itoa(cfg.WorkerConnections))),
		conf.B("http", nil, http...),
	}, nil
}

// userServers renders spec.config.servers, or one default server on the first
// port serving the content when there are none.
func userServers(spec *v1beta1.NginxOperatorSpec, cfg v1beta1.NginxConfig, opts RenderOptions) []conf.Directive {
	ports := map[string]int32{}
	for _, p := range spec.Ports {
		ports[p.Name] = p.ContainerPort
	}
	servers := cfg.Servers
	if len(servers) == 0 && len(spec.Ports) > 0 {
		servers = []v1beta1.Server{{Port: spec.Ports[0].Name, DefaultServer: true}}
	}
	var out []conf.Directive
	for _, s := range servers {
		listen := []string{itoa(ports[s.Port])}
		if s.TLS != nil {
			listen = append(listen, "ssl")
		}
		if s.DefaultServer {
			listen = append(listen, "default_server")
		}
		block := []conf.Directive{conf.D("listen", listen...)}
		if len(s.ServerNames) > 0 {
			block = append(block, conf.D("server_name", s.ServerNames...))
		}
		if s.TLS != nil {
			dir := opts.Paths.TLS + "/" + s.TLS.SecretName
			block = append(block,
				conf.D("ssl_certificate", dir+"/tls.crt"),
				conf.D("ssl_certificate_key", dir+"/tls.key"),
				conf.D("ssl_protocols", "TLSv1.2", "TLSv1.3"),
			)
		}
		block = append(block, conf.D("root", opts.Paths.Content), conf.D("index", "index.html"))
		out = append(out, conf.B("server", nil, append(block, renderLocations(s.Locations, opts)...)...))
	}
	return out
}

func renderLocations(locations []v1beta1.Location, opts RenderOptions) []conf.Directive {
	if len(locations) == 0 {
		locations = []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}
	}
	var out []conf.Directive
	for _, l := range locations {
		var body []conf.Directive
		switch {
		case l.Static != nil:
			autoindex := "off"
			if l.Static.Autoindex {
				autoindex = "on"
			}
			body = append(body, conf.D("try_files", "$uri", "$uri/", "=404"), conf.D("autoindex", autoindex))
		case l.Proxy != nil:
			upstream := "http://" + opts.UpstreamHost(l.Proxy.Service, opts.Namespace) + ":" + itoa(l.Proxy.Port)
			body = append(body,
				conf.D("proxy_pass", upstream),
				conf.D("proxy_http_version", "1.1"),
				conf.D("proxy_set_header", "Host", "$host"),
				conf.D("proxy_set_header", "X-Real-IP", "$remote_addr"),
				conf.D("proxy_set_header", "X-Forwarded-For", "$proxy_add_x_forwarded_for"),
				conf.D("proxy_set_header", "X-Forwarded-Proto", "$scheme"),
				conf.D("proxy_read_timeout", itoa(l.Proxy.ReadTimeoutSeconds)+"s"),
			)
		case l.Redirect != nil:
			body = append(body, conf.D("return", itoa(l.Redirect.Code), l.Redirect.URL))
		}
		for _, h := range l.Headers {
			body = append(body, conf.D("add_header", h.Name, h.Value, "always"))
		}
		out = append(out, conf.B("location", locationArgs(l), body...))
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
