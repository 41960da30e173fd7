package render

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// Use is what a spec uses a referenced object for.
type Use int

// The uses, in the order ReferencesOf lists them.
const (
	// UseTLS: a server's or a stream's certificate and key, a Secret whose
	// tls.crt and tls.key nginx reads from Paths.Files.
	UseTLS Use = iota
	// UseProxy: a Service a proxy location sends to; not mounted: the
	// controller resolves it to its ready endpoints or its own address
	// (Options.Services).
	UseProxy
	// UseBasicAuth: htpasswd files, keys of a Secret nginx reads from
	// Paths.Files (on every request).
	UseBasicAuth
	// UseCA: CA certificates a proxy location verifies its Service with or a
	// TLS server verifies clients with, keys of a ConfigMap or Secret nginx
	// reads from Paths.Files.
	UseCA
	// UseContent: a ConfigMap projected into the document root.
	UseContent
)

// String is how messages name the use, before the object's kind.
func (u Use) String() string {
	return [...]string{UseTLS: "TLS", UseProxy: "proxied", UseBasicAuth: "basic auth", UseCA: "CA certificate", UseContent: "content"}[u]
}

// Reference is one object a spec names.
type Reference struct {
	Use Use
	// Kind is Secret, ConfigMap or Service.
	Kind string
	Name string
	// Namespace is a proxied Service's namespace when the spec names one
	// (Backend.Namespace), "" for the instance's own.
	Namespace string
	// Keys are the keys of the object nginx reads (the htpasswd files of
	// basic auth, the certificates of a CA), in order of first use.
	Keys []string
	// Ports are the TCP ports of a proxied Service that locations and
	// streams send to, in order of first use, and UDPPorts its UDP ports
	// that streams on UDP ports send to; ClusterIP tells that some
	// location or stream sends to the Service's own address
	// (useClusterIP).
	Ports     []int32
	UDPPorts  []int32
	ClusterIP bool
}

// In is the namespace of the object ref names, for an instance of
// namespace instance.
func (ref Reference) In(instance string) string {
	if ref.Namespace != "" {
		return ref.Namespace
	}
	return instance
}

// References are the distinct objects a spec names, by use in the order
// of the Use constants, and within a use in order of first appearance.
type References []Reference

// Of are the references of one use.
func (refs References) Of(use Use) References {
	var out References
	for _, ref := range refs {
		if ref.Use == use {
			out = append(out, ref)
		}
	}
	return out
}

// TLSSecrets are the names of the TLS Secrets.
func (refs References) TLSSecrets() []string {
	var out []string
	for _, ref := range refs.Of(UseTLS) {
		out = append(out, ref.Name)
	}
	return out
}

// ReferencesOf walks spec once for every object it names: what the
// renderer points nginx at, the operator copies into the pods' files
// (FileKeys) and the controller checks exists. A proxy backend with weight 0 is not in nginx.conf and is not a
// reference: it need not exist.
func ReferencesOf(spec *v1beta1.NginxOperatorSpec) References {
	var w referenceWalk
	for _, name := range tlsSecretsOf(spec) {
		w.add(UseTLS, "Secret", name, "")
	}
	proxied := func(bs []backend) {
		for _, b := range bs {
			ref := w.addIn(UseProxy, "Service", b.namespace, b.service, "")
			ports := &ref.Ports
			if b.udp {
				ports = &ref.UDPPorts
			}
			if !slices.Contains(*ports, b.port) {
				*ports = append(*ports, b.port)
			}
			ref.ClusterIP = ref.ClusterIP || b.clusterIP
		}
	}
	for _, s := range spec.Config.Servers {
		for _, l := range s.Locations {
			if l.Proxy != nil {
				proxied(append(backendsOf(l.Proxy), mirroredOf(l.Proxy)...))
			}
		}
	}
	for _, a := range externalAuthsOf(spec) {
		if a.Service != "" {
			proxied([]backend{{namespace: a.Namespace, service: a.Service, port: a.Port}})
		}
	}
	for _, s := range spec.Config.Streams {
		proxied(streamBackends(s, isUDP(spec, s.Port)))
	}
	auth := func(a *v1beta1.HTTPBasicAuth) {
		if a != nil && !a.Disabled {
			w.add(UseBasicAuth, "Secret", a.SecretName, a.Key)
		}
	}
	for _, s := range spec.Config.Servers {
		auth(s.BasicAuth)
		for _, l := range s.Locations {
			auth(l.BasicAuth)
		}
	}
	ca := func(ref v1beta1.CACertificateRef) { w.add(UseCA, ref.Kind, ref.Name, ref.Key) }
	for _, s := range spec.Config.Servers {
		if s.TLS != nil && s.TLS.ClientCertificates != nil {
			ca(s.TLS.ClientCertificates.CACertificate)
		}
		for _, l := range s.Locations {
			if l.Proxy != nil && l.Proxy.TLS != nil && l.Proxy.TLS.CACertificate != nil {
				ca(*l.Proxy.TLS.CACertificate)
			}
		}
	}
	for _, a := range externalAuthsOf(spec) {
		if a.TLS != nil && a.TLS.CACertificate != nil {
			ca(*a.TLS.CACertificate)
		}
	}
	for _, cm := range spec.Content.ConfigMaps {
		w.add(UseContent, "ConfigMap", cm.Name, "")
	}
	return w.refs
}

