package reloader

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// pushable is a running reloader with a working copy, the volume it
// follows and the server of its pushes.
type pushable struct {
	r    *Reloader
	url  string
	port int
	key  []byte
	vol  *volume
	conf func(body string) string
}

// startPushable starts a reloader whose volume shows the configuration
// answering "one" with revision (none when ""), until t's cleanup.
func startPushable(t *testing.T, revision string) *pushable {
	nginxBin, dir := nginxAndDir(t)
	p, err := tools.FreePort()
	tools.Must(t, err)
	confDir := filepath.Join(dir, "config")
	tools.Must(t, os.Mkdir(confDir, 0o755))
	f := &pushable{port: p, key: []byte(strings.Repeat("k", 64)), vol: &volume{t: t, dir: confDir},
		conf: func(body string) string { return config(dir, p, body, "http://127.0.0.1:9") }}
	f.show("one", revision)
	work := filepath.Join(dir, "work.conf")
	f.r = New(Options{Nginx: nginxBin, Args: []string{"-p", dir, "-c", work, "-g", "daemon off;"},
		Config: filepath.Join(confDir, "nginx.conf"), Work: work, PushKey: filepath.Join(confDir, "push-key"),
		Watch: []string{confDir}, Interval: 50 * time.Millisecond, Logf: t.Logf})
	runUntilCleanup(t, f.r)
	srv := httptest.NewServer(http.HandlerFunc(f.r.ServeConfig))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	servesOn(t, p, "one")
	return f
}

// show has the volume show the configuration answering body, with the
// push key and revision (none when "").
func (f *pushable) show(body, revision string) {
	files := map[string]string{"nginx.conf": f.conf(body), "push-key": string(f.key) + "\n"}
	if revision != "" {
		files[RevisionFile] = revision
	}
	f.vol.write(files)
}

// pushRevision PUTs config as pushTo does, with revision signed under
// revisionKey, and returns the HTTP status and the reloader's Status.
func pushRevision(t *testing.T, url string, key, revisionKey, config []byte, revision uint64) (int, Status) {
	t.Helper()
	return put(t, url, config, map[string]string{SignatureHeader: Sign(key, config),
		RevisionHeader: strconv.FormatUint(revision, 10), RevisionSignatureHeader: SignRevision(revisionKey, revision, config)})
}

// The revision beside each configuration orders what the volume shows
// against what was pushed: a volume that shows revision 2 after revision 3
// was pushed (the kubelet's copy of the Secret lagging, a configuration
// this pod was never pushed) takes nothing back and reloads nothing, nor
// does a push below the revision served (delayed or replayed); a
// revision signed with another key is refused; a higher revision the
// volume brings is followed.
func TestRevisionsKeepALaggingVolumeFromTakingNginxBack(t *testing.T) {
	f := startPushable(t, "1")
	r, p, key, conf, url, show := f.r, f.port, f.key, f.conf, f.url, f.show

	if code, st := pushRevision(t, url, key, key, []byte(conf("three")), 3); code != http.StatusOK || st.Reloads != 1 {
		t.Fatalf("push of revision 3: %d %+v, want 200 after 1 reload", code, st)
	}
	if code, _ := pushRevision(t, url, key, []byte("other"), []byte(conf("nine")), 9); code != http.StatusForbidden {
		t.Errorf("a revision signed with another key: %d, want 403", code)
	}
	show("two", "2")
	time.Sleep(500 * time.Millisecond)
	if got, _ := answer(p, "/"); got != "three" {
		t.Fatalf("after the volume showed revision 2, never pushed, nginx serves %q, want three", got)
	}
	show("three", "3")
	if code, st := pushRevision(t, url, key, key, []byte(conf("two")), 2); code != http.StatusOK || st.Hash != ConfigHash([]byte(conf("three"))) {
		t.Errorf("a push of revision 2 after 3: %d %+v, want 200 with three served", code, st)
	}
	time.Sleep(500 * time.Millisecond)
	if st := r.Status(); st.Reloads != 1 {
		t.Errorf("%d reloads for one push of a new revision, a lagging volume, the volume catching up and a stale push; want 1", st.Reloads)
	}
	show("four", "4")
	servesOn(t, p, "four")
}

// pushTo PUTs config to the reloader behind url, signed with key, and
// returns the HTTP status and the reloader's Status when it answered one.
func pushTo(t *testing.T, url string, key, config []byte, signature string) (int, Status) {
	t.Helper()
	if signature == "" {
		signature = Sign(key, config)
	}
	return put(t, url, config, map[string]string{SignatureHeader: signature})
}

// put PUTs config with headers to the reloader behind url.
func put(t *testing.T, url string, config []byte, headers map[string]string) (int, Status) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url+ConfigPath, bytes.NewReader(config))
	tools.Must(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
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
	f := startPushable(t, "")
	r, p, key, conf, url, show := f.r, f.port, f.key, f.conf, f.url, f.show

	code, st := pushTo(t, url, key, []byte(conf("two")), "")
	if want := ConfigHash([]byte(conf("two"))); code != http.StatusOK || st.Hash != want || st.Reloads != 1 {
		t.Fatalf("push of two: %d %+v, want 200 and hash %s after 1 reload", code, st, want)
	}
	if got, err := answer(p, "/"); got != "two" {
		t.Fatalf("once the push was answered nginx serves %q (%v), want two", got, err)
	}
	for name, signature := range map[string]string{"another key's": Sign([]byte("other"), []byte(conf("evil"))), "no": "none"} {
		if code, _ := pushTo(t, url, key, []byte(conf("evil")), signature); code != http.StatusForbidden {
			t.Errorf("a push with %s signature: %d, want 403", name, code)
		}
	}

	// The volume catches up with the push: nothing to reload.
	show("two", "")
	pushTo(t, url, key, []byte(conf("three")), "")
	pushTo(t, url, key, []byte(conf("four")), "")
	// The volume shows three, pushed before four: ignored.
	show("three", "")
	time.Sleep(500 * time.Millisecond)
	if got, _ := answer(p, "/"); got != "four" {
		t.Fatalf("after the volume showed an earlier push nginx serves %q, want four", got)
	}
	if st := r.Status(); st.Reloads != 3 || st.Pushes != 3 {
		t.Errorf("%d reloads and %d pushes for pushes two, three and four and late volumes, want 3 and 3", st.Reloads, st.Pushes)
	}
	// A configuration the volume brings that was never pushed is followed.
	show("five", "")
	servesOn(t, p, "five")

	refused := strings.Replace(conf("six"), "events {}", "events {}\nnot_a_directive on;", 1)
	code, st = pushTo(t, url, key, []byte(refused), "")
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
