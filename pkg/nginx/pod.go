package nginx

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// StatefulSet runs nginx under the nginx-reloader. The configuration and
// the files of the references (certificates, keys, CA certificates,
// htpasswd files) are the instance's own Secrets, mounted whatever they
// hold, which the reloader loads in place when they change, so they are
// not in the pod template: what changes the template (image, resources,
// ports, content volumes, pod settings, forceRedeploy) rolls the pods, and
// nothing else does.
func StatefulSet(nginx *v1beta1.NginxOperator, in Materials) *appsv1.StatefulSet {
	names := layout.NamesFor(nginx.Name)
	return &appsv1.StatefulSet{
		ObjectMeta: objectMeta(nginx, names.StatefulSet),
		Spec: appsv1.StatefulSetSpec{
			// nil leaves replicas unowned, for an autoscaler to set.
			Replicas:             nginx.Spec.Replicas,
			ServiceName:          names.HeadlessService,
			Selector:             &metav1.LabelSelector{MatchLabels: selector(nginx)},
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template:             podTemplate(nginx, in),
			VolumeClaimTemplates: contentClaimTemplates(nginx),
		},
	}
}

// podTemplate is the pods' labels, annotations and spec.
func podTemplate(nginx *v1beta1.NginxOperator, in Materials) corev1.PodTemplateSpec {
	spec := nginx.Spec
	// The user's labels and annotations first, the pods' own over every
	// child's: the operator's must win (its labels select the pods; its
	// annotations roll them, and admission refuses user keys under
	// nginx.operator.dev/).
	labels := merged(spec.ChildMetadata.Labels, spec.Pod.Labels, layout.Labels(nginx.Name))
	annotations := merged(spec.ChildMetadata.Annotations, spec.Pod.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if spec.ForceRedeploy != "" {
		annotations[layout.ForceRedeployAnnotation] = spec.ForceRedeploy
	}
	annotations[layout.PodTemplateAnnotation] = PodTemplateVersion

	volumes, mounts := podVolumes(nginx)
	pod := corev1.PodSpec{
		ServiceAccountName:           layout.NamesFor(nginx.Name).ServiceAccount,
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		ImagePullSecrets:             spec.ImagePullSecrets,
		NodeSelector:                 spec.Pod.NodeSelector,
		Tolerations:                  spec.Pod.Tolerations,
		Affinity:                     spec.Pod.Affinity,
		TopologySpreadConstraints:    spec.Pod.TopologySpreadConstraints,
		PriorityClassName:            spec.Pod.PriorityClassName,
		// A stop takes the preStop delay, then the time the requests in
		// flight need (worker_shutdown_timeout).
		TerminationGracePeriodSeconds: ptr.To(spec.Pod.TerminationGracePeriodSeconds),
		InitContainers:                []corev1.Container{reloaderInstaller(in.ReloaderImage)},
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](layout.UID),
			RunAsGroup:     ptr.To[int64](layout.UID),
			FSGroup:        ptr.To[int64](layout.UID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{nginxContainer(nginx, in, mounts)},
		Volumes:    volumes,
	}
	if spec.Metrics.Enabled {
		pod.Containers = append(pod.Containers, exporterContainer(in.ExporterImage, spec.ImagePullPolicy))
	}
	if in.Restore != nil && spec.Content.VolumeClaimTemplate != nil {
		// Init containers finish before nginx starts, so it never serves a
		// half-restored document root.
		pod.InitContainers = append(pod.InitContainers, in.Restore.Container)
		pod.Volumes = append(pod.Volumes, in.Restore.Volumes...)
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: pod}
}

// nginxContainer runs nginx under the reloader, which runs nginx as its
// child, reloads it when the mounted files change and turns any stop
// signal into nginx's graceful quit. (The image's entrypoint scripts write
// to /etc/nginx, which is read-only here.)
func nginxContainer(nginx *v1beta1.NginxOperator, in Materials, mounts []corev1.VolumeMount) corev1.Container {
	spec := nginx.Spec
	ports := []corev1.ContainerPort{
		{Name: layout.HealthPortName, ContainerPort: layout.HealthPort, Protocol: corev1.ProtocolTCP},
		{Name: layout.ReloaderPortName, ContainerPort: layout.ReloaderPort, Protocol: corev1.ProtocolTCP},
	}
	for _, p := range spec.Ports {
		ports = append(ports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: protocolOf(p)})
	}
	probe := func(period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(layout.HealthPortName)}},
			PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: 3,
		}
	}
	return corev1.Container{
		Name:            layout.NginxContainerName,
		Image:           in.Image,
		ImagePullPolicy: spec.ImagePullPolicy,
		Command:         reloaderCommand(),
		Ports:           ports,
		ReadinessProbe:  probe(5),
		LivenessProbe:   probe(10),
		Resources:       spec.Resources,
		VolumeMounts:    mounts,
		SecurityContext: layout.RestrictedContainer(),
		// nginx logs to stderr: when it exits with an error, the kubelet
		// keeps its last lines as the termination message, which the status
		// quotes (ConfigRejected) for a pod that cannot start.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		// A deleted pod leaves the Services' endpoints while the kubelet
		// stops it: nginx keeps serving for a while before its stop signal
		// (SIGQUIT: it closes its listeners, then finishes the requests in
		// flight), so that kube-proxy stops sending it new connections
		// first. Without it, a rollout refuses connections. (The reloader
		// turns the image's stop signal, whichever it is, into SIGQUIT.)
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: layout.PreStopDelaySeconds}}},
	}
}

