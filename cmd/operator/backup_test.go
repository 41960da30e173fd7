package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/backup/agent"
	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

func TestAgentFlagValidation(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--namespace=team-a", "--instance=web", "--termination-log="}
	for _, tc := range []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no destination", []string{"backup", "--config-dir=" + dir}, "no destination"},
		{"two destinations", []string{"backup", "--config-dir=" + dir, "--pvc-path=" + dir, "--s3-endpoint=s3:9000", "--s3-bucket=b"}, "exactly one destination"},
		{"s3 without bucket", []string{"backup", "--config-dir=" + dir, "--s3-endpoint=s3:9000"}, "--s3-endpoint and --s3-bucket"},
		{"s3 without endpoint", []string{"backup", "--config-dir=" + dir, "--s3-bucket=b", "--s3-insecure"}, "--s3-endpoint and --s3-bucket"},
		{"nothing to back up", []string{"backup", "--pvc-path=" + dir}, "nothing to back up"},
		{"negative keep-last", []string{"backup", "--pvc-path=" + dir, "--config-dir=" + dir, "--keep-last=-1"}, "--keep-last"},
		{"bad spec file", []string{"backup", "--pvc-path=" + dir, "--config-dir=" + dir, "--spec-file=" + filepath.Join(dir, "missing")}, "--spec-file"},
		{"unexpected argument", []string{"backup", "--pvc-path=" + dir, "--config-dir=" + dir, "extra"}, "unexpected arguments"},
		{"unknown flag", []string{"restore", "--frobnicate"}, "flag provided but not defined"},
		{"restore without id", []string{"restore", "--pvc-path=" + dir, "--target=" + dir}, "--id is required"},
		{"restore without target", []string{"restore", "--pvc-path=" + dir, "--id=x"}, "--target is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, tc.args...), common...)
			var stdout, stderr bytes.Buffer
			if code := dispatch(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.wantStderr) || stdout.Len() != 0 {
				t.Errorf("code %d stdout %q stderr %q; want code 2, stderr containing %q", code, stdout.String(), stderr.String(), tc.wantStderr)
			}
		})
	}

	t.Run("namespace and instance are required", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := dispatch([]string{"backup", "--pvc-path=" + dir, "--config-dir=" + dir}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--namespace is required") || !strings.Contains(stderr.String(), "--instance is required") {
			t.Errorf("code %d stderr %q", code, stderr.String())
		}
	})
	t.Run("s3 credentials come from the environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"backup", "--s3-endpoint=127.0.0.1:1", "--s3-bucket=backups", "--config-dir=" + dir}, common...), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "AWS_ACCESS_KEY_ID") {
			t.Errorf("code %d stderr %q", code, stderr.String())
		}
	})
	// A failed run's last log lines become its pod's termination message,
	// which the NginxBackup's BackupFailed condition quotes: unreachable
	// storage must be named there.
	t.Run("unreachable storage is named", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "id")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"backup", "--s3-endpoint=127.0.0.1:1", "--s3-insecure", "--s3-bucket=backups", "--config-dir=" + dir}, common...), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "127.0.0.1:1") || !strings.Contains(stderr.String(), "connection refused") || stdout.Len() != 0 {
			t.Errorf("code %d stdout %q stderr %q; want code 1 and an error naming the endpoint", code, stdout.String(), stderr.String())
		}
	})
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBackupThenRestoreThroughTheSubcommands runs the agent as the Jobs do,
// with a local destination and with a real S3 server, and checks the
// reported result, the termination message, retention and the restore.
func TestBackupThenRestoreThroughTheSubcommands(t *testing.T) {
	t.Run("pvc", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "dest")
		roundTrip(t, []string{"--pvc-path=" + dest}, func(key string) bool {
			_, err := os.Stat(filepath.Join(dest, filepath.FromSlash(key)))
			return err == nil
		})
	})
	t.Run("s3", func(t *testing.T) {
		endpoint := tools.StartVersitygw(t)
		st, err := storage.NewS3(storage.S3Config{Endpoint: endpoint, Bucket: "backups", Region: "us-east-1", Insecure: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.EnsureBucket(context.Background(), "us-east-1"); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, []string{"--s3-endpoint=" + endpoint, "--s3-bucket=backups", "--s3-region=us-east-1", "--s3-insecure"}, func(key string) bool {
			keys, err := st.List(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			return len(keys) > 0
		})
	})
}

// roundTrip backs up three times with --keep-last=2 to the destination that
// dest names, then restores; stored reports whether a key prefix exists there.
func roundTrip(t *testing.T, dest []string, stored func(prefix string) bool) {
	tmp := t.TempDir()
	config, content, target := filepath.Join(tmp, "config"), filepath.Join(tmp, "content"), filepath.Join(tmp, "target")
	writeTree(t, config, map[string]string{"nginx.conf": "events {}\n"})
	want := map[string]string{"index.html": "<h1>hi</h1>", "assets/app.js": "x()", "empty": "", "bin": "\x00\x01\xff"}
	writeTree(t, content, want)
	writeTree(t, target, map[string]string{"old.html": "stale"})
	spec := filepath.Join(tmp, "spec.json")
	if err := os.WriteFile(spec, []byte(`{"image":"nginx:1.27"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	termLog := filepath.Join(tmp, "termination-log")
	loc := append([]string{"--prefix=backups", "--namespace=team-a", "--instance=web"}, dest...)

	var results []agent.BackupResult
	for i := range 3 {
		var stdout, stderr bytes.Buffer
		args := append([]string{"backup", "--config-dir=" + config, "--content-dir=" + content, "--image=nginx:1.27",
			"--spec-file=" + spec, "--keep-last=2", "--termination-log=" + termLog}, loc...)
		if code := dispatch(args, &stdout, &stderr); code != 0 {
			t.Fatalf("backup %d: exit %d: %s", i, code, stderr.String())
		}
		if strings.Count(stdout.String(), "\n") != 1 {
			t.Fatalf("backup %d: want one JSON line, got %q", i, stdout.String())
		}
		var res agent.BackupResult
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.ID == "" || res.SizeBytes <= 0 || len(res.SHA256) != 64 || !strings.HasPrefix(res.Location, "backups/team-a/web/"+res.ID) {
			t.Errorf("backup %d: result %+v", i, res)
		}
		if msg, err := os.ReadFile(termLog); err != nil || string(msg) != stdout.String() {
			t.Errorf("backup %d: termination log %q (%v), want %q", i, msg, err, stdout.String())
		}
		results = append(results, res)
	}
	if last := results[2]; len(last.Pruned) != 1 || last.Pruned[0] != results[0].ID || last.PruneError != "" {
		t.Errorf("third run pruned %v (%s), want [%s]", last.Pruned, last.PruneError, results[0].ID)
	}
	for i, res := range results {
		if got, want := stored(res.Location), i > 0; got != want {
			t.Errorf("run %d stored: %v, want %v", i, got, want)
		}
	}

	var stdout, stderr bytes.Buffer
	args := append([]string{"restore", "--id=" + results[2].ID, "--target=" + target, "--termination-log="}, loc...)
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr.String())
	}
	var res agent.RestoreResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.ID != results[2].ID || res.Target != target {
		t.Errorf("restore result %q (%v)", stdout.String(), err)
	}
	got := readTree(t, target)
	if len(got) != len(want) {
		t.Errorf("restored tree %v, want %v", got, want)
	}
	for name, body := range want {
		if got[name] != body {
			t.Errorf("restored %s = %q, want %q", name, got[name], body)
		}
	}

	// A pruned (or unknown) id is refused with a clear error, target untouched.
	stdout.Reset()
	stderr.Reset()
	args = append([]string{"restore", "--id=" + results[0].ID, "--target=" + target, "--termination-log="}, loc...)
	if code := dispatch(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "incomplete") || stdout.Len() != 0 {
		t.Errorf("restore of a pruned id: code %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
	if after := readTree(t, target); len(after) != len(want) {
		t.Errorf("a refused restore changed the target: %v", after)
	}

	// --once restores an id once: a second run (the init container on the
	// pod's next start) leaves the content, changed since, alone.
	once := func() agent.RestoreResult {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"restore", "--once", "--id=" + results[1].ID, "--target=" + target, "--termination-log="}, loc...)
		if code := dispatch(args, &stdout, &stderr); code != 0 {
			t.Fatalf("restore --once: exit %d: %s", code, stderr.String())
		}
		var res agent.RestoreResult
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := once(); res.Skipped {
		t.Errorf("first restore --once of %s was skipped", results[1].ID)
	}
	if got := agent.RestoredID(target); got != results[1].ID {
		t.Errorf("marker = %q, want %s", got, results[1].ID)
	}
	writeTree(t, target, map[string]string{"index.html": "edited since"})
	if res := once(); !res.Skipped {
		t.Errorf("second restore --once of %s was not skipped", results[1].ID)
	}
	if got := readTree(t, target)["index.html"]; got != "edited since" {
		t.Errorf("a skipped restore changed the content: index.html = %q", got)
	}
}
