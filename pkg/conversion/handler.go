package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// Path is where the conversion webhook is served.
const Path = "/convert"

// maxRequestBytes bounds a ConversionReview. The apiserver converts whole
// lists in one review, and one object may be up to about 1.5 MiB in etcd, so
// the bound is generous; it only stops a client from exhausting memory.
const maxRequestBytes = 64 << 20

var reviewGVK = apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview")

// NewHandler serves apiextensions.k8s.io/v1 ConversionReviews for
// NginxOperator between nginx.operator.dev/v1alpha1 and v1beta1. A review
// whose objects cannot all be converted is answered with a Failure result
// naming the object and the reason, which the apiserver passes on to the
// client; a request that is not a ConversionReview gets an HTTP error.
func NewHandler() http.Handler {
	return &handler{}
}

type handler struct{}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := logf.Log.WithName("conversion-webhook")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is allowed", http.StatusMethodNotAllowed)
		return
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		http.Error(w, fmt.Sprintf("Content-Type %q is not application/json", r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, "not a ConversionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if gvk := review.GroupVersionKind(); gvk != reviewGVK {
		http.Error(w, fmt.Sprintf("expected a %s, got %q", reviewGVK, gvk), http.StatusBadRequest)
		return
	}
	if review.Request == nil {
		http.Error(w, "ConversionReview has no request", http.StatusBadRequest)
		return
	}

	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID}
	converted, err := convertAll(r.Context(), review.Request.Objects, review.Request.DesiredAPIVersion)
	if err != nil {
		log.Error(err, "conversion failed", "uid", review.Request.UID, "desiredAPIVersion", review.Request.DesiredAPIVersion)
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error(), Reason: metav1.StatusReasonBadRequest}
	} else {
		log.V(1).Info("converted", "uid", review.Request.UID, "objects", len(converted), "desiredAPIVersion", review.Request.DesiredAPIVersion)
		resp.ConvertedObjects = converted
		resp.Result = metav1.Status{Status: metav1.StatusSuccess}
	}
	out := apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: reviewGVK.GroupVersion().String(), Kind: reviewGVK.Kind}, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		log.Error(err, "writing the conversion response")
	}
}

// convertAll converts every object or fails as a whole: the apiserver
// accepts no partial answer.
func convertAll(ctx context.Context, objects []runtime.RawExtension, desired string) ([]runtime.RawExtension, error) {
	to, err := schema.ParseGroupVersion(desired)
	if err != nil {
		return nil, fmt.Errorf("desiredAPIVersion %q: %w", desired, err)
	}
	if to != v1alpha1.GroupVersion && to != v1beta1.GroupVersion {
		return nil, fmt.Errorf("desiredAPIVersion %q is not %s or %s", desired, v1alpha1.GroupVersion, v1beta1.GroupVersion)
	}
	out := make([]runtime.RawExtension, 0, len(objects))
	for i, obj := range objects {
		b, err := convertOne(ctx, obj.Raw, to)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		out = append(out, runtime.RawExtension{Raw: b})
	}
	return out, nil
}

func convertOne(ctx context.Context, raw []byte, to schema.GroupVersion) ([]byte, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	from, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", meta.APIVersion, err)
	}
	if meta.Kind != "NginxOperator" {
		return nil, fmt.Errorf("kind %q is not NginxOperator", meta.Kind)
	}
	switch {
	case from == to:
		return raw, nil
	case from == v1alpha1.GroupVersion && to == v1beta1.GroupVersion:
		var in v1alpha1.NginxOperator
		if err := decodeStrict(raw, &in); err != nil {
			return nil, fmt.Errorf("decoding %s NginxOperator: %w", from, err)
		}
		converted, err := ToV1beta1(&in)
		if err != nil {
			return nil, err
		}
		if errs := validation.NginxOperatorSchema(ctx, converted); len(errs) > 0 {
			return nil, fmt.Errorf("NginxOperator %s is not a valid %s NginxOperator: %w", objectName(converted), to, errs.ToAggregate())
		}
		return json.Marshal(converted)
	case from == v1beta1.GroupVersion && to == v1alpha1.GroupVersion:
		var in v1beta1.NginxOperator
		if err := decodeStrict(raw, &in); err != nil {
			return nil, fmt.Errorf("decoding %s NginxOperator: %w", from, err)
		}
		converted, err := ToV1alpha1(&in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(converted)
	}
	return nil, errors.New("cannot convert apiVersion " + meta.APIVersion + " to " + to.String())
}
