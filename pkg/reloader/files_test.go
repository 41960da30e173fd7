package reloader

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The manifest heads nginx.conf as comments, names each file once with
// its digest, and is read back as written; a line naming a file outside
// the files directory, or without a digest, is refused, and a
// configuration without a manifest needs no file.
func TestTheFilesManifestIsReadAsWrittenAndNamesNothingOutsideTheDirectory(t *testing.T) {
	files := []File{{Name: "tls_web_tls.crt", SHA256: Digest([]byte("cert"))}, {Name: "auth_users_auth", SHA256: Digest([]byte("users"))}}
	config := WithManifest([]byte("events {}\n# file not_the_manifest "+Digest(nil)+"\n"), files)
	if !strings.HasPrefix(string(config), "# ") || !strings.HasSuffix(string(config), "events {}\n# file not_the_manifest "+Digest(nil)+"\n") {
		t.Errorf("the manifest does not head the configuration as comments:\n%s", config)
	}
	got, err := ManifestOf(config)
	tools.Must(t, err)
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("manifest read back (-want +got):\n%s", diff)
	}
	if got, err := ManifestOf([]byte("events {}\n")); err != nil || got != nil {
		t.Errorf("a configuration without a manifest: %v, %v; want none", got, err)
	}
	if string(WithManifest([]byte("events {}\n"), nil)) != "events {}\n" {
		t.Error("no files: the configuration changed")
	}
	for _, line := range []string{
		"# file ../etc/passwd " + Digest(nil),
		"# file a/b " + Digest(nil),
		"# file ..data " + Digest(nil),
		"# file tls.crt",
		"# file tls.crt 1234",
		"# file tls.crt " + strings.Repeat("z", 64),
	} {
		if _, err := ManifestOf([]byte(line + "\nevents {}\n")); err == nil {
			t.Errorf("manifest line %q accepted", line)
		}
	}
}

