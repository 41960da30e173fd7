// Package agent is the core of the operator's `backup` and `restore`
// subcommands: it archives an instance's configuration and content into an
// artifact under <prefix>/<namespace>/<instance>/<id>/, uploads it to a
// storage.Storage, restores it after verifying every checksum, and prunes old
// artifacts. RunBackup and RunRestore are whole runs of those subcommands
// (retention, the restore-once marker), and WriteResult reports a run's result
// the way the controller reads it.
//
// An artifact is three objects, written in this order:
//
//	config.tar.gz   rendered nginx.conf and the referenced ConfigMaps' files
//	content.tar.gz  the content volume's tree
//	manifest.json   written LAST: a run is complete iff its manifest exists
//
// Symlinks: a symlink is archived only if it resolves (following every link
// in the chain) to a path inside the archived root; a dangling or escaping
// symlink makes Backup fail with an error naming it, rather than silently
// producing a backup that differs from what nginx serves. Restore applies the
// same rule to what it extracted before anything reaches the target.
package agent
