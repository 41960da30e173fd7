package conversion

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// The property: for any v1beta1 object, v1beta1 -> v1alpha1 -> v1beta1 is
// the identity, and for any v1alpha1 object the apiserver can hold, v1alpha1
// -> v1beta1 -> v1alpha1 is too. Objects are random in every field, through
// randfill with apimachinery's fillers for metadata, quantities, times and
// int-or-strings (which generate only values JSON can represent, such as
// whole-second times). The intermediate object goes through JSON as it does
// between the webhook and the apiserver. The comparison normalises only what
// JSON cannot tell apart (see cmpOpts).

// roundTrips is how many random objects of each version the plain test
// checks: a fifth of them in the unit tier (-short), which keeps to its
// minute; the integration tier checks them all.
func roundTrips() int {
	if testing.Short() {
		return 200
	}
	return 1000
}

func newFiller(f *randfill.Filler) *randfill.Filler {
	codecs := serializer.NewCodecFactory(runtime.NewScheme())
	return f.NilChance(0.25).NumElements(0, 3).MaxDepth(12).Funcs(metafuzzer.Funcs(codecs)...)
}

func randomBeta(f *randfill.Filler) *v1beta1.NginxOperator {
	b := &v1beta1.NginxOperator{}
	f.Fill(b)
	b.TypeMeta = betaType
	// The reserved keys are not the user's to set on v1beta1 (documented on
	// AnnotationSpec); a random key never hits them, but be explicit.
	delete(b.Annotations, AnnotationSpec)
	delete(b.Annotations, AnnotationStatus)
	return b
}

// randomAlpha is a v1alpha1 object as a client can hold it: either written
// as v1alpha1 from scratch, or read from the apiserver (down-converted from a
// random v1beta1 object, annotations included) and then edited in its
// v1alpha1 fields. Deleting port from an object that has preserved ports is
// the one edit outside this domain: it drops ports[0] (see ToV1beta1), so it
// cannot come back.
func randomAlpha(t testing.TB, f *randfill.Filler) *v1alpha1.NginxOperator {
	a := &v1alpha1.NginxOperator{}
	f.Fill(a)
	a.TypeMeta = alphaType
	a.Annotations = withoutReserved(a.Annotations)
	var downConverted bool
	f.Fill(&downConverted)
	if !downConverted {
		return a
	}
	read, err := ToV1alpha1(randomBeta(f))
	if err != nil {
		t.Fatalf("ToV1alpha1 of a random object: %v", err)
	}
	for _, k := range []string{AnnotationSpec, AnnotationStatus} {
		if v, ok := read.Annotations[k]; ok {
			if a.Annotations == nil {
				a.Annotations = map[string]string{}
			}
			a.Annotations[k] = v
		}
	}
	switch {
	case read.Spec.Port == nil:
		a.Spec.Port = nil
	case a.Spec.Port == nil:
		a.Spec.Port = read.Spec.Port
	}
	return a
}

// throughJSON is what the apiserver makes of a converted object.
func throughJSON[T any](t testing.TB, in *T) *T {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("encoding %T: %v", in, err)
	}
	out := new(T)
	if err := decodeStrict(b, out); err != nil {
		t.Fatalf("decoding %T: %v\n%s", in, err, b)
	}
	return out
}

// checkBeta asserts v1beta1 -> v1alpha1 -> v1beta1 is the identity, and
// returns the v1alpha1 form.
func checkBeta(t testing.TB, b *v1beta1.NginxOperator) *v1alpha1.NginxOperator {
	t.Helper()
	a, err := ToV1alpha1(b)
	if err != nil {
		t.Fatalf("ToV1alpha1: %v\n%+v", err, b)
	}
	back, err := ToV1beta1(throughJSON(t, a))
	if err != nil {
		t.Fatalf("ToV1beta1 of a down-converted object: %v\nannotations: %v", err, a.Annotations)
	}
	// The status beyond its conditions does not come back (see ToV1beta1).
	want := b.DeepCopy()
	want.Status = v1beta1.NginxOperatorStatus{Conditions: b.Status.Conditions}
	if diff := cmp.Diff(want, back, cmpOpts...); diff != "" {
		t.Fatalf("v1beta1 -> v1alpha1 -> v1beta1 is not the identity but for the status (-in +out):\n%s", diff)
	}
	return a
}

func checkAlpha(t testing.TB, a *v1alpha1.NginxOperator) {
	t.Helper()
	b, err := ToV1beta1(a)
	if err != nil {
		t.Fatalf("ToV1beta1: %v\n%+v", err, a)
	}
	back, err := ToV1alpha1(throughJSON(t, b))
	if err != nil {
		t.Fatalf("ToV1alpha1 of an up-converted object: %v", err)
	}
	// A status annotation is for v1alpha1 readers; it does not come back.
	want := a.DeepCopy()
	delete(want.Annotations, AnnotationStatus)
	if len(want.Annotations) == 0 {
		want.Annotations = nil
	}
	if diff := cmp.Diff(want, back, cmpOpts...); diff != "" {
		t.Fatalf("v1alpha1 -> v1beta1 -> v1alpha1 is not the identity but for the status annotation (-in +out):\n%s", diff)
	}
}

