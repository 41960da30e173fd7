package reloader

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// volume imitates a Secret volume the kubelet updates: files are links
// through ..data to a versioned directory, and an update swaps ..data
// atomically.
type volume struct {
	t       *testing.T
	dir     string
	version int
}

func (v *volume) write(files map[string]string) {
	v.t.Helper()
	v.version++
	versioned := fmt.Sprintf("..v%d", v.version)
	tools.Must(v.t, os.Mkdir(filepath.Join(v.dir, versioned), 0o755))
	for name, content := range files {
		tools.Must(v.t, os.WriteFile(filepath.Join(v.dir, versioned, name), []byte(content), 0o644))
		link := filepath.Join(v.dir, name)
		if _, err := os.Lstat(link); err != nil {
			tools.Must(v.t, os.Symlink(filepath.Join("..data", name), link))
		}
	}
	tmp := filepath.Join(v.dir, "..data_tmp")
	tools.Must(v.t, os.Symlink(versioned, tmp))
	tools.Must(v.t, os.Rename(tmp, filepath.Join(v.dir, "..data")))
}

// config is an nginx.conf answering body on port, with /slow proxied to
// upstream.
func config(dir string, port int, body, upstream string) string {
	return fmt.Sprintf(`pid %[1]s/nginx.pid;
error_log stderr warn;
events {}
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen 127.0.0.1:%[2]d;
        location / { return 200 "%[3]s"; }
        location /slow { proxy_pass %[4]s; }
    }
}
`, dir, port, body, upstream)
}