// tlsSecretsOf are the TLS Secrets of spec's servers and streams, in
// order, as often as they are named.
func tlsSecretsOf(spec *v1beta1.NginxOperatorSpec) []string {
	var out []string
	for _, s := range spec.Config.Servers {
		if s.TLS != nil {
			out = append(out, s.TLS.SecretName)
		}
	}
	for _, s := range spec.Config.Streams {
		if s.TLS != nil {
			out = append(out, s.TLS.SecretName)
		}
	}
	return out
}

// externalAuthsOf are the external authentications spec's servers and
// locations state, but those disabled.
func externalAuthsOf(spec *v1beta1.NginxOperatorSpec) []*v1beta1.ExternalAuth {
	var out []*v1beta1.ExternalAuth
	add := func(a *v1beta1.ExternalAuth) {
		if a != nil && !a.Disabled {
			out = append(out, a)
		}
	}
	for _, s := range spec.Config.Servers {
		add(s.ExternalAuth)
		for _, l := range s.Locations {
			add(l.ExternalAuth)
		}
	}
	return out
}

// referenceWalk collects distinct references.
type referenceWalk struct {
	refs References
}

// add records use of kind/name in the instance's namespace, and that nginx
// reads its key (unless ""), and returns the reference.
func (w *referenceWalk) add(use Use, kind, name, key string) *Reference {
	return w.addIn(use, kind, "", name, key)
}

// addIn is add for an object of namespace ("" for the instance's).
func (w *referenceWalk) addIn(use Use, kind, namespace, name, key string) *Reference {
	i := -1
	for j, ref := range w.refs {
		if ref.Use == use && ref.Kind == kind && ref.Namespace == namespace && ref.Name == name {
			i = j
			break
		}
	}
	if i < 0 {
		w.refs = append(w.refs, Reference{Use: use, Kind: kind, Namespace: namespace, Name: name})
		i = len(w.refs) - 1
	}
	if key != "" && !slices.Contains(w.refs[i].Keys, key) {
		w.refs[i].Keys = append(w.refs[i].Keys, key)
	}
	return &w.refs[i]
}

// backend is a Service nginx sends a proxy location's requests to.
type backend struct {
	// namespace is the Service's when the spec names one, else "".
	namespace, service string
	port               int32
	// weight is its share, 0 when the location has its one Service.
	weight int32
	// clusterIP sends to the Service's own address (useClusterIP), not
	// its endpoints.
	clusterIP bool
	// udp: the Service's port of protocol UDP (a stream's on a UDP port).
	udp bool
}

