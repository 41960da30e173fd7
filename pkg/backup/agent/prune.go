package agent

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

// IncompleteGrace is how old a run without a manifest must be before Prune
// deletes its files: younger ones may still be uploading.
const IncompleteGrace = 24 * time.Hour

// Run is one artifact directory found in storage.
type Run struct {
	ID       string
	Time     time.Time
	Complete bool // its manifest exists
	Keys     []string
}

// List returns the runs of an instance, oldest first. Directories whose name
// is not an id this package writes are ignored (never ours to touch).
func List(ctx context.Context, st storage.Storage, loc Location) ([]Run, error) {
	if err := loc.validate(); err != nil {
		return nil, err
	}
	keys, err := st.List(ctx, loc.dir())
	if err != nil {
		return nil, err
	}
	byID := map[string]*Run{}
	for _, k := range keys {
		id, name, ok := strings.Cut(strings.TrimPrefix(k, loc.dir()), "/")
		if !ok {
			continue
		}
		t, err := IDTime(id)
		if err != nil {
			continue
		}
		r := byID[id]
		if r == nil {
			r = &Run{ID: id, Time: t}
			byID[id] = r
		}
		r.Keys = append(r.Keys, k)
		if name == ManifestFile {
			r.Complete = true
		}
	}
	runs := make([]Run, 0, len(byID))
	for _, r := range byID {
		runs = append(runs, *r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	return runs, nil
}

// Prune keeps the newest keepLast complete runs (at least one: the newest
// complete backup is never deleted) and deletes older complete runs, plus
// incomplete runs older than IncompleteGrace. It returns the deleted ids;
// an error deleting one run does not stop the others.
func Prune(ctx context.Context, st storage.Storage, loc Location, keepLast int) ([]string, error) {
	return PruneAt(ctx, st, loc, keepLast, time.Now())
}

// PruneAt is Prune with an explicit clock.
func PruneAt(ctx context.Context, st storage.Storage, loc Location, keepLast int, now time.Time) ([]string, error) {
	keepLast = max(keepLast, 1)
	runs, err := List(ctx, st, loc)
	if err != nil {
		return nil, err
	}
	var deleted []string
	var errs []error
	kept := 0
	for i := len(runs) - 1; i >= 0; i-- { // newest first
		r := runs[i]
		switch {
		case r.Complete && kept < keepLast:
			kept++
			continue
		case !r.Complete && now.Sub(r.Time) < IncompleteGrace:
			continue
		}
		if err := deleteRun(ctx, st, loc, r); err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", r.ID, err))
			continue
		}
		deleted = append(deleted, r.ID)
	}
	return deleted, errors.Join(errs...)
}

// deleteRun removes the manifest first, so a run that is half deleted is
// seen as incomplete and never restored from.
func deleteRun(ctx context.Context, st storage.Storage, loc Location, r Run) error {
	if r.Complete {
		if err := st.Delete(ctx, loc.Key(r.ID, ManifestFile)); err != nil {
			return err
		}
	}
	for _, k := range r.Keys {
		if path.Base(k) == ManifestFile {
			continue
		}
		if err := st.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}
