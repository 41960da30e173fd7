// Package jobs builds, in memory, the Job (one-shot) and CronJob (scheduled)
// that run the backup agent (`operator backup`) for an NginxBackup. The
// builders are pure: the controller resolves the instance and images, calls
// them, sets the owner reference and applies the result through pkg/k8sutil.
//
// The agent's pod passes the restricted Pod Security Standard and mounts:
//
//   - the instance's config Secret (nginx.conf) and its content ConfigMaps,
//     projected read-only into --config-dir (include.config);
//   - the content volume of the instance's pod 0, read-only, as --content-dir
//     (include.content, instances with a volumeClaimTemplate only), with a pod
//     affinity to that pod so it lands on the node the volume is attached to;
//   - the destination PVC (pvc destination), or S3 credentials from the
//     referenced Secret as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY env;
//   - an emptyDir as TMPDIR (the root filesystem is read-only);
//   - the instance's spec, when given, through a downward API file of a pod
//     annotation (--spec-file), so it travels with the Job and not in its args.
//
// The agent prints its result as one JSON line and writes it to
// /dev/termination-log; on failure the container's last log lines become the
// termination message (FallbackToLogsOnError), so the controller can report
// the reason from the pod status without reading logs.
package jobs

import (
	"path"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// Label values of the backup's children.
const (
	AppName   = "nginx-backup"
	Component = "backup"
	// ContainerName is the agent's container; the controller reads its
	// termination message.
	ContainerName = "agent"
	// SpecAnnotation carries the instance's spec (JSON) on the pod, read by the
	// agent through a downward API volume.
	SpecAnnotation = "nginx.operator.dev/instance-spec"
	// PodNameLabel is the label the StatefulSet controller puts on its pods.
	PodNameLabel = "statefulset.kubernetes.io/pod-name"
)

// Limits on names: a Job's name becomes the job-name label value (≤ 63) and
// the CronJob controller appends "-<11 digits>" to a CronJob's name.
const (
	maxJobNameLength     = 63
	maxCronJobNameLength = 52
)

// Paths inside the agent's pod.
const (
	mountRoot       = "/var/run/nginx-backup"
	configMountPath = mountRoot + "/config"
	contentPath     = mountRoot + "/content"
	destinationPath = mountRoot + "/destination"
	podInfoPath     = mountRoot + "/podinfo"
	specFileName    = "instance-spec.json"
	tmpPath         = "/tmp"
)

// Volume names.
const (
	configVolume      = "config"
	contentVolume     = "content"
	destinationVolume = "destination"
	podInfoVolume     = "podinfo"
	tmpVolume         = "tmp"
)

// Credential keys the credentials Secret must hold (and the env the agent reads).
const (
	AccessKeyIDKey     = "AWS_ACCESS_KEY_ID"
	SecretAccessKeyKey = "AWS_SECRET_ACCESS_KEY"
	SessionTokenKey    = "AWS_SESSION_TOKEN"
)

// Facts is everything the builders need besides the NginxBackup.
type Facts struct {
	// Instance is the NginxOperator named by spec.instance; nil when unknown,
	// in which case no content is backed up.
	Instance *v1beta1.NginxOperator
	// AgentImage runs the agent (the operator's image, --agent-image).
	AgentImage      string
	ImagePullPolicy corev1.PullPolicy
	// InstanceImage is the instance's nginx image, recorded in the manifest.
	InstanceImage string
	// InstanceSpec is the instance's spec as JSON, recorded in the manifest;
	// empty records none.
	InstanceSpec []byte
	// ConfigMapKeys are the keys of the instance's content ConfigMaps
	// (spec.content.configMaps) by name, as the controller read them; each is
	// backed up under configmaps/<name>/<key> of the configuration. A
	// ConfigMap without an entry here is not backed up.
	ConfigMapKeys map[string][]string
	// OperatorVersion is recorded in the manifest; empty: the agent's own.
	OperatorVersion string
	// Resources of the agent container; empty: DefaultResources.
	Resources corev1.ResourceRequirements
}

// DefaultResources of the agent: it streams, so it needs little memory (one
// 16 MiB multipart buffer for S3).
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
}

// Labels of a backup's Jobs, CronJob and pods. A label value is at most 63
// characters, so a longer backup name is shortened (with a hash).
func Labels(backup *v1beta1.NginxBackup) map[string]string {
	return naming.Labels(AppName, naming.NameWithLimit(63, backup.Name), Component)
}

// JobName is the one-shot Job's name.
func JobName(backup *v1beta1.NginxBackup) string {
	return naming.NameWithLimit(maxJobNameLength, backup.Name, "backup")
}

