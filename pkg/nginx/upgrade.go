package nginx

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// What an upgrade from an earlier operator leaves behind, and how it goes.

// deleteLegacyConfigs deletes the per-configuration Secrets
// (<name>-config-<hash>) of operators before the reloader, once no pod
// mounts them any more: every replica runs the current pod template. The
// Secrets are read from the cache, selected by the instance's labels.
func (r *Reconciler) deleteLegacyConfigs(ctx context.Context, nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet) error {
	if !rolledOut(sts) || sts.Spec.Template.Annotations[layout.PodTemplateAnnotation] != PodTemplateVersion {
		return nil
	}
	var secrets corev1.SecretList
	if err := r.Client.List(ctx, &secrets, client.InNamespace(nginx.Namespace), client.MatchingLabels(selector(nginx))); err != nil {
		return err
	}
	names := layout.NamesFor(nginx.Name)
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if !strings.HasPrefix(s.Name, names.ConfigSecretPrefix) || !metav1.IsControlledBy(s, nginx) {
			continue
		}
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
			return &k8sutil.ApplyError{Err: err}
		}
	}
	return nil
}
