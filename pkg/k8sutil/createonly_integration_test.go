//go:build !unit

package k8sutil_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// notCached is the operator's cache before it has seen an object: it has
// none.
type notCached struct{}

func (notCached) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

func (notCached) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// eventLog records Events as "type reason: note".
type eventLog []string

func (l *eventLog) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, _ string, note string, args ...any) {
	*l = append(*l, fmt.Sprintf("%s %s: %s", typ, reason, fmt.Sprintf(note, args...)))
}

func (l *eventLog) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, typ, reason, action, note string, args ...any) {
	l.Eventf(regarding, related, typ, reason, action, note, args...)
}

// For every kind the controllers apply, a child missing from the cache costs
// one request when its name is free (no read first), is read and, if it
// differs, applied to when it exists and is the owner's, and is never
// written when someone else's object has its name: the apply only creates,
// atomically, and the refusal is a NameConflict the owner's status reports.
func TestApplyOwnedOfAnUncachedChildCreatesOnlyWhenTheNameIsFree(t *testing.T) {
	ctx := context.Background()
	ns, _ := env.Namespace(t)
	applier, counter := newApplier(t)
	applier.Live, applier.Reader = applier.Reader, notCached{}

	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := applier.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	for _, build := range childKinds {
		kind := fmt.Sprintf("%T", build(ns))
		var events eventLog

		reads, writes := counter.Reads(), len(counter.Writes())
		if outcome, err := applier.ApplyOwned(ctx, &events, owner, build(ns)); err != nil || outcome != k8sutil.Created {
			t.Fatalf("%s: apply of a free name = %v, %v; want Created", kind, outcome, err)
		}
		if r, w := counter.Reads()-reads, len(counter.Writes())-writes; r != 0 || w != 1 {
			t.Errorf("%s: creating a child cost %d reads and %d writes, want 0 and 1", kind, r, w)
		}

		// The owner's own child, which the cache has not seen yet.
		changed := build(ns)
		changed.SetAnnotations(map[string]string{"changed": "true"})
		if outcome, err := applier.ApplyOwned(ctx, &events, owner, changed); err != nil || outcome != k8sutil.Updated {
			t.Errorf("%s: apply to the owner's uncached child = %v, %v; want Updated", kind, outcome, err)
		}
		if outcome, err := applier.ApplyOwned(ctx, &events, owner, changed); err != nil || outcome != k8sutil.Unchanged {
			t.Errorf("%s: apply of what the owner's uncached child holds = %v, %v; want Unchanged", kind, outcome, err)
		}

		// Someone else's object under the child's name.
		foreign := build(ns)
		foreign.SetName("taken")
		foreign.SetLabels(map[string]string{"app": "mine"})
		if err := applier.Client.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		desired := build(ns)
		desired.SetName("taken")
		events = nil
		_, err := applier.ApplyOwned(ctx, &events, owner, desired)
		var refErr *k8sutil.ReferenceError
		if !errors.As(err, &refErr) || refErr.Reason() != k8sutil.ReasonNameConflict {
			t.Errorf("%s: apply over someone else's object: error %v, want a ReferenceError %s", kind, err, k8sutil.ReasonNameConflict)
		}
		after := build(ns)
		if err := applier.Live.Get(ctx, client.ObjectKeyFromObject(foreign), after); err != nil {
			t.Fatal(err)
		}
		if after.GetResourceVersion() != foreign.GetResourceVersion() || len(after.GetOwnerReferences()) != 0 {
			t.Errorf("%s: someone else's object was written: resourceVersion %s -> %s, owners %v",
				kind, foreign.GetResourceVersion(), after.GetResourceVersion(), after.GetOwnerReferences())
		}
		if len(events) != 0 {
			t.Errorf("%s: Events %v for a name conflict; the owner's status reports it", kind, events)
		}
	}
}