// CronJobName is the scheduled backup's CronJob name.
func CronJobName(backup *v1beta1.NginxBackup) string {
	return naming.NameWithLimit(maxCronJobNameLength, backup.Name, "backup")
}

// ContentClaimName is the PVC of the instance's pod 0, the one backed up.
func ContentClaimName(instance string) string {
	return layout.NamesFor(instance).ContentClaimName(0)
}

// IncludesConfig reports whether runs back up the configuration. backup
// carries the CRD's defaults (validation.NginxBackup), as every builder input.
func IncludesConfig(backup *v1beta1.NginxBackup) bool {
	return ptr.Deref(backup.Spec.Include.Config, false)
}

// IncludesContent reports whether runs back up the content volume: asked for
// (default true) and the instance has persistent content.
func IncludesContent(backup *v1beta1.NginxBackup, instance *v1beta1.NginxOperator) bool {
	return ptr.Deref(backup.Spec.Include.Content, false) && instance != nil &&
		instance.Spec.Content.VolumeClaimTemplate != nil
}

// Job is the one-shot backup run of an NginxBackup without a schedule.
func Job(backup *v1beta1.NginxBackup, in Facts) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(backup), Namespace: backup.Namespace, Labels: Labels(backup)},
		Spec:       jobSpec(backup, in),
	}
}

// CronJob runs the backup on spec.schedule. Runs never overlap (Forbid), a
// run that could not start within startingDeadlineSeconds is skipped rather
// than started late, and three finished Jobs of each outcome are kept so
// their pods' termination messages and logs can be read.
func CronJob(backup *v1beta1.NginxBackup, in Facts) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: CronJobName(backup), Namespace: backup.Namespace, Labels: Labels(backup)},
		Spec: batchv1.CronJobSpec{
			Schedule:                   backup.Spec.Schedule,
			Suspend:                    ptr.To(backup.Spec.Suspend),
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			StartingDeadlineSeconds:    ptr.To[int64](StartingDeadlineSeconds),
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](3),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(backup)},
				Spec:       jobSpec(backup, in),
			},
		},
	}
}

// StartingDeadlineSeconds: a scheduled run that could not start within this
// long (operator or cluster down) is skipped; the next one runs on time.
const StartingDeadlineSeconds = 300

// BackoffLimit is how often a failed run is retried before the Job fails.
const BackoffLimit = 2

func jobSpec(backup *v1beta1.NginxBackup, in Facts) batchv1.JobSpec {
	return batchv1.JobSpec{
		BackoffLimit: ptr.To[int32](BackoffLimit),
		Template:     podTemplate(backup, in),
	}
}

// podTemplate is the backup agent's pod: what it reads and where it writes
// (backupAccess), and where it may run (contentPlacement).
func podTemplate(backup *v1beta1.NginxBackup, in Facts) corev1.PodTemplateSpec {
	access := backupAccess(backup, in)
	meta := metav1.ObjectMeta{Labels: Labels(backup)}
	if len(in.InstanceSpec) > 0 {
		// The downward API volume of specFileAccess reads the spec from here.
		meta.Annotations = map[string]string{SpecAnnotation: string(in.InstanceSpec)}
	}
	affinity, tolerations := contentPlacement(backup, in)
	return corev1.PodTemplateSpec{
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks:           ptr.To(false),
			Affinity:                     affinity,
			Tolerations:                  tolerations,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true),
				RunAsUser:    ptr.To[int64](layout.UID),
				RunAsGroup:   ptr.To[int64](layout.UID),
				// A fresh destination PVC is root's; the group makes it writable.
				// OnRootMismatch skips the recursive chown of volumes (the content)
				// that already belong to it.
				FSGroup:             ptr.To[int64](layout.UID),
				FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
				SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{agentContainer(ContainerName, in, access.args, access.env, access.mounts)},
			Volumes:    access.volumes,
		},
	}
}

