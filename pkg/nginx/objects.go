package nginx

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// Annotations of the operator. The nginx.operator.dev/ prefix is reserved:
// admission refuses user annotations under it, and the operator's values win
// over spec.pod.annotations anyway.
const (
	// ForceRedeployAnnotation on the pod template rolls the pods when
	// spec.forceRedeploy changes.
	ForceRedeployAnnotation = "nginx.operator.dev/force-redeploy"
	// ConfigHashAnnotation and TLSHashAnnotation record, on the config
	// Secret, the configuration and the TLS Secrets' content it was written
	// for; when either changes, the operator sets them on every pod too,
	// which makes the kubelet refresh the pod's Secret volumes at once
	// rather than on its next periodic sync, for the reloader to load them.
	// (Operators before the reloader put them on the pod template, which
	// rolled the pods instead.)
	ConfigHashAnnotation = "nginx.operator.dev/config-hash"
	TLSHashAnnotation    = "nginx.operator.dev/tls-hash"
	// ServicesHashAnnotation does the same for the proxied Services'
	// addresses (see layout.ServicesFile).
	ServicesHashAnnotation = "nginx.operator.dev/services-hash"
	// PodTemplateAnnotation versions the pod template's own shape: "2"
	// added nginx's termination message and its preStop delay; "3" runs
	// nginx under the nginx-reloader, so a new configuration or certificate
	// is loaded in place. Upgrading from an operator before "3" rolls every
	// instance's pods once.
	PodTemplateAnnotation = "nginx.operator.dev/pod-template"
	// PodTemplateVersion is the current value of PodTemplateAnnotation.
	PodTemplateVersion = "3"
)

// PreStopDelaySeconds is how long a stopping nginx keeps serving before it
// gets its stop signal, for the endpoints to drop the pod everywhere.
const PreStopDelaySeconds = 5

// Names are the names of one instance's children (see pkg/layout).
type Names = layout.Names

// NamesFor derives the names of instance's children (see pkg/layout).
func NamesFor(instance string) Names { return layout.NamesFor(instance) }

// Inputs is everything the builders need besides the instance.
type Inputs struct {
	Config     []byte // rendered nginx.conf
	ConfigHash string
	Image      string // spec.image or the operator's default
	// ExporterImage runs the nginx-prometheus-exporter sidecar of instances
	// with spec.metrics.enabled.
	ExporterImage string
	// ReloaderImage holds the nginx-reloader binary an init container
	// copies into the pod (the operator's own image, --reloader-image).
	ReloaderImage string
	// Restore, when set, is the init container that seeds the content volume
	// (spec.restore) and the volumes it needs besides that one.
	Restore *RestoreInit
	// TLSHash digests the TLS Secrets' content; empty without TLS.
	TLSHash string
	// Services is layout.ServicesFile: a "name address" line per proxied
	// Service (see serviceAddress); empty without proxy locations.
	Services []byte
}

// RestoreInit is an init container plus the extra volumes it mounts.
type RestoreInit struct {
	Container corev1.Container
	Volumes   []corev1.Volume
}

// MetricsPortName is the exporter's container and Service port name.
const MetricsPortName = layout.MetricsPortName

// ReloaderPortName is the nginx-reloader's container port name, and its
// Service port's when metrics are enabled.
const ReloaderPortName = layout.ReloaderPortName

func objectMeta(nginx *v1beta1.NginxOperator, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: nginx.Namespace,
		Labels:    layout.Labels(nginx.Name),
	}
}

func selector(nginx *v1beta1.NginxOperator) map[string]string {
	return layout.Selector(nginx.Name)
}

