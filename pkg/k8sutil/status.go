package k8sutil

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes obj's status through the status subresource, as a merge
// patch against original, only when the two statuses differ: an unchanged
// status costs no request. meta.SetStatusCondition keeps a condition's
// lastTransitionTime while its status holds, so re-setting the same
// conditions leaves the status equal. A deleted object is not an error.
func PatchStatus(ctx context.Context, c client.Client, obj, original client.Object) error {
	now, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	was, err := runtime.DefaultUnstructuredConverter.ToUnstructured(original)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(now["status"], was["status"]) {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(original)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}
