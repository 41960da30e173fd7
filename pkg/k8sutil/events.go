package k8sutil

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// reasonApplied is the reason of a reconcile's summary Event when it both
// created and updated children; one that only created reports Created, one
// that only updated reports Updated.
const reasonApplied = "Applied"

// appliedEvents gathers the children one reconcile created or updated, per
// owner, so that flush records one Normal Event per owner summarising them.
type appliedEvents struct {
	mu     sync.Mutex
	owners []*ownerChanges
}

type ownerChanges struct {
	rec              recorder.EventRecorder
	owner            client.Object
	created, updated []string
}

type appliedEventsKey struct{}

func withAppliedEvents(ctx context.Context) (context.Context, *appliedEvents) {
	batch := &appliedEvents{}
	return context.WithValue(ctx, appliedEventsKey{}, batch), batch
}

func appliedEventsFrom(ctx context.Context) *appliedEvents {
	batch, _ := ctx.Value(appliedEventsKey{}).(*appliedEvents)
	return batch
}

func (b *appliedEvents) add(rec recorder.EventRecorder, owner client.Object, outcome Outcome, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var oc *ownerChanges
	for _, o := range b.owners {
		if o.owner.GetUID() == owner.GetUID() && o.owner.GetName() == owner.GetName() && o.owner.GetNamespace() == owner.GetNamespace() {
			oc = o
			break
		}
	}
	if oc == nil {
		oc = &ownerChanges{rec: rec, owner: owner}
		b.owners = append(b.owners, oc)
	}
	if outcome == Created {
		oc.created = append(oc.created, what)
	} else {
		oc.updated = append(oc.updated, what)
	}
}

// flush records the summary Events, such as "Created ServiceAccount web,
// Secret web-config-1a2b, StatefulSet web".
func (b *appliedEvents) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range b.owners {
		var parts []string
		reason := reasonApplied
		switch {
		case len(o.updated) == 0:
			reason = string(Created)
		case len(o.created) == 0:
			reason = string(Updated)
		}
		if len(o.created) > 0 {
			parts = append(parts, "Created "+strings.Join(o.created, ", "))
		}
		if len(o.updated) > 0 {
			parts = append(parts, "Updated "+strings.Join(o.updated, ", "))
		}
		o.rec.Eventf(o.owner, nil, corev1.EventTypeNormal, reason, "Apply", "%s", strings.Join(parts, "; "))
	}
	b.owners = nil
}