// contentClaimTemplates are the persistent content's claims, none without.
func contentClaimTemplates(nginx *v1beta1.NginxOperator) []corev1.PersistentVolumeClaim {
	vct := nginx.Spec.Content.VolumeClaimTemplate
	if vct == nil {
		return nil
	}
	return []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: layout.ContentVolume, Labels: layout.Labels(nginx.Name)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      vct.AccessModes,
			StorageClassName: vct.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: vct.Size}},
		},
	}}
}

// configPath is where nginx and the reloader find nginx.conf.
const configPath = layout.ConfigMountPath + "/" + layout.ConfigFile

// reloaderCommand runs nginx under the reloader, which watches what nginx
// reads when it loads a configuration: nginx.conf and the files of its
// manifest in the files volume, which it waits for before it loads a
// configuration that names them (see pkg/reloader's files.go). nginx runs
// from the reloader's working copy of nginx.conf, which the operator's
// pushes replace before the kubelet updates the mounted one (see
// pkg/reloader's push.go). The command is the same for every instance.
func reloaderCommand() []string {
	return []string{layout.ReloaderBinary,
		"-listen-address=:" + strconv.Itoa(layout.ReloaderPort),
		"-config=" + configPath,
		"-work-config=" + layout.WorkConfigPath,
		"-push-key=" + layout.ConfigMountPath + "/" + layout.PushKeyFile,
		"-watch=" + layout.ConfigMountPath,
		"-files=" + layout.FilesMountPath,
		// Always bound: turning request metrics on or off changes
		// nginx.conf only, which a push replaces in place.
		"-request-log=" + layout.RequestLogAddress,
		"--", "nginx", "-c", layout.WorkConfigPath, "-g", "daemon off;"}
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
			"--nginx.scrape-uri=" + StubStatusURI(layout.StubStatusPort),
			"--web.listen-address=:" + strconv.Itoa(layout.ExporterPort),
		},
		Ports: []corev1.ContainerPort{{Name: layout.MetricsPortName, ContainerPort: layout.ExporterPort, Protocol: corev1.ProtocolTCP}},
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
// for the read-only root filesystem, the content, and the files of the
// references (the files Secrets, see filesVolume), where the renderer
// points nginx (render.Paths.Files).
func podVolumes(nginx *v1beta1.NginxOperator) ([]corev1.Volume, []corev1.VolumeMount) {
	volumes := []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: layout.NamesFor(nginx.Name).ConfigSecret}}},
		{Name: layout.ReloaderVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("256Mi"))}}},
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: layout.ConfigMountPath, ReadOnly: true},
		{Name: layout.ReloaderVolume, MountPath: layout.ReloaderMountPath, ReadOnly: true},
		{Name: "tmp", MountPath: layout.TempMountPath},
		{Name: "cache", MountPath: "/var/cache/nginx"},
	}
	content := nginx.Spec.Content
	if v, ok := contentVolume(content); ok {
		volumes = append(volumes, v)
	}
	mounts = append(mounts, corev1.VolumeMount{Name: layout.ContentVolume, MountPath: layout.ContentMountPath, ReadOnly: content.VolumeClaimTemplate == nil})
	volumes = append(volumes, filesVolume(nginx))
	mounts = append(mounts, corev1.VolumeMount{Name: layout.FilesVolume, MountPath: layout.FilesMountPath, ReadOnly: true})
	return volumes, mounts
}

// contentVolume is the document root's volume; none (false) when it comes
// from the StatefulSet's volumeClaimTemplates.
func contentVolume(content v1beta1.Content) (corev1.Volume, bool) {
	switch {
	case content.VolumeClaimTemplate != nil:
		return corev1.Volume{}, false
	case len(content.ConfigMaps) > 0:
		var sources []corev1.VolumeProjection
		for _, cm := range content.ConfigMaps {
			sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
			}})
		}
		return corev1.Volume{Name: layout.ContentVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}}, true
	default:
		return corev1.Volume{Name: layout.ContentVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, true
	}
}
