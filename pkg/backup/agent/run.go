package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
	"github.com/nginx-operator/nginx-operator/pkg/fsutil"
)

// What the `backup` and `restore` subcommands do once their flags are parsed:
// one run, its result, and how the result reaches the controller.

// DefaultTerminationLog is where Kubernetes reads a container's termination
// message from; the controller reads the result of a run there.
const DefaultTerminationLog = "/dev/termination-log"

// RunBackup runs one backup and then, with keepLast > 0, retention. A
// retention failure does not fail the run: the backup is stored, and the
// failure is reported in the result's PruneError.
func RunBackup(ctx context.Context, st storage.Storage, req Request, keepLast int) (BackupResult, error) {
	rec, err := Backup(ctx, st, req)
	if err != nil {
		return BackupResult{}, err
	}
	res := BackupResult{
		ID: rec.ID, StartTime: rec.StartTime, CompletionTime: rec.CompletionTime,
		SizeBytes: rec.SizeBytes, SHA256: rec.SHA256, Location: rec.Location,
	}
	if keepLast > 0 {
		pruned, err := Prune(ctx, st, req.Location, keepLast)
		res.Pruned = pruned
		if err != nil {
			res.PruneError = err.Error()
		}
	}
	return res, nil
}

// RestoreRequest says which backup one restore run puts where.
type RestoreRequest struct {
	Location
	ID     string
	Target string // the directory whose content is replaced
	// Once skips the run when Target's RestoredMarker already names ID, and
	// records ID there after restoring, so a restore init container restores
	// each requested id once and not on every start of its pod.
	Once bool
}

// RunRestore restores req.ID into req.Target. open is called only when there
// is something to restore, so a skipped run needs no storage (nor its
// credentials). The errors read as the end of "operator restore: ".
func RunRestore(ctx context.Context, open func() (storage.Storage, error), req RestoreRequest) (RestoreResult, error) {
	if req.Once && RestoredID(req.Target) == req.ID {
		return RestoreResult{ID: req.ID, Target: req.Target, CompletionTime: time.Now().UTC(), Skipped: true}, nil
	}
	st, err := open()
	if err != nil {
		return RestoreResult{}, err
	}
	if err := Restore(ctx, st, req.Location, req.ID, req.Target); err != nil {
		return RestoreResult{}, fmt.Errorf("%w (the target was left as it was)", err)
	}
	if req.Once {
		if err := MarkRestored(req.Target, req.ID); err != nil {
			// The content is restored; without the marker the next start restores again.
			return RestoreResult{}, fmt.Errorf("backup %s restored, but recording it failed: %w", req.ID, err)
		}
	}
	return RestoreResult{ID: req.ID, Target: req.Target, CompletionTime: time.Now().UTC()}, nil
}

// RestoredID returns the id recorded in target's RestoredMarker ("" if none).
func RestoredID(target string) string {
	b, err := os.ReadFile(filepath.Join(target, RestoredMarker))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// MarkRestored records id in target's RestoredMarker, atomically, so the
// marker names an id only once its content is in place.
func MarkRestored(target, id string) error {
	return fsutil.WriteFile(filepath.Join(target, RestoredMarker), []byte(id+"\n"), 0o644)
}

// WriteResult prints result as one JSON line to w and writes that line to
// terminationLog too ("" disables) when it can: the DefaultTerminationLog
// exists in a pod and is never created outside one, where it is usually not
// writable and silently skipped; any other path is created.
func WriteResult(w io.Writer, terminationLog string, result any) error {
	line, err := json.Marshal(result)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := w.Write(line); err != nil {
		return err
	}
	if terminationLog != "" {
		flags := os.O_WRONLY | os.O_TRUNC
		if terminationLog != DefaultTerminationLog {
			flags |= os.O_CREATE
		}
		if f, err := os.OpenFile(terminationLog, flags, 0o644); err == nil {
			_, _ = f.Write(line)
			_ = f.Close()
		}
	}
	return nil
}
