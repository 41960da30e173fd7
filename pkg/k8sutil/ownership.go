package k8sutil

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Why comparing ownership instead of values.
//
// After a server-side apply, the API server records in metadata.managedFields
// the exact set of fields the applier sent, under its manager name. From then
// on it keeps that record honest: an Update (kubectl edit, replace, a
// client-side apply, a controller's write) that changes or removes one of
// those fields takes the field out of every other manager's set, whatever the
// old or new value (false, 0 and "" included); a forced apply by another
// manager with a different value does the same; a removed field or list
// element leaves every set; a write through the scale subresource takes
// spec.replicas. So if every field of what the operator sends is still in
// its Apply record, nobody has touched those fields since the operator last
// applied them, and the live values are the ones that apply produced.
//
// The values themselves are deliberately not compared: the API server
// legitimately rewrites some of what the operator sends (defaults for the
// zero values a Go struct cannot omit, canonical quantities, admission
// mutations on the operator's own request). Those rewrites stay attributed
// to the operator, so a value comparison would report drift on every resync
// where the ownership comparison correctly reports none.

// FieldsDigestType is the FieldsType of an apply record whose field set was
// replaced by CompactApplyRecord with a digest of it.
const FieldsDigestType = "nginx.operator.dev/FieldsV1-SHA256"

// CompactApplyRecord replaces, in place, the field set of the operator's own
// server-side apply record in entries by the SHA-256 of its JSON, stored as
// a JSON string under FieldsDigestType. The set is re-encoded canonically
// before it is hashed, so the digest tells whether the record equals the set
// of an apply body (see ownershipDrift) in 66 bytes instead of the kilobytes
// a StatefulSet's record takes. Equality is stricter than the field-by-field
// check of a full record, which also accepts a record holding more than the
// body: with a digest that case costs one needless apply, never a missed
// change. It is for objects kept in the informer cache only, of kinds whose
// schema the client knows (the built-in kinds): a kind without one is
// compared field by field with the set itself. A record that does not
// decode is left as it is.
func CompactApplyRecord(entries []metav1.ManagedFieldsEntry) {
	for i := range entries {
		e := &entries[i]
		if e.Manager != naming.ManagedBy || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" ||
			e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
			continue
		}
		set, err := appliedFieldSet(*e)
		if err != nil {
			continue
		}
		canonical, err := set.ToJSON()
		if err != nil {
			continue
		}
		e.FieldsType, e.FieldsV1 = FieldsDigestType, &metav1.FieldsV1{Raw: fieldsDigest(canonical)}
	}
}

// fieldsDigest is the digest CompactApplyRecord stores for a field set's JSON.
func fieldsDigest(fieldsJSON []byte) []byte {
	sum := sha256.Sum256(fieldsJSON)
	return []byte(`"` + hex.EncodeToString(sum[:]) + `"`)
}

// findApplyRecord returns manager's record of its server-side apply to the main
// resource (not a subresource) in apiVersion, when there is a usable one:
// none when the manager never applied, the record is for another API
// version (field paths are version-specific) or the reader dropped
// managedFields. Without a record nothing can be known about drift, so the
// caller must apply.
func findApplyRecord(entries []metav1.ManagedFieldsEntry, manager, apiVersion string) (metav1.ManagedFieldsEntry, bool) {
	for _, e := range entries {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" {
			continue
		}
		usable := e.APIVersion == apiVersion && e.FieldsV1 != nil && (e.FieldsType == "FieldsV1" || e.FieldsType == FieldsDigestType)
		return e, usable
	}
	return metav1.ManagedFieldsEntry{}, false
}

// appliedFieldSet decodes the field set of an apply record (FieldsV1).
func appliedFieldSet(record metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(record.FieldsV1.Raw)); err != nil {
		return nil, fmt.Errorf("decoding the managedFields of %s: %w", record.Manager, err)
	}
	return set, nil
}

// neverRecorded are the fields the API server leaves out of every manager's
// set (identity and server-populated metadata), so they are left out of the
// set of the apply body before comparing.
var neverRecorded = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// ownershipDrift says why live may no longer hold what applying body
// produced: the fields of body that manager no longer owns in live, or that
// live carries no record of what manager owns. An empty result means every
// field of body is still owned by manager, so nobody changed it since.
//
// The field set of body is computed the way the API server computes it
// (structured-merge-diff over the type's schema), so list elements are
// addressed by their merge keys, defaulted key fields included, and atomic
// lists and maps count as one field. Should the client's schema and the API
// server's disagree on how a field is addressed (version skew), the two sets
// differ and every call reports drift: a needless request, never a missed
// change. Kinds the converter has no schema for (custom resources such as
// prometheus-operator's ServiceMonitor) are compared by unownedBySchemaless
// instead, which takes the addressing from the record itself.
//
// What the comparison cannot see is a client that rewrites managedFields on
// purpose to claim the operator still owns a field it changed; only users
// allowed to update the object can, and they can change it anyway.
func ownershipDrift(tc managedfields.TypeConverter, body *unstructured.Unstructured, live client.Object, manager string) []string {
	record, found := findApplyRecord(live.GetManagedFields(), manager, body.GetAPIVersion())
	if !found {
		return []string{fmt.Sprintf("no server-side apply record of %s for %s in metadata.managedFields", manager, body.GetAPIVersion())}
	}
	var bodySet *fieldpath.Set
	if tv, err := tc.ObjectToTyped(body); err == nil {
		if set, err := tv.ToFieldSet(); err == nil {
			bodySet = set.Difference(neverRecorded)
		}
	}
	if record.FieldsType == FieldsDigestType {
		// A compacted record holds only a digest: the two sets must be
		// equal, which is what an untouched record of this body is.
		if bodySet == nil {
			return []string{fmt.Sprintf("the cached record of %s is a digest and %s has no schema to compare it with", manager, body.GetKind())}
		}
		js, err := bodySet.ToJSON()
		if err != nil {
			return []string{fmt.Sprintf("encoding the fields of the apply body: %v", err)}
		}
		if !bytes.Equal(fieldsDigest(js), record.FieldsV1.Raw) {
			return []string{fmt.Sprintf("the fields %s owns are no longer those of the apply body", manager)}
		}
		return nil
	}
	owned, err := appliedFieldSet(record)
	if err != nil {
		return []string{err.Error()}
	}
	if bodySet != nil {
		return pathStrings(bodySet.Difference(owned))
	}
	liveMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return []string{fmt.Sprintf("reading the live object: %v", err)}
	}
	return unownedBySchemaless(body.Object, liveMap, owned)
}