// backupAccess is everything the backup agent is given: its flags, its
// environment, and the volumes of its scratch space, the destination, the
// configuration, the content and the instance's spec, each only when the
// backup includes it.
func backupAccess(backup *v1beta1.NginxBackup, in Facts) agentAccess {
	instance := backup.Spec.Instance
	a := agentAccess{
		args:    []string{"backup", "--namespace=" + backup.Namespace, "--instance=" + instance},
		env:     []corev1.EnvVar{{Name: "TMPDIR", Value: tmpPath}},
		volumes: []corev1.Volume{{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		mounts:  []corev1.VolumeMount{{Name: tmpVolume, MountPath: tmpPath}},
	}
	a.add(reachDestination(backup.Spec.Destination, destinationVolume, destinationPath, false))
	if IncludesConfig(backup) {
		a.add(configAccess(instance, in))
	}
	if IncludesContent(backup, in.Instance) {
		a.add(contentAccess(instance))
	}
	if in.InstanceImage != "" {
		a.args = append(a.args, "--image="+in.InstanceImage)
	}
	if len(in.InstanceSpec) > 0 {
		a.add(specFileAccess())
	}
	if in.OperatorVersion != "" {
		a.args = append(a.args, "--operator-version="+in.OperatorVersion)
	}
	if keep := backup.Spec.Retention.KeepLast; keep > 0 {
		a.args = append(a.args, "--keep-last="+strconv.Itoa(int(keep)))
	}
	return a
}

// configAccess mounts the projected configuration (configSources) read-only.
func configAccess(instance string, in Facts) agentAccess {
	return agentAccess{
		args: []string{"--config-dir=" + configMountPath},
		volumes: []corev1.Volume{{Name: configVolume, VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: configSources(instance, in)},
		}}},
		mounts: []corev1.VolumeMount{{Name: configVolume, MountPath: configMountPath, ReadOnly: true}},
	}
}

// contentAccess mounts pod 0's content claim read-only: the backup copies
// what the first replica serves.
func contentAccess(instance string) agentAccess {
	return agentAccess{
		args: []string{"--content-dir=" + contentPath},
		volumes: []corev1.Volume{{Name: contentVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: ContentClaimName(instance), ReadOnly: true},
		}}},
		mounts: []corev1.VolumeMount{{Name: contentVolume, MountPath: contentPath, ReadOnly: true}},
	}
}

// specFileAccess hands the agent the instance's spec as a downward API file
// of the pod's SpecAnnotation, so the spec travels with the Job and not in
// its args.
func specFileAccess() agentAccess {
	return agentAccess{
		args: []string{"--spec-file=" + podInfoPath + "/" + specFileName},
		volumes: []corev1.Volume{{Name: podInfoVolume, VolumeSource: corev1.VolumeSource{
			DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     specFileName,
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + SpecAnnotation + "']"},
			}}},
		}}},
		mounts: []corev1.VolumeMount{{Name: podInfoVolume, MountPath: podInfoPath, ReadOnly: true}},
	}
}

// contentPlacement puts a run that mounts a node-bound content volume on pod
// 0's node, tolerating the taints the instance's pods tolerate there; other
// runs go wherever the scheduler likes.
func contentPlacement(backup *v1beta1.NginxBackup, in Facts) (*corev1.Affinity, []corev1.Toleration) {
	if !IncludesContent(backup, in.Instance) {
		return nil, nil
	}
	if !needsColocation(in.Instance.Spec.Content.VolumeClaimTemplate.AccessModes) || !runsPodZero(in.Instance) {
		return nil, nil
	}
	return podZeroAffinity(backup.Spec.Instance), in.Instance.Spec.Pod.Tolerations
}

// configSources project the configuration into one directory: the rendered
// nginx.conf (the config Secret's only key) at its root and each content
// ConfigMap's keys under configmaps/<name>/. The ConfigMaps are optional so a
// key removed since the controller listed it cannot keep the pod from
// starting.
func configSources(instance string, in Facts) []corev1.VolumeProjection {
	if in.Instance == nil {
		return nil
	}
	sources := []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: layout.NamesFor(instance).ConfigSecret},
	}}}
	for _, cm := range in.Instance.Spec.Content.ConfigMaps {
		keys := in.ConfigMapKeys[cm.Name]
		if len(keys) == 0 {
			continue
		}
		items := make([]corev1.KeyToPath, 0, len(keys))
		for _, k := range slices.Sorted(slices.Values(keys)) {
			items = append(items, corev1.KeyToPath{Key: k, Path: "configmaps/" + cm.Name + "/" + k})
		}
		sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Items: items, Optional: ptr.To(true),
		}})
	}
	return sources
}

// cleanPrefix makes a destination path a storage key prefix: no leading or
// trailing slash, no empty or "." segments ("" for the root).
func cleanPrefix(p string) string {
	return strings.Trim(path.Clean("/"+p), "/")
}

// agentAccess is what the agent is given to reach one thing it works on
// (a destination, the configuration, the content): flags, environment (S3
// credentials travel there, never in flags), volumes and their mounts.
type agentAccess struct {
	args    []string
	env     []corev1.EnvVar
	volumes []corev1.Volume
	mounts  []corev1.VolumeMount
}

// add appends o's flags, environment, volumes and mounts after a's, in that
// order, so the agent's command line reads in the order access was added.
func (a *agentAccess) add(o agentAccess) {
	a.args = append(a.args, o.args...)
	a.env = append(a.env, o.env...)
	a.volumes = append(a.volumes, o.volumes...)
	a.mounts = append(a.mounts, o.mounts...)
}

