package conf

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// TestRealNginxServesHostileStrings is the check that our reading of nginx's
// tokenizer is nginx's: a rendered config carrying hostile strings must pass
// `nginx -t`, and the running server must hand the strings back byte for byte
// in a header and a body.
func TestRealNginxServesHostileStrings(t *testing.T) {
	nginx := tools.Require(t, "nginx", "apt-get install -y nginx")
	prefix := t.TempDir()
	path := func(name string) string { return filepath.Join(prefix, name) }
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	longBare := strings.Repeat("a", maxToken)         // written as is
	longQuoted := strings.Repeat(`"`, (maxToken-2)/2) // written as """...""
	for _, s := range []string{longBare, longQuoted} {
		if tok, err := Quote(s); err != nil || len(tok) != maxToken {
			t.Fatalf("Quote(%.10q...) = %d bytes, %v; want %d bytes", s, len(tok), err, maxToken)
		}
	}

	dirs := []Directive{
		// One process that serves requests itself. With a master process
		// running as root, workers would switch to the "user" (nobody by
		// default), who cannot enter the 0700 directories of t.TempDir();
		// this way the test works unchanged as root and as anyone else.
		D("master_process", "off"),
		D("pid", path("nginx.pid")),
		D("error_log", path("error.log")),
		B("events", nil),
		B("http", nil,
			D("access_log", path("access.log")),
			// The compiled-in temp paths (/var/lib/nginx/...) need root.
			D("client_body_temp_path", path("client_body")),
			D("proxy_temp_path", path("proxy")),
			D("fastcgi_temp_path", path("fastcgi")),
			D("uwsgi_temp_path", path("uwsgi")),
			D("scgi_temp_path", path("scgi")),
			B("server", nil,
				D("listen", addr),
				D("add_header", "X-Hostile", liveHeader),
				// Quoting must not stop nginx from reading ${name}.
				D("add_header", "X-Var", "pre-${request_method}-post"),
				// The longest tokens Quote emits must fit nginx's buffer.
				D("add_header", "X-Long-Bare", longBare),
				D("add_header", "X-Long-Quoted", longQuoted),
				B("location", []string{"/"},
					D("return", "200", liveBody),
				),
			),
		),
	}
	conf := path("nginx.conf")
	text := roundTrip(t, dirs)
	if err := os.WriteFile(conf, text, 0o644); err != nil {
		t.Fatal(err)
	}

	// As a non-root user nginx complains that it cannot open its compiled-in
	// error log before it has read ours, and carries on; -e would silence it
	// but needs nginx >= 1.19.5.
	out, err := exec.Command(nginx, "-t", "-p", prefix, "-c", conf).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s\nconfig:\n%s", err, out, text)
	}

	// A file rather than a buffer: exec hands it to nginx directly, so
	// reading it while nginx runs is not a data race.
	output, err := os.Create(path("nginx.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer output.Close()
	cmd := exec.Command(nginx, "-p", prefix, "-c", conf, "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	failf := func(format string, args ...any) {
		t.Helper()
		out, _ := os.ReadFile(path("nginx.out"))
		log, _ := os.ReadFile(path("error.log"))
		t.Fatalf(format+"\nnginx output:\n%s\nerror.log:\n%s", append(args, out, log)...)
	}

	client := &http.Client{Timeout: 5 * time.Second}
	url := "http://" + addr + "/"
	var resp *http.Response
	for deadline := time.Now().Add(15 * time.Second); ; {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			failf("nginx exited before serving: %v", err)
		default:
		}
		if resp, err = client.Get(url); err == nil {
			break
		}
		if time.Now().After(deadline) {
			failf("nginx did not answer on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		failf("reading the body: %v", err)
	}

	if resp.StatusCode != http.StatusOK {
		failf("GET %s: status %d", url, resp.StatusCode)
	}
	if got := string(body); got != liveBody {
		t.Errorf("body:\n got %q\nwant %q", got, liveBody)
	}
	if got := resp.Header.Values("X-Hostile"); len(got) != 1 || got[0] != liveHeader {
		t.Errorf("X-Hostile:\n got %q\nwant [%q]", got, liveHeader)
	}
	if got, want := resp.Header.Get("X-Var"), "pre-GET-post"; got != want {
		t.Errorf("X-Var = %q, want %q", got, want)
	}
	if got := resp.Header.Get("X-Long-Bare"); got != longBare {
		t.Errorf("X-Long-Bare has %d bytes, want %d", len(got), len(longBare))
	}
	if got := resp.Header.Get("X-Long-Quoted"); got != longQuoted {
		t.Errorf("X-Long-Quoted has %d bytes, want %d", len(got), len(longQuoted))
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