// ConfigSecret holds nginx.conf. A Secret rather than a ConfigMap because
// configurations may name internal hosts and paths. It is one Secret whose
// content changes: the kubelet updates the pods' volume in place, and each
// pod's reloader checks the new configuration with nginx -t and loads it
// gracefully, or keeps the old one serving and reports why. Its annotations
// say what it was written for (see ConfigHashAnnotation).
func ConfigSecret(nginx *v1beta1.NginxOperator, in Inputs) *corev1.Secret {
	meta := objectMeta(nginx, NamesFor(nginx.Name).ConfigSecret)
	meta.Annotations = syncAnnotations(in)
	data := map[string][]byte{layout.ConfigFile: in.Config}
	if len(in.Services) > 0 {
		data[layout.ServicesFile] = in.Services
	}
	return &corev1.Secret{
		ObjectMeta: meta,
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// syncAnnotationKeys are the annotations syncAnnotations may set.
var syncAnnotationKeys = []string{ConfigHashAnnotation, TLSHashAnnotation, ServicesHashAnnotation}

// syncAnnotations are what the config Secret and, once it changed, every pod
// carry (see ConfigHashAnnotation).
func syncAnnotations(in Inputs) map[string]string {
	a := map[string]string{ConfigHashAnnotation: in.ConfigHash}
	if in.TLSHash != "" {
		a[TLSHashAnnotation] = in.TLSHash
	}
	if len(in.Services) > 0 {
		a[ServicesHashAnnotation] = k8sutil.Hash(in.Services)[:16]
	}
	return a
}

// serviceAddress is what of svc decides where nginx connects once it has
// resolved the Service's name: its ClusterIPs, or an ExternalName's target.
func serviceAddress(svc *corev1.Service) string {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return svc.Spec.ExternalName
	}
	if len(svc.Spec.ClusterIPs) > 0 {
		return strings.Join(svc.Spec.ClusterIPs, ",")
	}
	return svc.Spec.ClusterIP
}

// ServiceAccount of the pods; nginx needs no API access, so no token is mounted.
func ServiceAccount(nginx *v1beta1.NginxOperator) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   objectMeta(nginx, NamesFor(nginx.Name).ServiceAccount),
		AutomountServiceAccountToken: ptr.To(false),
	}
}

func servicePorts(nginx *v1beta1.NginxOperator) []corev1.ServicePort {
	var ports []corev1.ServicePort
	for _, p := range nginx.Spec.Ports {
		ports = append(ports, corev1.ServicePort{
			Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name), Protocol: corev1.ProtocolTCP,
		})
	}
	return ports
}

// Service is what clients use. With spec.metrics.enabled it also exposes
// the exporter's port and the reloader's, the two an NginxMonitor scrapes
// (Prometheus discovers targets through a Service's EndpointSlices). An
// instance that did not ask for metrics exposes neither: the reloader's
// port then stays reachable on the pod network only, where the operator
// reads each pod's /status.
func Service(nginx *v1beta1.NginxOperator) *corev1.Service {
	meta := objectMeta(nginx, NamesFor(nginx.Name).Service)
	meta.Annotations = nginx.Spec.Service.Annotations
	ports := servicePorts(nginx)
	if nginx.Spec.Metrics.Enabled {
		ports = append(ports,
			corev1.ServicePort{
				Name: MetricsPortName, Port: v1beta1.ExporterPort, TargetPort: intstr.FromString(MetricsPortName), Protocol: corev1.ProtocolTCP,
			},
			corev1.ServicePort{
				Name: ReloaderPortName, Port: v1beta1.ReloaderPort, TargetPort: intstr.FromString(ReloaderPortName), Protocol: corev1.ProtocolTCP,
			})
	}
	svc := nginx.Spec.Service
	spec := corev1.ServiceSpec{
		Type: svc.Type, Selector: selector(nginx), Ports: ports,
		ExternalTrafficPolicy:    svc.ExternalTrafficPolicy,
		LoadBalancerSourceRanges: svc.LoadBalancerSourceRanges,
		SessionAffinity:          svc.SessionAffinity,
		IPFamilyPolicy:           svc.IPFamilyPolicy,
		IPFamilies:               svc.IPFamilies,
	}
	if svc.LoadBalancerClass != "" {
		spec.LoadBalancerClass = ptr.To(svc.LoadBalancerClass)
	}
	return &corev1.Service{ObjectMeta: meta, Spec: spec}
}

// ServesIPv6 tells whether the cluster gave svc, the instance's Service, an
// IPv6 address; nginx listens on IPv6 only then (RenderOptions.IPv6).
func ServesIPv6(svc *corev1.Service) bool {
	return slices.Contains(svc.Spec.IPFamilies, corev1.IPv6Protocol)
}

// HeadlessService gives the StatefulSet's pods stable DNS names.
func HeadlessService(nginx *v1beta1.NginxOperator) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(nginx, NamesFor(nginx.Name).HeadlessService),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 selector(nginx),
			Ports:                    servicePorts(nginx),
			PublishNotReadyAddresses: true,
		},
	}
}