// backendsOf are the Services nginx sends p's requests to: its one
// Service, or its backends with a weight above 0: 0 sends a Service
// nothing, so it is left out of nginx.conf. (The CRD defaults every weight,
// and is the one source of that default: an unset weight is not restated
// here, and counts as none.)
func backendsOf(p *v1beta1.ProxyLocation) []backend {
	if len(p.Backends) == 0 {
		return []backend{{service: p.Service, port: p.Port, clusterIP: p.UseClusterIP}}
	}
	var out []backend
	for _, b := range p.Backends {
		if weight := ptr.Deref(b.Weight, 0); weight > 0 {
			out = append(out, backend{namespace: b.Namespace, service: b.Service, port: b.Port, weight: weight, clusterIP: b.UseClusterIP})
		}
	}
	return out
}

// streamBackends are the Services a stream relays to, with a weight above
// 0 (as backendsOf), on their UDP ports with udp.
func streamBackends(s v1beta1.Stream, udp bool) []backend {
	var out []backend
	for _, b := range s.Backends {
		if weight := ptr.Deref(b.Weight, 0); weight > 0 {
			out = append(out, backend{namespace: b.Namespace, service: b.Service, port: b.Port, weight: weight, clusterIP: b.UseClusterIP, udp: udp})
		}
	}
	return out
}

// mirroredOf are the Services p's mirrors send copies to.
func mirroredOf(p *v1beta1.ProxyLocation) []backend {
	out := make([]backend, 0, len(p.Mirrors))
	for _, m := range p.Mirrors {
		out = append(out, backend{namespace: m.Namespace, service: m.Service, port: m.Port})
	}
	return out
}

// key is how Options.Services names the Service b sends to.
func (b backend) key() string { return ServiceKey(b.namespace, b.service) }

// ServiceKey is how Options.Services names a proxied Service: by its name
// when the spec names no namespace, else as namespace/name.
func ServiceKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// FileKeys are the keys of ref's object nginx reads as files: a TLS
// Secret's certificate and key, the keys of basic auth and CA references;
// none for what nginx reads no file of (Services, content ConfigMaps,
// which the pods mount themselves).
func (ref Reference) FileKeys() []string {
	switch ref.Use {
	case UseTLS:
		return []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey}
	case UseBasicAuth, UseCA:
		return ref.Keys
	}
	return nil
}

// maxFileName is the longest name of a file: a Secret's key.
const maxFileName = 253

// FileName is the name of the file that holds key of ref's object in
// Paths.Files, and its key in the instance's files Secrets:
// <use>_<name>_<key>, the use being tls, auth, ca-configmap or ca-secret
// (a ConfigMap and a Secret of CA certificates may share a name). Object
// names have no "_", so no two (use, kind, name, key) share one; a name
// longer than a Secret's key can be is cut, and ends with a hash of the
// whole. It depends on nothing else, so a file keeps its name while the
// instance names it.
func FileName(ref Reference, key string) string {
	use := map[Use]string{UseTLS: "tls", UseBasicAuth: "auth", UseCA: "ca-" + strings.ToLower(ref.Kind)}[ref.Use]
	name := use + "_" + ref.Name + "_" + key
	if len(name) <= maxFileName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxFileName-17] + "-" + hex.EncodeToString(sum[:8])
}

// File is where nginx reads key of ref's object under p.
func (p Paths) File(ref Reference, key string) string { return p.Files + "/" + FileName(ref, key) }

// CAFile is where ref's certificates are under p.
func (p Paths) CAFile(ref v1beta1.CACertificateRef) string {
	return p.File(Reference{Use: UseCA, Kind: ref.Kind, Name: ref.Name}, ref.Key)
}

// AuthFile is where the htpasswd file of a's Secret is under p.
func (p Paths) AuthFile(a v1beta1.HTTPBasicAuth) string {
	return p.File(Reference{Use: UseBasicAuth, Kind: "Secret", Name: a.SecretName}, a.Key)
}

// TLSFiles are where the certificate and the key of the TLS Secret
// secretName (a server's or a stream's) are under p.
func (p Paths) TLSFiles(secretName string) (cert, key string) {
	ref := Reference{Use: UseTLS, Kind: "Secret", Name: secretName}
	return p.File(ref, corev1.TLSCertKey), p.File(ref, corev1.TLSPrivateKeyKey)
}
