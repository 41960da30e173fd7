package backup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/jobs"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
)

// RestoreBuilder gives the NginxOperator controller the restore init
// container of spec.restore, running the agent from agentImage.
func RestoreBuilder(agentImage string) nginx.RestoreBuilder {
	return func(backup *v1beta1.NginxBackup, id string, content corev1.VolumeMount) (corev1.Container, []corev1.Volume) {
		return jobs.RestoreInitContainer(backup, id, content, jobs.Inputs{AgentImage: agentImage})
	}
}
