package conversion

import (
	"bytes"
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// servicePort is the port of the webhook Service; it forwards to the
// manager's --webhook-port.
const servicePort = 443

// desiredConversion is the CRD's spec.conversion: the webhook at Path, by URL
// when one is configured (local runs and tests, where the apiserver cannot
// reach a Service) or else by Service, trusting caBundle.
func desiredConversion(opts Options, caBundle []byte) *apiextensionsv1.CustomResourceConversion {
	cc := &apiextensionsv1.WebhookClientConfig{CABundle: caBundle}
	if opts.URL != "" {
		url := opts.URL
		cc.URL = &url
	} else {
		path, port := Path, int32(servicePort)
		cc.Service = &apiextensionsv1.ServiceReference{Namespace: opts.Namespace, Name: opts.ServiceName, Path: &path, Port: &port}
	}
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             cc,
			ConversionReviewVersions: []string{"v1"},
		},
	}
}

// ensureConversion patches the CRD's spec.conversion to want, and does
// nothing when it already is: a steady state makes no write. The merge patch
// carries the resourceVersion it was computed from, so a concurrent change
// (say, `kubectl apply` of the CRD) makes it fail with a conflict instead of
// being overwritten blindly; the next pass recomputes it.
func ensureConversion(ctx context.Context, c client.Client, crdName string, want *apiextensionsv1.CustomResourceConversion) (patched bool, err error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return false, fmt.Errorf("reading CRD %s: %w", crdName, err)
	}
	if equality.Semantic.DeepEqual(crd.Spec.Conversion, want) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(crd.DeepCopy(), client.MergeFromWithOptimisticLock{})
	crd.Spec.Conversion = want.DeepCopy()
	if err := c.Patch(ctx, crd, patch); err != nil {
		return false, fmt.Errorf("patching spec.conversion of CRD %s: %w", crdName, err)
	}
	return true, nil
}

// crdCABundle is the caBundle the apiserver currently trusts for the webhook.
func crdCABundle(ctx context.Context, c client.Client, crdName string) ([]byte, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return nil, fmt.Errorf("reading CRD %s: %w", crdName, err)
	}
	if cv := crd.Spec.Conversion; cv != nil && cv.Webhook != nil && cv.Webhook.ClientConfig != nil {
		return bytes.Clone(cv.Webhook.ClientConfig.CABundle), nil
	}
	return nil, nil
}