// A changed configuration is checked and loaded without restarting nginx; a
// request in flight finishes; a configuration nginx refuses is reported with
// nginx's message while the old one keeps serving; stopping quits nginx
// gracefully.
func TestReloadsNginxInPlaceAndKeepsServingARefusedConfiguration(t *testing.T) {
	nginxBin, dir := nginxAndDir(t)
	// The slow upstream says when a request reached it, then answers after
	// 2 s: long enough for a reload to happen while nginx waits for it.
	reached := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case reached <- struct{}{}:
		default:
		}
		time.Sleep(2 * time.Second)
		_, _ = io.WriteString(w, "slow answer")
	}))
	defer slow.Close()
	p, err := tools.FreePort()
	tools.Must(t, err)
	confDir := filepath.Join(dir, "config")
	tools.Must(t, os.Mkdir(confDir, 0o755))
	vol := &volume{t: t, dir: confDir}
	vol.write(map[string]string{"nginx.conf": config(dir, p, "one", slow.URL)})
	conf := filepath.Join(confDir, "nginx.conf")

	r := New(Options{Nginx: nginxBin, Args: []string{"-p", dir, "-c", conf, "-g", "daemon off;"}, Config: conf,
		Watch: []string{confDir}, Interval: 100 * time.Millisecond, Logf: t.Logf})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	url := fmt.Sprintf("http://127.0.0.1:%d", p)
	body := func(path string) (string, error) { return answer(p, path) }
	serves := func(want string) { t.Helper(); servesOn(t, p, want) }
	serves("one")
	master, err := os.ReadFile(filepath.Join(dir, "nginx.pid"))
	tools.Must(t, err)

	// A request in flight across the reload gets its answer.
	inFlight := make(chan string, 1)
	startSlowRequest := func() {
		go func() {
			b, err := body("/slow")
			if err != nil {
				b = err.Error()
			}
			inFlight <- b
		}()
		select {
		case <-reached: // nginx holds it, waiting for the upstream
		case <-time.After(10 * time.Second):
			t.Fatal("the slow request did not reach the upstream")
		}
	}
	startSlowRequest()
	vol.write(map[string]string{"nginx.conf": config(dir, p, "two", slow.URL)})
	two, err := os.ReadFile(conf)
	tools.Must(t, err)
	// Once the status names the new configuration, every new connection
	// gets it: nginx's old workers, one of them busy with the slow request,
	// no longer accept any.
	tools.Eventually(t, 10*time.Second, "the status naming configuration two", func() error {
		if s := r.Status(); s.Hash != ConfigHash(two) {
			return fmt.Errorf("status %+v", s)
		}
		return nil
	})
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 20 {
		resp, err := fresh.Get(url + "/")
		tools.Must(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		tools.Must(t, err)
		if string(b) != "two" {
			t.Fatalf("request %d on a new connection after the status said two was loaded: %q", i, b)
		}
	}
	if got := <-inFlight; got != "slow answer" {
		t.Errorf("the request in flight during the reload got %q", got)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "nginx.pid")); string(again) != string(master) {
		t.Errorf("nginx's master changed from %s to %s: it restarted instead of reloading", master, again)
	}
	if s := r.Status(); s.Reloads != 1 || s.Failures != 0 || !s.LastReloadSuccessful || s.Hash != ConfigHash(two) {
		t.Errorf("after one reload: %+v, want 1 reload of hash %s", s, ConfigHash(two))
	}

	// A configuration nginx refuses: reported, and the old one serves on.
	refused := strings.Replace(config(dir, p, "three", slow.URL), "events {}", "events {}\nnot_a_directive on;", 1)
	vol.write(map[string]string{"nginx.conf": refused})
	tools.Eventually(t, 10*time.Second, "the refusal reported", func() error {
		if s := r.Status(); s.Failures != 1 || s.LastReloadSuccessful || !strings.Contains(s.Error, `unknown directive "not_a_directive"`) ||
			s.Hash != ConfigHash(two) || s.RejectedHash != ConfigHash([]byte(refused)) {
			return fmt.Errorf("status %+v", s)
		}
		return nil
	})
	if got, err := body("/"); got != "two" {
		t.Errorf("after a refused configuration nginx answers %q (%v), want the previous configuration's two", got, err)
	}
	metrics := string(r.Metrics())
	for _, want := range []string{"reloader_reloads_total 1\n", "reloader_reloads_failed_total 1\n", "reloader_last_reload_successful 0\n", `reloader_config_info{hash="` + ConfigHash(two) + `"} 1`,
		"reloader_reload_duration_seconds_count 1\n", `reloader_reload_duration_seconds_bucket{le="+Inf"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}

	// Stopping: a request in flight still gets its answer, then nginx and
	// the reloader exit cleanly.
	startSlowRequest()
	cancel()
	if got := <-inFlight; got != "slow answer" {
		t.Errorf("the request in flight when nginx was stopped got %q", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after a graceful stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nginx did not stop")
	}
	done <- nil // for the deferred receive
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), time.Second); err == nil {
		t.Error("nginx still listens after the reloader stopped")
	}
}

// A configuration the kubelet swaps in (its rename of ..data) is loaded on
// inotify's word, not at the next poll: with an hour between polls, the
// new one is served at once, and so is one under a subdirectory of a
// watched one (a TLS Secret's own mount under the TLS directory).
func TestLoadsAChangedConfigurationWithoutWaitingForThePoll(t *testing.T) {
	if runtime.GOOS != "linux" {
		tools.Missing(t, "inotify (Linux)")
	}
	nginxBin, dir := nginxAndDir(t)
	p, err := tools.FreePort()
	tools.Must(t, err)
	confDir, tlsDir := filepath.Join(dir, "config"), filepath.Join(dir, "tls")
	tools.Must(t, os.Mkdir(confDir, 0o755))
	tools.Must(t, os.MkdirAll(filepath.Join(tlsDir, "site"), 0o755))
	conf := &volume{t: t, dir: confDir}
	conf.write(map[string]string{"nginx.conf": config(dir, p, "one", "http://127.0.0.1:9")})
	site := &volume{t: t, dir: filepath.Join(tlsDir, "site")}
	site.write(map[string]string{"tls.crt": "first"})
	file := filepath.Join(confDir, "nginx.conf")

	r := New(Options{Nginx: nginxBin, Args: []string{"-p", dir, "-c", file, "-g", "daemon off;"}, Config: file,
		Watch: []string{confDir, tlsDir}, Interval: time.Hour, Logf: t.Logf})
	runUntilCleanup(t, r)
	servesOn(t, p, "one")
	conf.write(map[string]string{"nginx.conf": config(dir, p, "two", "http://127.0.0.1:9")})
	servesOn(t, p, "two")
	reloads := r.Status().Reloads
	site.write(map[string]string{"tls.crt": "second"})
	tools.Eventually(t, 10*time.Second, "a reload for the changed certificate", func() error {
		if got := r.Status().Reloads; got != reloads+1 {
			return fmt.Errorf("%d reloads, want %d", got, reloads+1)
		}
		return nil
	})
}

// nginxAndDir are the real nginx and a directory for a test's nginx,
// which nginx's workers (another user when the test runs as root) may
// enter.
func nginxAndDir(t *testing.T) (string, string) {
	t.Helper()
	nginx := tools.Nginx(t)
	dir := t.TempDir()
	tools.Must(t, os.Chmod(dir, 0o755))
	tools.Must(t, os.Chmod(filepath.Dir(dir), 0o755))
	return nginx, dir
}

// runUntilCleanup runs r until the test ends, then stops it and waits.
func runUntilCleanup(t *testing.T, r *Reloader) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// answer is the body nginx on the loopback port answers path with.
func answer(port int, path string) (string, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// servesOn waits until nginx on the loopback port answers / with want.
func servesOn(t *testing.T, port int, want string) {
	t.Helper()
	tools.Eventually(t, 10*time.Second, "nginx answering "+want, func() error {
		if got, err := answer(port, "/"); err != nil || got != want {
			return fmt.Errorf("got %q, %v", got, err)
		}
		return nil
	})
}

// The reload histogram counts each duration in the first bucket whose bound
// it does not exceed (Prometheus's "le"), cumulatively, and one above the
// last bound in +Inf only.
func TestTheReloadHistogramCountsEachReloadInItsBucket(t *testing.T) {
	h := histogram{bounds: reloadBuckets}
	for _, v := range []float64{0.01, 0.025, 0.3, 11} {
		h.observe(v)
	}
	var b bytes.Buffer
	h.write(&b, "d", "help")
	want := `# HELP d help
# TYPE d histogram
d_bucket{le="0.025"} 2
d_bucket{le="0.05"} 2
d_bucket{le="0.1"} 2
d_bucket{le="0.25"} 2
d_bucket{le="0.5"} 3
d_bucket{le="1"} 3
d_bucket{le="2.5"} 3
d_bucket{le="5"} 3
d_bucket{le="10"} 3
d_bucket{le="+Inf"} 4
d_sum 11.335
d_count 4
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("histogram (-want +got):\n%s", diff)
	}
}