// PodDisruptionBudget, or nil when the spec asks for none.
func PodDisruptionBudget(nginx *v1beta1.NginxOperator) *policyv1.PodDisruptionBudget {
	pdb := nginx.Spec.PodDisruptionBudget
	if pdb == nil {
		return nil
	}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(nginx, NamesFor(nginx.Name).PodDisruptionBudget),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selector(nginx)},
			MinAvailable:   pdb.MinAvailable,
			MaxUnavailable: pdb.MaxUnavailable,
		},
	}
}

// StatefulSet runs nginx under the nginx-reloader. The configuration and
// the certificates are mounted Secrets the reloader loads in place when they
// change, so they are not in the pod template: what changes the template
// (image, resources, ports, volumes, pod settings, forceRedeploy) rolls the
// pods, and nothing else does.
func StatefulSet(nginx *v1beta1.NginxOperator, in Inputs) *appsv1.StatefulSet {
	names := NamesFor(nginx.Name)
	spec := nginx.Spec

	// The user's labels and annotations first: the operator's must win (its
	// labels select the pods; its annotations roll them, and admission
	// refuses user keys under nginx.operator.dev/).
	labels := maps.Clone(spec.Pod.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, layout.Labels(nginx.Name))
	annotations := maps.Clone(spec.Pod.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if spec.ForceRedeploy != "" {
		annotations[ForceRedeployAnnotation] = spec.ForceRedeploy
	}
	annotations[PodTemplateAnnotation] = PodTemplateVersion

	containerPorts := []corev1.ContainerPort{
		{Name: layout.HealthPortName, ContainerPort: v1beta1.HealthPort, Protocol: corev1.ProtocolTCP},
		{Name: ReloaderPortName, ContainerPort: v1beta1.ReloaderPort, Protocol: corev1.ProtocolTCP},
	}
	for _, p := range spec.Ports {
		containerPorts = append(containerPorts, corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: corev1.ProtocolTCP})
	}
	probe := func(period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(layout.HealthPortName)}},
			PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: 3,
		}
	}

	volumes, mounts := podVolumes(nginx)
	sts := &appsv1.StatefulSet{
		ObjectMeta: objectMeta(nginx, names.StatefulSet),
		Spec: appsv1.StatefulSetSpec{
			// nil leaves replicas unowned, for an autoscaler to set.
			Replicas:            spec.Replicas,
			ServiceName:         names.HeadlessService,
			Selector:            &metav1.LabelSelector{MatchLabels: selector(nginx)},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: corev1.PodSpec{
					ServiceAccountName:           names.ServiceAccount,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					ImagePullSecrets:             spec.ImagePullSecrets,
					NodeSelector:                 spec.Pod.NodeSelector,
					Tolerations:                  spec.Pod.Tolerations,
					Affinity:                     spec.Pod.Affinity,
					TopologySpreadConstraints:    spec.Pod.TopologySpreadConstraints,
					PriorityClassName:            spec.Pod.PriorityClassName,
					// A stop takes the preStop delay, then the time the
					// requests in flight need (worker_shutdown_timeout).
					TerminationGracePeriodSeconds: ptr.To(spec.Pod.TerminationGracePeriodSeconds),
					InitContainers:                []corev1.Container{reloaderInstaller(in.ReloaderImage)},
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](layout.UID),
						RunAsGroup:     ptr.To[int64](layout.UID),
						FSGroup:        ptr.To[int64](layout.UID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            NginxContainerName,
						Image:           in.Image,
						ImagePullPolicy: spec.ImagePullPolicy,
						// The reloader runs nginx as its child, reloads it when
						// the mounted files change and turns any stop signal
						// into nginx's graceful quit. The image's entrypoint
						// scripts write to /etc/nginx, which is read-only here.
						Command:         reloaderCommand(nginx),
						Ports:           containerPorts,
						ReadinessProbe:  probe(5),
						LivenessProbe:   probe(10),
						Resources:       spec.Resources,
						VolumeMounts:    mounts,
						SecurityContext: layout.RestrictedContainer(),
						// nginx logs to stderr: when it exits with an error,
						// the kubelet keeps its last lines as the termination
						// message, which the status quotes (ConfigRejected)
						// for a pod that cannot start.
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						// A deleted pod leaves the Services' endpoints while the
						// kubelet stops it: nginx keeps serving for a while
						// before its stop signal (SIGQUIT: it closes its
						// listeners, then finishes the requests in flight), so
						// that kube-proxy stops sending it new connections
						// first. Without it, a rollout refuses connections.
						// (The reloader turns the image's stop signal,
						// whichever it is, into SIGQUIT.)
						Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: PreStopDelaySeconds}}},
					}},
					Volumes: volumes,
				},
			},
		},
	}
	pod := &sts.Spec.Template.Spec
	if spec.Metrics.Enabled {
		pod.Containers = append(pod.Containers, exporterContainer(in.ExporterImage, spec.ImagePullPolicy))
	}
	if in.Restore != nil && spec.Content.VolumeClaimTemplate != nil {
		// Init containers finish before nginx starts, so it never serves a
		// half-restored document root.
		pod.InitContainers = append(pod.InitContainers, in.Restore.Container)
		pod.Volumes = append(pod.Volumes, in.Restore.Volumes...)
	}
	if vct := spec.Content.VolumeClaimTemplate; vct != nil {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: layout.ContentVolume, Labels: layout.Labels(nginx.Name)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      vct.AccessModes,
				StorageClassName: vct.StorageClassName,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: vct.Size}},
			},
		}}
	}
	return sts
}