// reachDestination mounts a pvc destination as volume at path (read-only for
// restores) or addresses an S3 one.
func reachDestination(dest v1beta1.Destination, volume, path string, readOnly bool) agentAccess {
	var d agentAccess
	switch {
	case dest.PVC != nil:
		d.args = []string{"--pvc-path=" + path}
		if p := cleanPrefix(dest.PVC.Path); p != "" {
			d.args = append(d.args, "--prefix="+p)
		}
		d.volumes = []corev1.Volume{{Name: volume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: dest.PVC.ClaimName, ReadOnly: readOnly},
		}}}
		d.mounts = []corev1.VolumeMount{{Name: volume, MountPath: path, ReadOnly: readOnly}}
	case dest.S3 != nil:
		d.args, d.env = s3Args(dest.S3), s3Env(dest.S3)
	}
	return d
}

// s3Args address an S3 destination (credentials travel in env, never args).
func s3Args(s3 *v1beta1.S3Destination) []string {
	args := []string{"--s3-endpoint=" + s3.Endpoint, "--s3-bucket=" + s3.Bucket}
	if s3.Region != "" {
		args = append(args, "--s3-region="+s3.Region)
	}
	if s3.Insecure {
		args = append(args, "--s3-insecure")
	}
	if p := cleanPrefix(s3.Prefix); p != "" {
		args = append(args, "--prefix="+p)
	}
	return args
}

// s3Env takes the credentials from the referenced Secret.
func s3Env(s3 *v1beta1.S3Destination) []corev1.EnvVar {
	return []corev1.EnvVar{
		secretEnv(AccessKeyIDKey, s3.CredentialsSecret, false),
		secretEnv(SecretAccessKeyKey, s3.CredentialsSecret, false),
		secretEnv(SessionTokenKey, s3.CredentialsSecret, true),
	}
}

func secretEnv(key, secret string, optional bool) corev1.EnvVar {
	ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}
	if optional {
		ref.Optional = ptr.To(true)
	}
	return corev1.EnvVar{Name: key, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}}
}

// needsColocation reports whether the content volume can only be mounted on
// the node it is attached to: ReadWriteOnce (the CRD's default) or
// ReadWriteOncePod. A ReadWriteOncePod volume cannot be mounted by a second
// pod at all while pod 0 runs (see SharesContent).
func needsColocation(modes []corev1.PersistentVolumeAccessMode) bool {
	for _, m := range modes {
		if m == corev1.ReadWriteOnce || m == corev1.ReadWriteOncePod {
			return true
		}
	}
	return false
}

// runsPodZero: the instance is not scaled to zero, so pod 0 holds the
// content volume on its node. Scaled to zero, the volume is attached nowhere
// and the run may go wherever the volume can be mounted.
func runsPodZero(instance *v1beta1.NginxOperator) bool {
	return instance.Spec.Replicas == nil || *instance.Spec.Replicas > 0
}

// SharesContent reports whether a backup pod can mount the instance's content
// volume while nginx runs: not when every access mode is ReadWriteOncePod.
func SharesContent(instance *v1beta1.NginxOperator) bool {
	vct := instance.Spec.Content.VolumeClaimTemplate
	if vct == nil {
		return true
	}
	for _, m := range vct.AccessModes {
		if m != corev1.ReadWriteOncePod {
			return true
		}
	}
	return !runsPodZero(instance)
}

// podZeroAffinity schedules the run on the node of the instance's pod 0,
// where its ReadWriteOnce content volume is attached.
func podZeroAffinity(instance string) *corev1.Affinity {
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				PodNameLabel: layout.NamesFor(instance).PodName(0),
			}},
			TopologyKey: corev1.LabelHostname,
		}},
	}}
}

// agentContainer runs the agent with args: the backup Job's container and the
// restore init container differ only in name, arguments, environment and mounts.
// A failed run's last log lines become its termination message, the reason
// the controller reports.
func agentContainer(name string, in Facts, args []string, env []corev1.EnvVar, mounts []corev1.VolumeMount) corev1.Container {
	resources := in.Resources
	if resources.Requests == nil && resources.Limits == nil {
		resources = DefaultResources()
	}
	return corev1.Container{
		Name:                     name,
		Image:                    in.AgentImage,
		ImagePullPolicy:          in.ImagePullPolicy,
		Args:                     args,
		Env:                      env,
		VolumeMounts:             mounts,
		Resources:                resources,
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          layout.RestrictedContainer(),
	}
}
