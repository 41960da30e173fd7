package conversion

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The apiserver refuses a converted object whose annotations add up to more
// than 256 KiB, and a large v1beta1 config (or one that kubectl apply's
// last-applied-configuration annotation already repeats) can exceed that as
// plain JSON. Such values are stored gzip-compressed and base64-encoded
// behind this prefix, which no JSON object starts with; typical nginx
// configurations shrink by an order of magnitude. Values that fit stay plain
// JSON, readable with kubectl.
const compressedPrefix = "gzip+base64:"

// maxPreservedBytes bounds what a compressed annotation may expand to: far
// more than any object etcd stores (1.5 MiB by default), so a small
// annotation cannot make the webhook allocate without limit.
const maxPreservedBytes = 8 << 20

// setPreserved adds the preservation annotations in values (key -> JSON) to
// meta, compressing them all when plain JSON would exceed the apiserver's
// limit. It fails, rather than drop anything, when even that is too large.
func setPreserved(meta *metav1.ObjectMeta, values map[string][]byte) error {
	if len(values) == 0 {
		return nil
	}
	annotations := make(map[string]string, len(meta.Annotations)+len(values))
	for k, v := range meta.Annotations {
		annotations[k] = v
	}
	for k, v := range values {
		annotations[k] = string(v)
	}
	if apivalidation.ValidateAnnotationsSize(annotations) != nil {
		for k, v := range values {
			c, err := compress(v)
			if err != nil {
				return err
			}
			annotations[k] = c
		}
		if err := apivalidation.ValidateAnnotationsSize(annotations); err != nil {
			return fmt.Errorf("what v1alpha1 cannot express does not fit in its annotations even compressed (%v); read it as v1beta1", err)
		}
	}
	meta.Annotations = annotations
	return nil
}

// preservedJSON is the JSON an annotation value holds, decompressing it if
// setPreserved compressed it.
func preservedJSON(value string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(value, compressedPrefix)
	if !ok {
		return []byte(value), nil
	}
	gz, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("compressed value: %w", err)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("compressed value: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPreservedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("compressed value: %w", err)
	}
	if len(b) > maxPreservedBytes {
		return nil, fmt.Errorf("compressed value expands beyond %d bytes", maxPreservedBytes)
	}
	return b, nil
}

// compress is deterministic (no timestamp in the gzip header), so converting
// the same object twice yields the same annotation.
func compress(b []byte) (string, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(b); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return compressedPrefix + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