// configPath is where nginx and the reloader find nginx.conf.
const configPath = layout.ConfigMountPath + "/" + layout.ConfigFile

// reloaderCommand runs nginx under the reloader, which watches the files
// nginx reads only when it loads a configuration: nginx.conf, the TLS
// certificates and the CA certificates. (Basic-auth files need no reload:
// nginx reads them on every request.)
func reloaderCommand(nginx *v1beta1.NginxOperator) []string {
	cmd := []string{layout.ReloaderBinary,
		"-listen-address=:" + strconv.Itoa(v1beta1.ReloaderPort),
		"-config=" + configPath,
		"-watch=" + layout.ConfigMountPath,
	}
	if len(TLSSecrets(&nginx.Spec)) > 0 {
		cmd = append(cmd, "-watch="+layout.TLSMountPath)
	}
	if len(CACertificates(&nginx.Spec)) > 0 {
		cmd = append(cmd, "-watch="+layout.CAMountPath)
	}
	return append(cmd, "--", "nginx", "-c", configPath, "-g", "daemon off;")
}

// reloaderInstaller is the init container that copies the nginx-reloader
// from the operator's image into the pod, for any nginx image to run it.
func reloaderInstaller(image string) corev1.Container {
	return corev1.Container{
		Name:    "install-reloader",
		Image:   image,
		Command: []string{"/nginx-reloader", "-install=" + layout.ReloaderBinary},
		// The image's working directory is its own user's home, which
		// the pod's user may not enter.
		WorkingDir: "/",
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
		VolumeMounts:             []corev1.VolumeMount{{Name: layout.ReloaderVolume, MountPath: layout.ReloaderMountPath}},
		SecurityContext:          layout.RestrictedContainer(),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// exporterContainer is the nginx-prometheus-exporter sidecar: it reads
// stub_status on the pod's loopback and serves Prometheus metrics on the
// port named "metrics".
func exporterContainer(image string, pullPolicy corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name:            "exporter",
		Image:           image,
		ImagePullPolicy: pullPolicy,
		Args: []string{
			"--nginx.scrape-uri=" + StubStatusURI(v1beta1.StubStatusPort),
			"--web.listen-address=:" + strconv.Itoa(v1beta1.ExporterPort),
		},
		Ports: []corev1.ContainerPort{{Name: MetricsPortName, ContainerPort: v1beta1.ExporterPort, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		SecurityContext: layout.RestrictedContainer(),
	}
}

// StubStatusURI is where the exporter reads nginx's stub_status.
func StubStatusURI(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/stub_status"
}

// podVolumes: the config Secret, the reloader's binary, writable emptyDirs
// for the read-only root filesystem, the content and one volume per TLS
// Secret.
func podVolumes(nginx *v1beta1.NginxOperator) ([]corev1.Volume, []corev1.VolumeMount) {
	volumes := []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: NamesFor(nginx.Name).ConfigSecret}}},
		{Name: layout.ReloaderVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("256Mi"))}}},
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: layout.ConfigMountPath, ReadOnly: true},
		{Name: layout.ReloaderVolume, MountPath: layout.ReloaderMountPath, ReadOnly: true},
		{Name: "tmp", MountPath: "/tmp"},
		{Name: "cache", MountPath: "/var/cache/nginx"},
	}

	content := nginx.Spec.Content
	switch {
	case content.VolumeClaimTemplate != nil:
		// The volume comes from the StatefulSet's volumeClaimTemplates.
	case len(content.ConfigMaps) > 0:
		var sources []corev1.VolumeProjection
		for _, cm := range content.ConfigMaps {
			sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
			}})
		}
		volumes = append(volumes, corev1.Volume{Name: layout.ContentVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}})
	default:
		volumes = append(volumes, corev1.Volume{Name: layout.ContentVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	mounts = append(mounts, corev1.VolumeMount{Name: layout.ContentVolume, MountPath: layout.ContentMountPath, ReadOnly: content.VolumeClaimTemplate == nil})

	for _, secret := range TLSSecrets(&nginx.Spec) {
		name := k8sutil.NameWithLimit(63, "tls", secret)
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: layout.TLSMountPath + "/" + secret, ReadOnly: true})
	}
	for _, secret := range AuthSecrets(&nginx.Spec) {
		name := k8sutil.NameWithLimit(63, "auth", secret)
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: layout.AuthMountPath + "/" + secret, ReadOnly: true})
	}
	for _, ref := range CACertificates(&nginx.Spec) {
		dir := caDir(ref)
		name := k8sutil.NameWithLimit(63, "ca", strings.ReplaceAll(dir, "/", "-"))
		source := corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}}}
		if ref.Kind == "Secret" {
			source = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ref.Name}}
		}
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: source})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: layout.CAMountPath + "/" + dir, ReadOnly: true})
	}
	return volumes, mounts
}