// pathStrings lists the leaf paths of s, sorted, for logs and tests.
func pathStrings(s *fieldpath.Set) []string {
	var out []string
	s.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	slices.Sort(out)
	return out
}

// unownedBySchemaless lists the fields of body (an apply configuration) that
// owned does not contain, for kinds without a known schema. It walks body and
// the recorded set together, letting the set say how each list is addressed:
// by merge key (k:), by value (v:) or as a whole (atomic). A body list element
// that matches no recorded element is not owned. A key field the body leaves
// to a server default makes the element match nothing, which errs towards
// applying (one needless request) rather than towards missing drift.
//
// The one case the set alone cannot settle is a non-empty map or list
// recorded as a single field: either it is atomic (owned as a whole, so any
// edit by someone else would have removed it from the set) or it is a map
// whose every entry someone removed, leaving an empty map the set still
// names. There the live value must still hold every entry of body; entries
// the server added (defaults) are tolerated.
func unownedBySchemaless(body, live map[string]any, owned *fieldpath.Set) []string {
	b := runtime.DeepCopyJSON(body)
	delete(b, "apiVersion")
	delete(b, "kind")
	if meta, ok := b["metadata"].(map[string]any); ok {
		delete(meta, "name")
		delete(meta, "namespace")
		if len(meta) == 0 {
			delete(b, "metadata")
		}
	}
	w := &schemalessWalk{}
	w.fields(b, live, owned, nil)
	return w.missing
}

type schemalessWalk struct {
	missing []string
}

func (w *schemalessWalk) miss(p fieldpath.Path) {
	w.missing = append(w.missing, p.String())
}

// fields checks each field of the map body; set is the recorded set at path.
func (w *schemalessWalk) fields(body, live map[string]any, set *fieldpath.Set, path fieldpath.Path) {
	for _, k := range slices.Sorted(maps.Keys(body)) {
		w.node(body[k], live[k], set, fieldpath.FieldNameElement(k), path)
	}
}

// node checks the value v found at path+pe in body; live is the value at the
// same place in the live object (nil if absent), parent the recorded set at
// path.
func (w *schemalessWalk) node(v, live any, parent *fieldpath.Set, pe fieldpath.PathElement, path fieldpath.Path) {
	p := append(path.Copy(), pe)
	sub, nested := parent.Children.Get(pe)
	nested = nested && !sub.Empty()
	if !nested {
		if !parent.Members.Has(pe) {
			w.miss(p)
		} else if isComposite(v) && !holds(live, v) {
			w.miss(p)
		}
		return
	}
	switch t := v.(type) {
	case map[string]any:
		lm, _ := live.(map[string]any)
		w.fields(t, lm, sub, p)
	case []any:
		ll, _ := live.([]any)
		for i, el := range t {
			epe, ok := recordedElement(sub, el, i)
			if !ok {
				w.miss(append(p.Copy(), fieldpath.IndexElement(i)))
				continue
			}
			w.node(el, liveElement(ll, epe), sub, epe, p)
		}
	default:
		// A scalar where the record has nested fields: not what was applied.
		w.miss(p)
	}
}

// recordedElement finds the path element under which the set records the list
// element el (at index i of the body's list).
func recordedElement(set *fieldpath.Set, el any, i int) (fieldpath.PathElement, bool) {
	var found fieldpath.PathElement
	ok := false
	try := func(pe fieldpath.PathElement) {
		if !ok && elementMatches(pe, el, i) {
			found, ok = pe, true
		}
	}
	set.Members.Iterate(try)
	set.Children.Iterate(try)
	return found, ok
}

func liveElement(list []any, pe fieldpath.PathElement) any {
	for i, el := range list {
		if elementMatches(pe, el, i) {
			return el
		}
	}
	return nil
}

// elementMatches reports whether pe addresses the list element el at index i.
func elementMatches(pe fieldpath.PathElement, el any, i int) bool {
	switch {
	case pe.Key != nil:
		m, ok := el.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			v, ok := m[f.Name]
			if !ok || isComposite(v) || !value.Equals(value.NewValueInterface(v), f.Value) {
				return false
			}
		}
		return true
	case pe.Value != nil:
		return !isComposite(el) && value.Equals(value.NewValueInterface(el), *pe.Value)
	case pe.Index != nil:
		return *pe.Index == i
	}
	return false
}

func isComposite(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) > 0
	case []any:
		return len(t) > 0
	}
	return false
}

// holds reports whether live contains want: every entry of a map (extra live
// entries allowed), every element of a list in order and no other, equal
// scalars (numbers by value).
func holds(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			lv, ok := l[k]
			if !ok || !holds(lv, wv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !holds(l[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return live == nil
	default:
		switch live.(type) {
		case map[string]any, []any, nil:
			return false
		}
		return value.Equals(value.NewValueInterface(want), value.NewValueInterface(live))
	}
}
