package echo

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// With ?flush=1 the answer's header arrives while the server still sleeps:
// a client learns that its request is held there. (The server is not
// closed: Close would wait out the sleep.)
func TestFlushSendsTheHeaderBeforeTheSleep(t *testing.T) {
	srv := httptest.NewServer(Handler("one"))
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 20 * time.Second}}
	resp, err := client.Get(srv.URL + "/?sleep=10m&flush=1")
	if err != nil {
		t.Fatalf("no header while the server sleeps 10 minutes: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Powered-By") != PoweredBy {
		t.Errorf("status %d, headers %v", resp.StatusCode, resp.Header)
	}

	resp, err = http.Get(srv.URL + "/?sleep=10ms&flush=1&status=503")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(body), "hello from one\n") {
		t.Errorf("status %d, body %q, %v; want 503 and the usual answer after the sleep", resp.StatusCode, body, err)
	}
}
