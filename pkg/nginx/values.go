package nginx

import (
	"regexp"
	"slices"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The renderer checks every value it emits against the range nginx accepts,
// whatever admission let through: a spec from an older schema, a path into
// the API that skipped validation, or a schema and a renderer that drifted
// apart all end as a ConfigError, never as a config that nginx refuses on a
// running pod. The bounds are the CRD's (pkg/apis/nginx/v1beta1), which the
// fuzz and corpus tests hold to what real nginx accepts.
var (
	serverNamePattern = regexp.MustCompile(`^(_|(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`)
	// A prefix or exact URI: no leading "~" (regex), "@" (named) or "=".
	locationPathPattern = regexp.MustCompile(`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`)
	redirectURLPattern  = regexp.MustCompile(`^https?://[A-Za-z0-9._~!&'()*+,;=:@%/?#\[\]-]+$`)
	headerNamePattern   = regexp.MustCompile(`^[A-Za-z0-9!#%&'*+.^_|~-]+$`)
	// No control characters (a header line split) and no "$" (nginx would
	// expand variables such as $http_cookie into responses).
	headerValuePattern = regexp.MustCompile(`^[^\x00-\x1f\x7f$]*$`)
	bodySizePattern    = regexp.MustCompile(`^[0-9]{1,9}[kKmMgG]?$`)
	dnsLabelPattern    = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain       = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	redirectCodes      = []int32{301, 302, 303, 307, 308}
)

// checkValues returns a ConfigError for the first value of spec, defaults
// applied (cfg), that nginx would refuse or that could change the meaning of
// the directive it is put in.
func checkValues(spec *v1beta1.NginxOperatorSpec, cfg v1beta1.NginxConfig) error {
	for i, p := range spec.Ports {
		if p.ContainerPort < 1024 || p.ContainerPort > 65535 || isReservedPort(p.ContainerPort) {
			return configErrorf("spec.ports[%d].containerPort %d: must be 1024-65535 and not 9113, 18080 or 18081", i, p.ContainerPort)
		}
	}
	switch {
	case cfg.WorkerConnections < 16 || cfg.WorkerConnections > 65535:
		return configErrorf("config.workerConnections %d: must be 16-65535", cfg.WorkerConnections)
	case cfg.KeepaliveTimeoutSeconds < 0 || cfg.KeepaliveTimeoutSeconds > 3600:
		return configErrorf("config.keepaliveTimeoutSeconds %d: must be 0-3600", cfg.KeepaliveTimeoutSeconds)
	case !bodySizePattern.MatchString(cfg.ClientMaxBodySize):
		return configErrorf("config.clientMaxBodySize %q: must be up to 9 digits with an optional k, m or g", cfg.ClientMaxBodySize)
	}
	for i, s := range cfg.Servers {
		for j, name := range s.ServerNames {
			if len(name) > 253 || !serverNamePattern.MatchString(name) {
				return configErrorf("config.servers[%d].serverNames[%d] %q: not a host name, \"*.\" wildcard or \"_\"", i, j, name)
			}
		}
		if s.TLS != nil && (len(s.TLS.SecretName) > 253 || !dnsSubdomain.MatchString(s.TLS.SecretName)) {
			return configErrorf("config.servers[%d].tls.secretName %q: not a Secret name", i, s.TLS.SecretName)
		}
		for j, l := range s.Locations {
			if err := checkLocation(i, j, l); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkLocation(i, j int, l v1beta1.Location) error {
	at := func(format string, args ...any) error {
		return configErrorf("config.servers[%d].locations[%d]."+format, append([]any{i, j}, args...)...)
	}
	if len(l.Path) > 512 || !locationPathPattern.MatchString(l.Path) {
		return at("path %q: must be a URI path starting with /", l.Path)
	}
	if p := l.Proxy; p != nil {
		switch {
		case len(p.Service) > 63 || !dnsLabelPattern.MatchString(p.Service):
			return at("proxy.service %q: not a Service name", p.Service)
		case p.Port < 1 || p.Port > 65535:
			return at("proxy.port %d: must be 1-65535", p.Port)
		case p.ReadTimeoutSeconds < 0 || p.ReadTimeoutSeconds > 3600:
			return at("proxy.readTimeoutSeconds %d: must be 1-3600", p.ReadTimeoutSeconds)
		}
	}
	if r := l.Redirect; r != nil {
		if len(r.URL) > 2048 || !redirectURLPattern.MatchString(r.URL) {
			return at("redirect.url %q: must be an absolute http or https URL", r.URL)
		}
		if r.Code != 0 && !slices.Contains(redirectCodes, r.Code) {
			return at("redirect.code %d: must be 301, 302, 303, 307 or 308", r.Code)
		}
	}
	for k, h := range l.Headers {
		if len(h.Name) > 128 || !headerNamePattern.MatchString(h.Name) {
			return at("headers[%d].name %q: not a header name", k, h.Name)
		}
		if len(h.Value) > 1024 || !headerValuePattern.MatchString(h.Value) {
			return at("headers[%d].value %q: control characters and \"$\" are not allowed", k, h.Value)
		}
	}
	return nil
}

func isReservedPort(p int32) bool {
	return p == v1beta1.HealthPort || p == v1beta1.StubStatusPort || p == v1beta1.ExporterPort
}
