package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// Certificates of other namespaces.
//
// An instance's pods mount Secrets of their own namespace only, so a
// listener whose certificate is a Secret of another namespace (which a
// ReferenceGrant there lets the Gateway use) is served from a copy of its
// tls.crt and tls.key in the Gateway's namespace. The Gateway controls the
// copy: it is deleted with the Gateway, rewritten when the Secret it copies
// changes (the Gateway is found from the Secret through gatewaySecretIndex),
// and deleted as soon as no served listener needs it (the listener or its
// certificateRef changed, the grant was revoked, the Secret no longer holds
// a key pair).

// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch;create;patch;delete

// CertificateCopyComponent is the app.kubernetes.io/component of the
// copies of certificates.
const CertificateCopyComponent = "gateway-certificate"

// CertificateSourceAnnotation names, on a copy, the Secret it copies
// (<namespace>/<name>).
const CertificateSourceAnnotation = "nginx.operator.dev/certificate-source"

// certificateCopyLabels are the labels of gw's copies: the operator's (the
// cache holds only Secrets that carry them), and the Gateway's name, by
// which its copies are found.
func certificateCopyLabels(gw *gatewayv1.Gateway) map[string]string {
	l := naming.Labels(layout.AppName, graph.InstanceName(gw.Name), CertificateCopyComponent)
	l[graph.LabelGatewayName] = gw.Name
	return l
}

// certificateCopy is the copy named name, in gw's namespace, of source's
// certificate and key. Only those two keys are copied.
func certificateCopy(gw *gatewayv1.Gateway, name string, source *corev1.Secret) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: gw.Namespace, Labels: certificateCopyLabels(gw),
			Annotations: map[string]string{CertificateSourceAnnotation: client.ObjectKeyFromObject(source).String()}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       source.Data[corev1.TLSCertKey],
			corev1.TLSPrivateKeyKey: source.Data[corev1.TLSPrivateKeyKey],
		},
	}
}

// applyCertificateCopies applies the copies gw's translation asks for, from
// the sources inputs read (and found servable). The Applier sends nothing
// for a copy whose content is what it last applied.
func (r *gatewayReconciler) applyCertificateCopies(ctx context.Context, gw *gatewayv1.Gateway, copies map[string]types.NamespacedName, sources map[types.NamespacedName]*corev1.Secret) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(copies)) {
		source := sources[copies[name]]
		if source == nil {
			// inputs read every Secret a listener names; a served
			// listener's is among them.
			errs = append(errs, fmt.Errorf("certificate copy %s: Secret %s was not read", name, copies[name]))
			continue
		}
		if _, err := r.Applier.ApplyOwned(ctx, r.Recorder, gw, certificateCopy(gw, name, source)); err != nil {
			errs = append(errs, fmt.Errorf("copying the certificate of Secret %s to %s: %w", copies[name], name, err))
		}
	}
	return errors.Join(errs...)
}

// deleteStaleCertificateCopies deletes gw's copies that copies does not
// name, found in the cache by their labels.
func (r *gatewayReconciler) deleteStaleCertificateCopies(ctx context.Context, gw *gatewayv1.Gateway, copies map[string]types.NamespacedName) error {
	var secrets corev1.SecretList
	if err := r.Client.List(ctx, &secrets, client.InNamespace(gw.Namespace), client.MatchingLabels{
		naming.LabelManagedBy: naming.ManagedBy, naming.LabelComponent: CertificateCopyComponent, graph.LabelGatewayName: gw.Name,
	}); err != nil {
		return err
	}
	var errs []error
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if _, wanted := copies[s.Name]; wanted || !metav1.IsControlledBy(s, gw) || !s.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting certificate copy %s: %w", s.Name, err))
			continue
		}
		r.Recorder.Eventf(gw, s, corev1.EventTypeNormal, "Deleted", "Delete",
			"Deleted Secret %s: no listener serves the certificate of %s any more", s.Name, s.Annotations[CertificateSourceAnnotation])
	}
	return errors.Join(errs...)
}