// CACertificates are the distinct ConfigMaps and Secrets holding the CA
// certificates that proxy locations verify their Services with and TLS
// servers verify clients with, in order of first use. They are mounted
// whole: references may read different keys.
func CACertificates(spec *v1beta1.NginxOperatorSpec) []v1beta1.CACertificateRef {
	seen := map[string]bool{}
	var out []v1beta1.CACertificateRef
	add := func(ref v1beta1.CACertificateRef) {
		if dir := caDir(ref); !seen[dir] {
			seen[dir] = true
			out = append(out, ref)
		}
	}
	for _, s := range spec.Config.Servers {
		if s.TLS != nil && s.TLS.ClientCertificates != nil {
			add(s.TLS.ClientCertificates.CACertificate)
		}
		for _, l := range s.Locations {
			if l.Proxy != nil && l.Proxy.TLS != nil && l.Proxy.TLS.CACertificate != nil {
				add(*l.Proxy.TLS.CACertificate)
			}
		}
	}
	return out
}

// BasicAuths are the basicAuth settings of the servers and locations that
// ask for a password (not the disabled ones), in order.
func BasicAuths(spec *v1beta1.NginxOperatorSpec) []v1beta1.HTTPBasicAuth {
	var out []v1beta1.HTTPBasicAuth
	add := func(a *v1beta1.HTTPBasicAuth) {
		if a != nil && !a.Disabled {
			out = append(out, *a)
		}
	}
	for _, s := range spec.Config.Servers {
		add(s.BasicAuth)
		for _, l := range s.Locations {
			add(l.BasicAuth)
		}
	}
	return out
}

// AuthSecrets are the distinct Secrets of BasicAuths, in order of first use.
func AuthSecrets(spec *v1beta1.NginxOperatorSpec) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range BasicAuths(spec) {
		if !seen[a.SecretName] {
			seen[a.SecretName] = true
			out = append(out, a.SecretName)
		}
	}
	return out
}

// TLSSecrets are the distinct TLS Secrets the servers use, in order of first use.
func TLSSecrets(spec *v1beta1.NginxOperatorSpec) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range spec.Config.Servers {
		if s.TLS != nil && !seen[s.TLS.SecretName] {
			seen[s.TLS.SecretName] = true
			out = append(out, s.TLS.SecretName)
		}
	}
	return out
}
