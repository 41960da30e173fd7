package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/nginx-operator/nginx-operator/pkg/backup/agent"
	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
	"github.com/nginx-operator/nginx-operator/pkg/version"
)

// agentFlags are the flags `backup` and `restore` share: where the artifacts
// live and whose they are.
type agentFlags struct {
	pvcPath        string
	s3             storage.S3Config
	prefix         string
	namespace      string
	instance       string
	terminationLog string
}

func (f *agentFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.pvcPath, "pvc-path", "", "destination: a mounted directory (the pvc destination)")
	fs.StringVar(&f.s3.Endpoint, "s3-endpoint", "", "destination: S3 endpoint host[:port], no scheme; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	fs.StringVar(&f.s3.Bucket, "s3-bucket", "", "S3 bucket (with --s3-endpoint)")
	fs.StringVar(&f.s3.Region, "s3-region", "", "S3 region (with --s3-endpoint)")
	fs.BoolVar(&f.s3.Insecure, "s3-insecure", false, "use plain HTTP instead of HTTPS (with --s3-endpoint)")
	fs.StringVar(&f.prefix, "prefix", "", "key prefix under which artifacts are stored")
	fs.StringVar(&f.namespace, "namespace", "", "namespace of the instance (required)")
	fs.StringVar(&f.instance, "instance", "", "name of the NginxOperator instance (required)")
	fs.StringVar(&f.terminationLog, "termination-log", agent.DefaultTerminationLog, `also write the result here ("" disables; skipped when not writable)`)
}

func (f *agentFlags) validate() error {
	var errs []error
	s3 := f.s3.Endpoint != "" || f.s3.Bucket != "" || f.s3.Region != "" || f.s3.Insecure
	switch {
	case f.pvcPath != "" && s3:
		errs = append(errs, errors.New("--pvc-path cannot be combined with the --s3-* flags: give exactly one destination"))
	case f.pvcPath == "" && !s3:
		errs = append(errs, errors.New("no destination: give --pvc-path or --s3-endpoint and --s3-bucket"))
	case s3 && (f.s3.Endpoint == "" || f.s3.Bucket == ""):
		errs = append(errs, errors.New("an S3 destination needs both --s3-endpoint and --s3-bucket"))
	}
	if f.namespace == "" {
		errs = append(errs, errors.New("--namespace is required"))
	}
	if f.instance == "" {
		errs = append(errs, errors.New("--instance is required"))
	}
	return errors.Join(errs...)
}

func (f *agentFlags) location() agent.Location {
	return agent.Location{Prefix: f.prefix, Namespace: f.namespace, Instance: f.instance}
}

// storage opens the destination. An S3 destination needs credentials in the
// environment (the Job takes them from the credentials Secret).
func (f *agentFlags) storage() (storage.Storage, error) {
	if f.pvcPath != "" {
		return storage.NewLocal(f.pvcPath)
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" || os.Getenv("AWS_SECRET_ACCESS_KEY") == "" {
		return nil, errors.New("S3 credentials missing: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return storage.NewS3(f.s3)
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
}

// backupCommand runs `operator backup`: one backup run, then retention.
func backupCommand(args []string, stdout, stderr io.Writer) int {
	var (
		f                            agentFlags
		configDir, contentDir, image string
		specFile, operatorVersion    string
		keepLast                     int
	)
	fs := flag.NewFlagSet("operator backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.bind(fs)
	fs.StringVar(&configDir, "config-dir", "", "directory holding the rendered configuration to back up")
	fs.StringVar(&contentDir, "content-dir", "", "the content volume's root to back up")
	fs.StringVar(&image, "image", "", "the instance's nginx image, recorded in the manifest")
	fs.StringVar(&specFile, "spec-file", "", "file holding the instance's spec as JSON, recorded in the manifest")
	fs.StringVar(&operatorVersion, "operator-version", version.Version, "operator version recorded in the manifest")
	fs.IntVar(&keepLast, "keep-last", 0, "after a successful run keep only the newest N complete backups (0: no pruning)")
	if code, ok := parseAgentFlags(fs, args, stderr); !ok {
		return code
	}
	err := f.validate()
	if configDir == "" && contentDir == "" {
		err = errors.Join(err, errors.New("nothing to back up: give --config-dir and/or --content-dir"))
	}
	if keepLast < 0 {
		err = errors.Join(err, fmt.Errorf("--keep-last must not be negative, got %d", keepLast))
	}
	var spec json.RawMessage
	if specFile != "" {
		b, rerr := os.ReadFile(specFile)
		switch {
		case rerr != nil:
			err = errors.Join(err, fmt.Errorf("--spec-file: %w", rerr))
		case !json.Valid(b):
			err = errors.Join(err, fmt.Errorf("--spec-file %s: not valid JSON", specFile))
		default:
			spec = b
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "operator backup: %v\n", err)
		return 2
	}
	st, err := f.storage()
	if err != nil {
		fmt.Fprintf(stderr, "operator backup: %v\n", err)
		return 1
	}

	ctx, stop := signalContext()
	defer stop()
	res, err := agent.RunBackup(ctx, st, agent.Request{
		Location: f.location(), OperatorVersion: operatorVersion, Image: image, Spec: spec,
		ConfigDir: configDir, ContentDir: contentDir,
	}, keepLast)
	if err != nil {
		fmt.Fprintf(stderr, "operator backup: %v\n", err)
		return 1
	}
	if res.PruneError != "" {
		fmt.Fprintf(stderr, "operator backup: warning: backup %s succeeded but retention failed: %s\n", res.ID, res.PruneError)
	}
	return report(res, f.terminationLog, stdout, stderr)
}

// restoreCommand runs `operator restore`: verify backup --id and replace the
// content of --target with it.
func restoreCommand(args []string, stdout, stderr io.Writer) int {
	var (
		f          agentFlags
		id, target string
		once       bool
	)
	fs := flag.NewFlagSet("operator restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.bind(fs)
	fs.StringVar(&id, "id", "", "id of the backup to restore (required)")
	fs.StringVar(&target, "target", "", "directory whose content is replaced (required)")
	fs.BoolVar(&once, "once", false, "skip when the target already holds this backup (recorded in "+agent.RestoredMarker+"), and record it after restoring")
	if code, ok := parseAgentFlags(fs, args, stderr); !ok {
		return code
	}
	err := f.validate()
	if id == "" {
		err = errors.Join(err, errors.New("--id is required"))
	}
	if target == "" {
		err = errors.Join(err, errors.New("--target is required"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "operator restore: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	res, err := agent.RunRestore(ctx, f.storage, agent.RestoreRequest{Location: f.location(), ID: id, Target: target, Once: once})
	if err != nil {
		fmt.Fprintf(stderr, "operator restore: %v\n", err)
		return 1
	}
	return report(res, f.terminationLog, stdout, stderr)
}

// parseAgentFlags parses args; ok is false when the command must exit with code.
func parseAgentFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments: %v\n", fs.Name(), fs.Args())
		return 2, false
	}
	return 0, true
}

// report prints v as one JSON line and writes it to the termination log (see
// agent.WriteResult).
func report(v any, terminationLog string, stdout, stderr io.Writer) int {
	if err := agent.WriteResult(stdout, terminationLog, v); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// agentCommand dispatches `backup` and `restore`.
func agentCommand(cmd string, args []string, stdout, stderr io.Writer) int {
	if cmd == "restore" {
		return restoreCommand(args, stdout, stderr)
	}
	return backupCommand(args, stdout, stderr)
}