// A configuration that names files the pod does not have yet is neither
// refused nor loaded: pushed, it is answered with what it waits for while
// nginx serves the one before; a file of other content than the manifest
// says (the kubelet still shows the old certificate) is waited for too;
// once the files volume holds every file with its digest, it is loaded on
// inotify's word. A configuration the config volume brings waits alike,
// and so does one whose file is taken away under it: no reload is tried,
// no refusal reported.
func TestAConfigurationWaitsForTheFilesItsManifestNames(t *testing.T) {
	nginxBin, dir := nginxAndDir(t)
	p, err := tools.FreePort()
	tools.Must(t, err)
	confDir, filesDir := filepath.Join(dir, "config"), filepath.Join(dir, "files")
	tools.Must(t, os.Mkdir(confDir, 0o755))
	tools.Must(t, os.Mkdir(filesDir, 0o755))
	key := []byte(strings.Repeat("k", 64))
	_, certA, keyA, err := tools.ServingCert("a.example")
	tools.Must(t, err)
	_, certB, keyB, err := tools.ServingCert("b.example")
	tools.Must(t, err)
	// plain serves body; withTLS adds a TLS server of the files named
	// after tag, with the manifest of their content.
	plain := func(body string) string { return config(dir, p, body, "http://127.0.0.1:9") }
	tlsPort, err := tools.FreePort()
	tools.Must(t, err)
	withTLS := func(body, tag string, cert, key []byte) []byte {
		crt, k := "tls_"+tag+"_tls.crt", "tls_"+tag+"_tls.key"
		server := fmt.Sprintf("    server {\n        listen 127.0.0.1:%d ssl;\n        ssl_certificate %s;\n        ssl_certificate_key %s;\n        return 200 \"tls\";\n    }\n}\n",
			tlsPort, filepath.Join(filesDir, crt), filepath.Join(filesDir, k))
		text := strings.TrimSuffix(plain(body), "}\n") + server
		return WithManifest([]byte(text), []File{{Name: crt, SHA256: Digest(cert)}, {Name: k, SHA256: Digest(key)}})
	}
	conf := &volume{t: t, dir: confDir}
	conf.write(map[string]string{"nginx.conf": plain("one"), "push-key": string(key)})
	files := &volume{t: t, dir: filesDir}
	files.write(map[string]string{"unrelated": "x"})
	work := filepath.Join(dir, "work.conf")
	r := New(Options{Nginx: nginxBin, Args: []string{"-p", dir, "-c", work, "-g", "daemon off;"},
		Config: filepath.Join(confDir, "nginx.conf"), Work: work, PushKey: filepath.Join(confDir, "push-key"),
		Watch: []string{confDir}, Files: filesDir, Interval: time.Hour, Logf: t.Logf})
	runUntilCleanup(t, r)
	srv := httptest.NewServer(http.HandlerFunc(r.ServeConfig))
	defer srv.Close()
	servesOn(t, p, "one")
	one := ConfigHash([]byte(plain("one")))

	// Pushed before its files: answered at once, waiting; one serves on.
	two := withTLS("two", "a", certA, keyA)
	code, st := pushTo(t, srv.URL, key, two, "")
	want := Status{Hash: one, LastReloadSuccessful: true, Pushes: 1, WaitingHash: ConfigHash(two), WaitingFor: []string{"tls_a_tls.crt", "tls_a_tls.key"}}
	if diff := cmp.Diff(want, st); code != http.StatusOK || diff != "" {
		t.Fatalf("push of a configuration before its files: %d, status (-want +got):\n%s", code, diff)
	}
	if got, _ := answer(p, "/"); got != "one" {
		t.Fatalf("while its files are missing nginx serves %q, want one", got)
	}
	if m := string(r.Metrics()); !strings.Contains(m, "reloader_waiting_files 2\n") {
		t.Errorf("metrics while waiting for two files:\n%s", m)
	}
	// The kubelet shows another certificate first (the key is right): it
	// waits for the certificate alone.
	files.write(map[string]string{"tls_a_tls.crt": string(certB), "tls_a_tls.key": string(keyA)})
	tools.Eventually(t, 10*time.Second, "waiting for the certificate alone", func() error {
		if st := r.Status(); st.WaitingHash != ConfigHash(two) || !slices.Equal(st.WaitingFor, []string{"tls_a_tls.crt"}) {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	// Then the files as the manifest has them: loaded without a poll (the
	// interval is an hour).
	files.write(map[string]string{"tls_a_tls.crt": string(certA), "tls_a_tls.key": string(keyA)})
	servesOn(t, p, "two")
	if st := r.Status(); st.Hash != ConfigHash(two) || st.WaitingHash != "" || st.WaitingFor != nil || st.Failures != 0 || st.Reloads != 1 {
		t.Errorf("once its files came: %+v, want two loaded in one reload, waiting for nothing", st)
	}

	// A rotation: the files change first, under a configuration whose
	// manifest has the old ones: nothing is reloaded (nginx keeps the
	// certificate it loaded); the volume then brings the configuration of
	// the new files, which loads.
	files.write(map[string]string{"tls_a_tls.crt": string(certB), "tls_a_tls.key": string(keyB)})
	time.Sleep(500 * time.Millisecond) // a window in which no reload may happen
	if st := r.Status(); st.Reloads != 1 || st.Failures != 0 {
		t.Errorf("files changed under the loaded configuration: %+v, want no reload tried", st)
	}
	three := withTLS("three", "a", certB, keyB)
	conf.write(map[string]string{"nginx.conf": string(three), "push-key": string(key)})
	servesOn(t, p, "three")

	// A configuration whose file is taken away before it is replaced: no
	// reload is tried (nginx -t would refuse it), none is reported.
	files.write(map[string]string{"unrelated": "x"})
	time.Sleep(500 * time.Millisecond) // a window in which no reload may happen
	if st := r.Status(); st.Reloads != 2 || st.Failures != 0 || !st.LastReloadSuccessful || st.Hash != ConfigHash(three) || st.WaitingHash != "" {
		t.Errorf("the loaded configuration's files taken away: %+v, want three loaded still, no reload tried", st)
	}
	code, st = pushTo(t, srv.URL, key, []byte(plain("four")), "")
	if code != http.StatusOK || st.Hash != ConfigHash([]byte(plain("four"))) || st.WaitingHash != "" {
		t.Errorf("push of a configuration that names no file: %d %+v", code, st)
	}
}