func TestRandomV1beta1ObjectsSurviveARoundTripThroughV1alpha1(t *testing.T) {
	objects := roundTrips()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	f := newFiller(randfill.NewWithSeed(seed))
	// Count what the generator produced, so a generator that degenerated (all
	// objects empty, say) fails the test instead of passing it vacuously.
	var specAnn, statusAnn, noAnn, multiPort int
	for range objects {
		b := randomBeta(f)
		a := checkBeta(t, b)
		_, s := a.Annotations[AnnotationSpec]
		_, st := a.Annotations[AnnotationStatus]
		switch {
		case s:
			specAnn++
		case !s && !st:
			noAnn++
		}
		if st {
			statusAnn++
		}
		if len(b.Spec.Ports) > 1 {
			multiPort++
		}
	}
	t.Logf("%d objects: %d with a spec annotation, %d with a status annotation, %d with several ports", objects, specAnn, statusAnn, multiPort)
	if specAnn < objects/2 || statusAnn < objects/2 || multiPort == 0 {
		t.Errorf("generator too weak: want most objects to need both annotations and some to have several ports")
	}
}

func TestRandomV1alpha1ObjectsSurviveARoundTripThroughV1beta1(t *testing.T) {
	objects := roundTrips()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	f := newFiller(randfill.NewWithSeed(seed))
	var withAnn, withPort int
	for range objects {
		a := randomAlpha(t, f)
		checkAlpha(t, a)
		if _, ok := a.Annotations[AnnotationSpec]; ok {
			withAnn++
		}
		if a.Spec.Port != nil {
			withPort++
		}
	}
	t.Logf("%d objects: %d with preserved v1beta1 fields, %d with a port", objects, withAnn, withPort)
	if withAnn < objects/4 || withAnn > objects*3/4 || withPort == 0 || withPort == objects {
		t.Errorf("generator too weak: want both plain and down-converted objects, with and without port")
	}
}

// The fuzz targets below run their seeds under plain `go test`; run
// `go test -fuzz=FuzzV1beta1RoundTrip ./pkg/conversion/` to search further.

func FuzzV1beta1RoundTrip(f *testing.F) {
	for _, seed := range []string{"", "nginx", "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09", "0123456789abcdefghijklmnopqrstuvwxyz"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBeta(t, randomBeta(newFiller(randfill.NewFromGoFuzz(data))))
	})
}

func FuzzV1alpha1RoundTrip(f *testing.F) {
	for _, seed := range []string{"", "book", "\xff\xfe\xfd\xfc\xfb\xfa", "0123456789abcdefghijklmnopqrstuvwxyz"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAlpha(t, randomAlpha(t, newFiller(randfill.NewFromGoFuzz(data))))
	})
}

// FuzzToV1beta1UserAnnotations feeds arbitrary annotation text, as a user
// could write it on a v1alpha1 object: conversion must not panic, and what
// it accepts must itself convert losslessly from then on.
func FuzzToV1beta1UserAnnotations(f *testing.F) {
	f.Add(`{"paused":true,"ports":[{"name":"web"},{"name":"b","containerPort":9000}]}`, `{"readyReplicas":1}`, int32(8080), true)
	f.Add(`{"ports":"x"}`, `[]`, int32(0), false)
	f.Add(`{"service":{"type":"NodePort"},"ports":[{"name":"http","servicePort":80,"nodePort":30080},{"name":"b","containerPort":9000,"servicePort":443}]}`, `{}`, int32(8080), true)
	f.Add(`{"config":{"servers":[{"port":"http","locations":[{"path":"/","static":{}}]}]}}`, `{}`, int32(-1), true)
	f.Add(`{"replicas":1e400}`, `{"observedGeneration":9223372036854775808}`, int32(1), true)
	compressed, err := compress([]byte(`{"paused":true,"ports":[{"name":"web"}]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(compressed, compressedPrefix+"H4sIAAAAAAAC/w==", int32(8080), true)
	f.Fuzz(func(t *testing.T, spec, status string, port int32, hasPort bool) {
		a := &v1alpha1.NginxOperator{TypeMeta: alphaType}
		a.Annotations = map[string]string{AnnotationSpec: spec, AnnotationStatus: status}
		if hasPort {
			a.Spec.Port = &port
		}
		b, err := ToV1beta1(a)
		if err != nil {
			return // refused with an error: fine
		}
		checkBeta(t, b)
	})
}
