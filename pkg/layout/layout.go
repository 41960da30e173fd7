// Package layout is the shape of an nginx instance that every part of the
// operator agrees on: the names of its children, its labels, the user nginx
// runs as, the ports and paths inside its pods, and the restricted security
// context of every container the operator builds. It imports only
// pkg/k8sutil: the NginxOperator controller (pkg/nginx) and its renderer
// (pkg/nginx/render), the monitor (pkg/monitor) and the backup builders
// (pkg/backup/jobs) all import it and none of each other for these facts
// (hack/structure checks the layers).
package layout

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// Ports the operator reserves inside every nginx pod: a port in spec.ports
// may not use them (the CRD's rules state the same numbers).
const (
	// HealthPort serves /healthz for the kubelet's probes.
	HealthPort = 18080
	// StubStatusPort serves nginx's stub_status, on loopback only.
	StubStatusPort = 18081
	// ExporterPort is the nginx-prometheus-exporter sidecar's metrics port.
	ExporterPort = 9113
	// ReloaderPort serves the nginx-reloader's metrics and status.
	ReloaderPort = 18082
)

// Annotations the operator writes on an instance's children and pods.
const (
	// ConfigHashAnnotation and FilesHashAnnotation record, on the config
	// Secret, the configuration and the referenced files (certificates,
	// keys, CA certificates, htpasswd files: the files Secrets' content)
	// it was written for; when either changes, the operator sets them on
	// every pod too, which makes the kubelet refresh the pod's Secret
	// volumes at once rather than on its next periodic sync, for the
	// reloader to load them. (Operators before the reloader put them on the
	// pod template, which rolled the pods instead.)
	ConfigHashAnnotation = "nginx.operator.dev/config-hash"
	FilesHashAnnotation  = "nginx.operator.dev/files-hash"
	// TLSHashAnnotation is the nudge of operators before the files
	// Secrets (release 0.3.0 and earlier), which digested the TLS Secrets
	// alone: the operator removes it from the pods it nudges.
	TLSHashAnnotation = "nginx.operator.dev/tls-hash"
	// ForceRedeployAnnotation on the pod template rolls the pods when
	// spec.forceRedeploy changes.
	ForceRedeployAnnotation = "nginx.operator.dev/force-redeploy"
	// PodTemplateAnnotation versions the pod template's own shape (see
	// pkg/nginx's PodTemplateVersion).
	PodTemplateAnnotation = "nginx.operator.dev/pod-template"
	// ServicePortsAnnotation on the instance's Service names the rule its
	// ports follow (pkg/nginx/serviceport). The operator writes it on every
	// Service it applies; one without it was created by an operator of
	// release 0.3.0 or earlier.
	ServicePortsAnnotation = "nginx.operator.dev/service-ports"
)

// NginxContainerName is the name of the nginx container in an instance's
// pods.
const NginxContainerName = "nginx"

// Label values of an instance's children and pods.
const (
	AppName   = "nginx"
	Component = "server"
)

// UID is the unprivileged user of the official nginx image. nginx runs as it,
// the content volume belongs to its group, and the backup agent runs as it
// to read and restore that content as nginx does.
const UID = 101

// Names and paths inside an instance's pods.
const (
	// ContentVolume is the document root's volume, and the name of the
	// StatefulSet's volumeClaimTemplate when the content is persistent.
	ContentVolume = "content"
	// TempMountPath is the writable emptyDir for nginx's pid file and
	// temporary files (the root filesystem is read-only).
	TempMountPath    = "/tmp"
	ContentMountPath = "/usr/share/nginx/html"
	ConfigMountPath  = "/etc/nginx/operator"
	ConfigFile       = "nginx.conf"
	// PushKeyFile is the config Secret's key holding the instance's push
	// key, PushKeyLength hex digits the operator signs the configurations
	// it pushes to the pods' reloaders with.
	PushKeyFile   = "push-key"
	PushKeyLength = 64
	// WorkConfigPath is the working copy of nginx.conf nginx runs from:
	// the reloader copies the mounted one there, or writes the one the
	// operator pushes.
	WorkConfigPath = TempMountPath + "/nginx.conf"
	// RequestLogAddress is the loopback UDP address the reloader counts
	// nginx's requests from (request metrics). Only the pod's own
	// containers reach its loopback; a UDP port takes no TCP port from
	// spec.ports.
	RequestLogAddress = "127.0.0.1:18083"
	// MaxConfigSize is the largest nginx.conf the config Secret carries
	// beside the push key and the revision (reloader.RevisionFile, at most
	// 20 digits): the apiserver refuses a Secret whose keys and values add
	// up to more than 1 MiB.
	MaxConfigSize = 1<<20 - len(ConfigFile) - len(PushKeyFile) - PushKeyLength - len("revision") - 20
	// FilesMountPath holds every file nginx reads of the objects an
	// instance references (TLS certificates and keys, CA certificates,
	// htpasswd files), each under a name of its own (pkg/nginx/render's
	// FileName), in one directory: the projected volume FilesVolume, whose
	// sources are the instance's files Secrets (Names.FilesSecret), every
	// one of them optional. The operator copies the referenced data into
	// those Secrets, so the pod template is the same whatever the instance
	// references, and a new certificate reaches running pods as a new
	// configuration does, without a restart.
	FilesMountPath = "/etc/nginx/files"
	FilesVolume    = "files"
	// FileShards is how many files Secrets an instance has at most, and
	// the projected volume's sources: a Secret carries 1 MiB
	// (MaxFilesSecretSize), so the files of an instance may take up to
	// FileShards MiB.
	FileShards = 4
	// MaxFilesSecretSize is what one files Secret carries at most, its keys
	// counted with its values (the apiserver refuses a Secret above 1 MiB).
	MaxFilesSecretSize = 1 << 20
	// MetricsPortName is the exporter's container and Service port.
	MetricsPortName = "metrics"
	// HealthPortName is the port the kubelet probes.
	HealthPortName = "health"
	// ReloaderPortName is the nginx-reloader's container and Service port:
	// /metrics for Prometheus, /status for the operator.
	ReloaderPortName = "reloader"
	// ReloaderVolume is the emptyDir an init container copies the
	// nginx-reloader binary into, mounted at ReloaderMountPath.
	ReloaderVolume    = "reloader"
	ReloaderMountPath = "/reloader"
	ReloaderBinary    = ReloaderMountPath + "/nginx-reloader"
	// RestoreContainerName is the init container that seeds the content
	// from a backup; the controller finds it by this name.
	RestoreContainerName = "restore"
)

