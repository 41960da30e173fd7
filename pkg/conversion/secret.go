package conversion

import (
	"context"
	"fmt"
	"maps"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// secretLabels mark the certificate Secret as the operator's own.
func secretLabels() map[string]string {
	return map[string]string{
		naming.LabelName:      "nginx-operator",
		naming.LabelComponent: "webhook",
		naming.LabelManagedBy: naming.ManagedBy,
	}
}

// maxConflicts bounds how often ensureSecret re-reads after losing a race
// with another replica; each loss means someone else just wrote a fresh
// Secret, so a second attempt normally finds nothing left to do.
const maxConflicts = 5

// ensureSecret makes the certificate Secret hold a usable CA and serving
// certificate as plan decides, creating it when missing. Replicas race here
// at start-up: a create that finds the Secret already there, or an update
// that conflicts, re-reads and re-decides rather than overwriting. It returns
// the Secret as stored.
func ensureSecret(ctx context.Context, c client.Client, key client.ObjectKey, plan certPlan, log logr.Logger) (*corev1.Secret, error) {
	for range maxConflicts {
		secret := &corev1.Secret{}
		err := c.Get(ctx, key, secret)
		if apierrors.IsNotFound(err) {
			data, _, err := plan.apply(nil)
			if err != nil {
				return nil, err
			}
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: secretLabels()},
				Type:       corev1.SecretTypeTLS,
				Data:       data,
			}
			if err := c.Create(ctx, secret); apierrors.IsAlreadyExists(err) {
				log.Info("webhook certificate Secret was created by another replica; reading it", "secret", key)
				continue
			} else if err != nil {
				return nil, fmt.Errorf("creating Secret %s: %w", key, err)
			}
			log.Info("created the webhook CA and serving certificate", "secret", key, "notAfter", notAfter(data))
			return secret, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading Secret %s: %w", key, err)
		}

		data, reason, err := plan.apply(secret.Data)
		if err != nil {
			return nil, err
		}
		labelsMissing := !hasLabels(secret.Labels, secretLabels())
		if data == nil && !labelsMissing {
			return secret, nil
		}
		original := secret.DeepCopy()
		if data != nil {
			secret.Data = data
		} else {
			reason = "labelling it"
		}
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		maps.Copy(secret.Labels, secretLabels())
		// A patch that carries the resourceVersion read: a concurrent writer
		// (another replica rotating) makes it fail with a conflict.
		if err := c.Patch(ctx, secret, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})); apierrors.IsConflict(err) {
			log.Info("webhook certificate Secret changed meanwhile; reading it again", "secret", key)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("updating Secret %s: %w", key, err)
		}
		log.Info("updated the webhook certificate Secret", "secret", key, "reason", reason, "notAfter", notAfter(secret.Data))
		return secret, nil
	}
	return nil, fmt.Errorf("Secret %s kept changing under us: gave up after %d conflicts", key, maxConflicts)
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// notAfter is the serving certificate's expiry, for log lines.
func notAfter(data map[string][]byte) string {
	c, err := parseCert(data[keyTLSCert])
	if err != nil {
		return "unknown"
	}
	return c.NotAfter.UTC().Format("2006-01-02T15:04:05Z")
}
