package reloader

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// pushTo PUTs config to the reloader behind url, signed with key, and
// returns the HTTP status and the reloader's Status when it answered one.
func pushTo(t *testing.T, url string, key, config []byte, signature string) (int, Status) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url+ConfigPath, bytes.NewReader(config))
	tools.Must(t, err)
	if signature == "" {
		signature = Sign(key, config)
	}
	req.Header.Set(SignatureHeader, signature)
	resp, err := http.DefaultClient.Do(req)
	tools.Must(t, err)
	defer resp.Body.Close()
	var st Status
	if resp.StatusCode == http.StatusOK {
		tools.Must(t, json.NewDecoder(resp.Body).Decode(&st))
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, st
}

// A configuration pushed with the pod's key is loaded before the push is
// answered; one signed with anything else is refused and nothing changes;
// the volume catching up with pushes already served takes nothing back,
// while a configuration it brings that was never pushed is loaded; a pushed
// configuration nginx refuses is answered with the refusal, the old one
// serving on.
func TestPushedConfigurationsAreLoadedAndLateVolumesTakeNothingBack(t *testing.T) {
	nginxBin, dir := nginxAndDir(t)
	p, err := tools.FreePort()
	tools.Must(t, err)
	confDir := filepath.Join(dir, "config")
	tools.Must(t, os.Mkdir(confDir, 0o755))
	key := []byte(strings.Repeat("k", 64))
	conf := func(body string) string { return config(dir, p, body, "http://127.0.0.1:9") }
	vol := &volume{t: t, dir: confDir}
	vol.write(map[string]string{"nginx.conf": conf("one"), "push-key": string(key) + "\n"})
	work := filepath.Join(dir, "work.conf")
	r := New(Options{Nginx: nginxBin, Args: []string{"-p", dir, "-c", work, "-g", "daemon off;"},
		Config: filepath.Join(confDir, "nginx.conf"), Work: work, PushKey: filepath.Join(confDir, "push-key"),
		Watch: []string{confDir}, Interval: 50 * time.Millisecond, Logf: t.Logf})
	runUntilCleanup(t, r)
	srv := httptest.NewServer(http.HandlerFunc(r.ServeConfig))
	defer srv.Close()
	servesOn(t, p, "one")

	code, st := pushTo(t, srv.URL, key, []byte(conf("two")), "")
	if want := ConfigHash([]byte(conf("two"))); code != http.StatusOK || st.Hash != want || st.Reloads != 1 {
		t.Fatalf("push of two: %d %+v, want 200 and hash %s after 1 reload", code, st, want)
	}
	if got, err := answer(p, "/"); got != "two" {
		t.Fatalf("once the push was answered nginx serves %q (%v), want two", got, err)
	}
	for name, signature := range map[string]string{"another key's": Sign([]byte("other"), []byte(conf("evil"))), "no": "none"} {
		if code, _ := pushTo(t, srv.URL, key, []byte(conf("evil")), signature); code != http.StatusForbidden {
			t.Errorf("a push with %s signature: %d, want 403", name, code)
		}
	}

	// The volume catches up with the push: nothing to reload.
	vol.write(map[string]string{"nginx.conf": conf("two"), "push-key": string(key) + "\n"})
	pushTo(t, srv.URL, key, []byte(conf("three")), "")
	pushTo(t, srv.URL, key, []byte(conf("four")), "")
	// The volume shows three, pushed before four: ignored.
	vol.write(map[string]string{"nginx.conf": conf("three"), "push-key": string(key) + "\n"})
	time.Sleep(500 * time.Millisecond)
	if got, _ := answer(p, "/"); got != "four" {
		t.Fatalf("after the volume showed an earlier push nginx serves %q, want four", got)
	}
	if st := r.Status(); st.Reloads != 3 || st.Pushes != 3 {
		t.Errorf("%d reloads and %d pushes for pushes two, three and four and late volumes, want 3 and 3", st.Reloads, st.Pushes)
	}
	// A configuration the volume brings that was never pushed is followed.
	vol.write(map[string]string{"nginx.conf": conf("five"), "push-key": string(key) + "\n"})
	servesOn(t, p, "five")

	refused := strings.Replace(conf("six"), "events {}", "events {}\nnot_a_directive on;", 1)
	code, st = pushTo(t, srv.URL, key, []byte(refused), "")
	if code != http.StatusOK || st.LastReloadSuccessful || st.RejectedHash != ConfigHash([]byte(refused)) ||
		!strings.Contains(st.Error, "not_a_directive") {
		t.Errorf("push of a configuration nginx refuses: %d %+v", code, st)
	}
	if got, _ := answer(p, "/"); got != "five" {
		t.Errorf("after a refused push nginx serves %q, want five", got)
	}
}

// A reloader running nginx from the mounted file takes no push, and one
// without a key refuses every push.
func TestPushesNeedAWorkingCopyAndAKey(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	tools.Must(t, os.WriteFile(key, []byte("k"), 0o600))
	for _, c := range []struct {
		name   string
		opts   Options
		config []byte
		want   int
	}{
		{"no working copy", Options{Config: filepath.Join(dir, "nginx.conf")}, []byte("events {}"), http.StatusNotFound},
		{"no key", Options{Config: filepath.Join(dir, "nginx.conf"), Work: filepath.Join(dir, "work"), PushKey: filepath.Join(dir, "missing")}, []byte("events {}"), http.StatusForbidden},
		{"more than a Secret carries", Options{Config: filepath.Join(dir, "nginx.conf"), Work: filepath.Join(dir, "work"), PushKey: key},
			bytes.Repeat([]byte("#"), MaxPushedConfig+1), http.StatusRequestEntityTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(New(c.opts).ServeConfig))
			defer srv.Close()
			if code, _ := pushTo(t, srv.URL, []byte("k"), c.config, ""); code != c.want {
				t.Errorf("push: %d, want %d", code, c.want)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(New(Options{}).ServeConfig))
	defer srv.Close()
	resp, err := http.Get(srv.URL + ConfigPath)
	tools.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want %d", ConfigPath, resp.StatusCode, http.StatusMethodNotAllowed)
	}
}
