package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewRejectsUnknownFormatAndLevel(t *testing.T) {
	for _, tc := range []struct{ format, level, want string }{
		{"xml", "info", `unknown log format "xml"`},
		{"json", "loud", `unknown log level "loud"`},
	} {
		if _, err := New(&bytes.Buffer{}, tc.format, tc.level); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q, %q) error = %v, want it to contain %q", tc.format, tc.level, err, tc.want)
		}
	}
}

func TestLogrBridgeHonoursLevelAndKeepsNamesAndValues(t *testing.T) {
	var buf bytes.Buffer
	kit, err := New(&buf, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	log := ToLogr(kit, Verbosity("info")).WithName("controller").WithName("nginx").WithValues("namespace", "team-a")
	log.V(1).Info("debug record is filtered at info level")
	log.Info("reconciled", "name", "web")
	log.Error(errors.New("boom"), "apply failed")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d records, want 2 (the V(1) record must be filtered):\n%s", len(lines), buf.String())
	}
	var info, failure map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &info); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &failure); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"level": "info", "logger": "controller.nginx", "namespace": "team-a", "name": "web", "msg": "reconciled"} {
		if info[k] != want {
			t.Errorf("info record %s = %v, want %q", k, info[k], want)
		}
	}
	if failure["level"] != "error" || failure["err"] != "boom" {
		t.Errorf("error record = %v, want level=error err=boom", failure)
	}
}

func TestDebugLevelLetsVerboseRecordsThrough(t *testing.T) {
	var buf bytes.Buffer
	kit, err := New(&buf, "logfmt", "debug")
	if err != nil {
		t.Fatal(err)
	}
	log := ToLogr(kit, Verbosity("debug"))
	log.V(2).Info("cache synced", "kind", "Secret")
	log.V(MaxDebugVerbosity + 1).Info("request body dump")
	got := buf.String()
	if !strings.Contains(got, "level=debug") || !strings.Contains(got, "kind=Secret") {
		t.Errorf("got %q, want a debug logfmt record with kind=Secret", got)
	}
	if strings.Contains(got, "request body dump") {
		t.Errorf("got %q: a record above the debug verbosity was logged", got)
	}
}

// controller-runtime logs why a probe failed as a slice of structs, which
// go-logfmt alone replaces with "unsupported value type": the kubelet's
// probes of a real pod showed it.
func TestLogfmtWritesSlicesMapsAndStructsReadably(t *testing.T) {
	var buf bytes.Buffer
	kit, err := New(&buf, "logfmt", "info")
	if err != nil {
		t.Fatal(err)
	}
	type status struct {
		name    string
		healthy bool
	}
	n := 3
	ToLogr(kit, 0).Info("healthz check failed", "statuses", []status{{"readyz", false}}, "counts", map[string]int{"a": 1}, "n", &n, "err", errors.New("boom"))
	out := buf.String()
	if strings.Contains(out, "unsupported value type") {
		t.Fatalf("a value was lost:\n%s", out)
	}
	for _, want := range []string{`statuses="[{name:readyz healthy:false}]"`, `counts=map[a:1]`, "n=3", "err=boom", `msg="healthz check failed"`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
}
