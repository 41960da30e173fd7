package conf

import (
	"fmt"
	"io"
	"net/http"
	"os"
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
	nginx := tools.Nginx(t)
	prefix := t.TempDir()
	path := func(name string) string { return filepath.Join(prefix, name) }
	addr := "127.0.0.1:" + strconv.Itoa(tools.Port(t))
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
			// The compiled-in temp paths (/var/cache/nginx/...) need root.
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

	if err := tools.NginxTest(nginx, prefix, conf); err != nil {
		t.Fatalf("%v\nconfig:\n%s", err, text)
	}
	proc := tools.StartNginx(t, nginx, prefix, conf)
	failf := func(format string, args ...any) {
		t.Helper()
		log, _ := os.ReadFile(path("error.log"))
		t.Fatalf(format+"\nnginx output:\n%s\nerror.log:\n%s", append(args, proc.Output(), log)...)
	}

	client := &http.Client{Timeout: 5 * time.Second}
	url := "http://" + addr + "/"
	var resp *http.Response
	tools.Eventually(t, 15*time.Second, "nginx answers on "+addr, func() error {
		if err := proc.Exited(); err != nil {
			log, _ := os.ReadFile(path("error.log"))
			return &tools.Stop{Err: fmt.Errorf("%w before serving\nerror.log:\n%s", err, log)}
		}
		var err error
		resp, err = client.Get(url)
		return err
	})
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
