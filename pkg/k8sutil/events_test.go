package k8sutil

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type recordedEvent struct{ typ, reason, note string }

type fakeRecorder struct{ events []recordedEvent }

func (f *fakeRecorder) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, _ string, note string, args ...interface{}) {
	f.events = append(f.events, recordedEvent{typ, reason, fmt.Sprintf(note, args...)})
}

// A reconcile that creates or updates several children records one Event
// per owner, not one per child: Events are writes too.
func TestAppliedChildrenAreSummarisedInOneEventPerOwner(t *testing.T) {
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "1"}}
	api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api", UID: "2"}}
	rec := &fakeRecorder{}
	ctx, batch := withAppliedEvents(context.Background())
	appliedEventsFrom(ctx).add(rec, web, Created, "ServiceAccount web")
	appliedEventsFrom(ctx).add(rec, web, Created, "StatefulSet web")
	appliedEventsFrom(ctx).add(rec, web, Updated, "Service web")
	appliedEventsFrom(ctx).add(rec, api, Updated, "Service api")
	if len(rec.events) != 0 {
		t.Fatalf("events recorded before the reconcile ended: %v", rec.events)
	}
	batch.flush()
	want := []recordedEvent{
		{corev1.EventTypeNormal, reasonApplied, "Created ServiceAccount web, StatefulSet web; Updated Service web"},
		{corev1.EventTypeNormal, string(Updated), "Updated Service api"},
	}
	if fmt.Sprint(rec.events) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", rec.events, want)
	}
	batch.flush()
	if len(rec.events) != 2 {
		t.Errorf("a second flush recorded again: %v", rec.events)
	}
}

func (f *fakeRecorder) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, typ, reason, action, note string, args ...interface{}) {
	f.Eventf(regarding, related, typ, reason, action, note, args...)
}
