package conversion

import (
	"bytes"
	"encoding/json"
	"fmt"

	kjson "sigs.k8s.io/json"
)

// The conversion works on JSON objects rather than on Go fields so that it
// never has to name a v1beta1 field other than the three v1alpha1 also has:
// whatever fields v1beta1 gains later travel through the annotations
// unchanged.

// toMap is v's JSON encoding as a generic object.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parseObject(b)
}

// parseObject decodes one JSON object, as the apiserver decodes: integers
// stay int64 (no float64 rounding), and a duplicated key is an error rather
// than a silent choice of one value.
func parseObject(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := decodeStrict(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object: %.40q", b)
	}
	return m, nil
}

// fromMap decodes m into out, refusing fields out does not have and
// duplicated fields: silently dropping a field would lose data.
func fromMap(m map[string]any, out any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return decodeStrict(b, out)
}

// decodeStrict decodes JSON into out case-sensitively and fails on unknown or
// duplicated fields.
func decodeStrict(b []byte, out any) error {
	strict, err := kjson.UnmarshalStrict(b, out, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return fmt.Errorf("%v", strict[0])
	}
	return nil
}

// canonical is m's JSON encoding; encoding/json sorts map keys, so two equal
// objects always encode to equal bytes.
func canonical(m map[string]any) ([]byte, error) {
	return json.Marshal(m)
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b map[string]any) (bool, error) {
	ab, err := canonical(a)
	if err != nil {
		return false, err
	}
	bb, err := canonical(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ab, bb), nil
}
