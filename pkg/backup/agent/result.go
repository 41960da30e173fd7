package agent

import "time"

// BackupResult is the one JSON line `operator backup` prints on success and
// writes to its termination message. Its fields are those of
// v1beta1.BackupRecord (the controller decodes it into one), plus the
// retention outcome. It leaves out the manifest's copy of the instance spec
// on purpose: a termination message is cut at 4096 bytes.
type BackupResult struct {
	ID             string    `json:"id"`
	StartTime      time.Time `json:"startTime"`
	CompletionTime time.Time `json:"completionTime"`
	SizeBytes      int64     `json:"sizeBytes"`
	SHA256         string    `json:"sha256"`
	// Location is the run's key prefix, relative to the destination (the S3
	// bucket or the mounted directory).
	Location string `json:"location"`
	// Pruned lists the ids retention deleted after this run.
	Pruned []string `json:"pruned,omitempty"`
	// PruneError reports a retention failure; the backup itself succeeded.
	PruneError string `json:"pruneError,omitempty"`
}

// RestoreResult is the one JSON line `operator restore` prints on success.
type RestoreResult struct {
	ID             string    `json:"id"`
	Target         string    `json:"target"`
	CompletionTime time.Time `json:"completionTime"`
	// Skipped: with --once, the target already held this backup.
	Skipped bool `json:"skipped,omitempty"`
}
