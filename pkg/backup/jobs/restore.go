package jobs

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// RestoreContainerName is the restore init container of an instance's pods;
// the NginxOperator controller finds it by this name.
const RestoreContainerName = layout.RestoreContainerName

// Volume names of the restore init container; prefixed so they never collide
// with the nginx pod's own volumes.
const (
	restoreTmpVolume         = "restore-tmp"
	restoreDestinationVolume = "restore-destination"
	restoreTmpPath           = "/var/run/nginx-restore/tmp"
	restoreDestinationPath   = "/var/run/nginx-restore/destination"
)

// RestoreInitContainer is the init container that seeds an instance's content
// volume from backup id of the NginxBackup backup (spec.restore), plus the
// volumes it needs besides the content volume, which content mounts (read-write)
// and which the caller's pod already has. The artifact's location is the
// backup's (namespace, spec.instance), so an instance can be seeded from
// another instance's backups.
//
// It runs `operator restore --once`: the id restored is recorded in the
// volume, so later starts of the pod (a roll, a reschedule) leave the content
// alone, and a new id restores again. The artifact is downloaded and verified
// in an emptyDir TMPDIR first: the node needs ephemeral storage for it. A pvc
// destination is mounted read-only into every replica, so it must be
// ReadOnlyMany or ReadWriteMany when replicas run on several nodes.
//
// The container's security context is the restricted one and names no user:
// the pod must run as the user the content belongs to (the nginx pods do).
func RestoreInitContainer(backup *v1beta1.NginxBackup, id string, content corev1.VolumeMount, in Facts) (corev1.Container, []corev1.Volume) {
	content.ReadOnly = false
	a := agentAccess{
		args: []string{
			"restore",
			"--once",
			"--namespace=" + backup.Namespace,
			"--instance=" + backup.Spec.Instance,
			"--id=" + id,
			"--target=" + content.MountPath,
		},
		env: []corev1.EnvVar{{Name: "TMPDIR", Value: restoreTmpPath}},
		volumes: []corev1.Volume{{
			Name:         restoreTmpVolume,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
		}},
		mounts: []corev1.VolumeMount{content, {Name: restoreTmpVolume, MountPath: restoreTmpPath}},
	}
	a.add(reachDestination(backup.Spec.Destination, restoreDestinationVolume, restoreDestinationPath, true))

	return agentContainer(RestoreContainerName, in, a.args, a.env, a.mounts), a.volumes
}