// PreStopDelaySeconds is how long a stopping nginx keeps serving before it
// gets its stop signal, for the endpoints to drop the pod everywhere; the
// pod template's preStop hook waits it, and nginx's
// worker_shutdown_timeout leaves it out of the grace period.
const PreStopDelaySeconds = 5

// Names are the names of one instance's children. They are derived from the
// instance's name only, so several instances in one namespace never collide
// unless their names do. Admission keeps instance names from ending in
// "-pods" (the headless Service's suffix), and no other kind's children end in
// "-pods" or in "-nginx-config", so no two objects of the three kinds
// in a namespace derive the same child name (see the property test in
// pkg/validation).
type Names struct {
	StatefulSet, Service, HeadlessService, ServiceAccount, PodDisruptionBudget, NetworkPolicy string
	// ConfigSecret holds the current nginx.conf; the pods' reloaders load
	// each new content in place. (Not <base>-config: an NginxMonitor's
	// Secret is <name>-scrape-config, so an instance named <name>-scrape
	// would take it.)
	ConfigSecret string
	// ConfigSecretPrefix started the names of the per-configuration Secrets
	// (<prefix><hash>) of operators that rolled the pods for every new
	// configuration; the controller deletes them.
	ConfigSecretPrefix string
}

// ContentClaimName is the persistent content claim of the instance's pod
// ordinal, as the StatefulSet controller names it.
func (n Names) ContentClaimName(ordinal int) string {
	return ContentVolume + "-" + n.StatefulSet + "-" + strconv.Itoa(ordinal)
}

// PodName is the name of the instance's pod ordinal.
func (n Names) PodName(ordinal int) string { return n.StatefulSet + "-" + strconv.Itoa(ordinal) }

// NamesFor derives the children's names. 47 characters leave room for the
// "-<ordinal>" of pod names and the controller-revision-hash label value;
// admission keeps new names within it, older ones are shortened with a hash.
func NamesFor(instance string) Names {
	base := naming.NameWithLimit(47, instance)
	if base[0] >= '0' && base[0] <= '9' {
		// Service names must start with a letter (DNS-1035).
		base = naming.NameWithLimit(47, "nginx", instance)
	}
	return Names{
		StatefulSet:         base,
		Service:             base,
		HeadlessService:     base + "-pods",
		ConfigSecret:        base + "-nginx-config",
		ConfigSecretPrefix:  base + "-config-",
		ServiceAccount:      base,
		PodDisruptionBudget: base,
		NetworkPolicy:       base,
	}
}

// FilesSecret is the name of the instance's files Secret shard (0 to
// FileShards-1): the copies of the files nginx reads of the objects the
// instance references (see FilesMountPath).
// (The StatefulSet's name is the names' base.)
func (n Names) FilesSecret(shard int) string {
	return n.StatefulSet + "-nginx-files-" + strconv.Itoa(shard)
}

// Labels are the labels of the instance's children and pods.
func Labels(instance string) map[string]string {
	return naming.Labels(AppName, instance, Component)
}

// Selector selects the instance's pods, and only them.
func Selector(instance string) map[string]string {
	return naming.SelectorLabels(AppName, instance, Component)
}

// ContentMount is how the nginx container mounts persistent content; the
// restore init container mounts the same volume at the same path, read-write.
func ContentMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: ContentVolume, MountPath: ContentMountPath}
}

// RestrictedContainer is the security context of every container the operator
// builds: it satisfies the restricted Pod Security Standard.
func RestrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Privileged:               ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Reserved reports a port the operator reserves inside every nginx pod.
func Reserved(port int32) bool {
	switch port {
	case HealthPort, StubStatusPort, ExporterPort, ReloaderPort:
		return true
	}
	return false
}
