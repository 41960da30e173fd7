package clientchecks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// What the limits' locations and BigHeadersHost allow.
const (
	// bigHeaderKiB is BigHeadersHost's header buffer: a 64 KiB header fits.
	bigHeaderKiB = 80
	// uploadBodySize is /upload/'s clientMaxBodySize; the rest of AppHost
	// keeps the instance's 1m.
	uploadBodySize = "16m"
	// apiKeyHeader keys /keyed's rate limit; partnerKey is exempt, as is
	// any client in exemptClients.
	apiKeyHeader  = "X-API-Key"
	partnerKey    = "partner"
	exemptClients = "198.51.100.0/24"
	// sessionCookie keys /one-at-a-time/'s connection limit: a name with
	// a '-', which nginx has no $cookie_ variable for.
	sessionCookie = "session-id"
)

// limitLocations of AppHost: a rate limit keyed on a header, a connection
// limit keyed on a cookie, and a larger body size.
func limitLocations(o Options) []v1beta1.Location {
	api := func() *v1beta1.ProxyLocation { return &v1beta1.ProxyLocation{Service: API, Port: o.APIPort} }
	return []v1beta1.Location{
		{Path: "/keyed", Static: &v1beta1.StaticLocation{}, RateLimit: &v1beta1.RateLimit{
			RequestsPerMinute: 1, Burst: 2,
			Key:    &v1beta1.RequestKey{Source: "Header", Name: apiKeyHeader},
			Exempt: &v1beta1.LimitExemptions{Keys: []string{partnerKey}, Clients: []string{exemptClients}},
		}},
		{Path: "/one-at-a-time/", Proxy: api(), ConnectionLimit: &v1beta1.ConnectionLimit{
			Connections: 1, Key: &v1beta1.RequestKey{Source: "Cookie", Name: sessionCookie},
		}},
		{Path: "/upload/", Proxy: api(), ClientMaxBodySize: uploadBodySize},
		// One block, two locations: the one with a match has a smaller
		// limit than the 1m the other inherits.
		{Path: "/inherits/", Proxy: api(), ClientMaxBodySize: "512k", Match: &v1beta1.RequestMatch{Headers: []v1beta1.HeaderMatch{{Name: "X-Small", Value: "1"}}}},
		{Path: "/inherits/", Proxy: api()},
	}
}

// keyedRateLimit: one a minute with a burst of 2, by X-API-Key. Of five
// requests with one key the first three pass; another key still passes;
// the partner's key and a client in the exempt CIDR are never limited; a
// request without the key is limited by its address.
func keyedRateLimit(t *testing.T, tg *Target) {
	url := tg.url("http", AppHost, "/keyed.html")
	burst := func(n int, from Source, header ...string) string {
		var codes []int
		for range n {
			resp, _ := get(t, tg.client(from), url, header...)
			codes = append(codes, resp.StatusCode)
		}
		return fmt.Sprint(codes)
	}
	passed := func(n int) string { return fmt.Sprint(slices.Repeat([]int{http.StatusOK}, n)) }
	limited := "[200 200 200 429 429]"
	for _, c := range []struct {
		name   string
		n      int
		from   Source
		header []string
		want   string
	}{
		{"five with one key", 5, Untrusted, []string{apiKeyHeader, "team-a"}, limited},
		{"another key", 1, Untrusted, []string{apiKeyHeader, "team-b"}, passed(1)},
		{"the partner's key", 8, Untrusted, []string{apiKeyHeader, partnerKey}, passed(8)},
		{"the limited key from an exempt client", 5, Trusted, []string{apiKeyHeader, "team-a", "X-Forwarded-For", "198.51.100.20"}, passed(5)},
		{"no key, by address", 5, Untrusted, nil, limited},
	} {
		if got := burst(c.n, c.from, c.header...); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// cookieConnectionLimit: one request at a time per session-id cookie.
// While one is in progress (held by the Service), a second with the same
// cookie gets 429, one with another cookie passes; once the first is
// answered, the cookie may be used again.
//
// nginx frees a request's slot when it finishes the request, just after
// sending the end of the answer: a new request on another connection,
// which another worker may take, can come before that. The session's next
// request goes on the held request's own connection, which nginx reads only
// once it finished the request before, as a browser reuses its connection.
func cookieConnectionLimit(t *testing.T, tg *Target) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url := tg.url("http", AppHost, "/one-at-a-time/")
	cookie := func(v string) string { return sessionCookie + "=" + v + "; theme=dark" }
	session := tg.client(Untrusted)
	transport(session).DisableKeepAlives = false
	held := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		// ?flush=1: the answer's header comes at once, the body after
		// the sleep: the request is in progress until then.
		resp, err := session.Do(request(ctx, t, http.MethodGet, url+"?flush=1&sleep=4s", nil, "Cookie", cookie("alice")))
		close(started)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		held <- err
	}()
	<-started
	if resp, _ := get(t, tg.client(Untrusted), url, "Cookie", cookie("alice")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second request of the session while the first is in progress: %s, want 429", resp.Status)
	}
	if resp, _ := get(t, tg.client(Untrusted), url, "Cookie", cookie("bob")); resp.StatusCode != http.StatusOK {
		t.Errorf("another session's request meanwhile: %s, want 200", resp.Status)
	}
	if err := <-held; err != nil {
		t.Fatalf("the held request: %v", err)
	}
	if resp, _ := get(t, session, url, "Cookie", cookie("alice")); resp.StatusCode != http.StatusOK {
		t.Errorf("the session's next request once the first was answered: %s, want 200", resp.Status)
	}
}

// bodySizes: a 10 MiB body reaches the Service whole through /upload/
// (16m) and gets 413 at /api/ (the instance's 1m), announced or chunked. In
// /inherits/, 700 KiB pass where the location inherits 1m, beside a
// location of the same path that allows 512k, which refuses them.
func bodySizes(t *testing.T, tg *Target) {
	tenMiB := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	cases := []struct {
		path   string
		body   []byte
		header []string
		want   int
	}{
		{"/upload/", tenMiB, nil, http.StatusOK},
		{"/api/", tenMiB, nil, http.StatusRequestEntityTooLarge},
		{"/inherits/", tenMiB[:700<<10], nil, http.StatusOK},
		{"/inherits/", tenMiB[:700<<10], []string{"X-Small", "1"}, http.StatusRequestEntityTooLarge},
	}
	for _, chunked := range []bool{false, true} {
		for _, c := range cases {
			if c.header != nil && !chunked {
				// nginx checks an announced length against the block's
				// largest limit (Documentation/nginxoperator.md).
				continue
			}
			req := request(t.Context(), t, http.MethodPost, tg.url("http", AppHost, c.path), c.body, c.header...)
			if chunked {
				req.ContentLength = -1 // Transfer-Encoding: chunked
			}
			resp, answer := do(t, tg.client(Untrusted), req)
			if resp.StatusCode != c.want {
				t.Errorf("%d KiB to %s %v (chunked %t): %s, want %d", len(c.body)>>10, c.path, c.header, chunked, resp.Status, c.want)
			} else if c.want == http.StatusOK && seen(t, answer).BodyBytes != int64(len(c.body)) {
				t.Errorf("%d KiB to %s (chunked %t): the Service got %d bytes", len(c.body)>>10, c.path, chunked, seen(t, answer).BodyBytes)
			}
		}
	}
}

// headerBuffers: a 64 KiB header reaches the Service through
// BigHeadersHost and gets 431 from AppHost (nginx's 8 KiB buffers), as
// does a header longer than BigHeadersHost's buffers.
func headerBuffers(t *testing.T, tg *Target) {
	big := strings.Repeat("x", 64<<10)
	resp, answer := get(t, tg.client(Untrusted), tg.url("http", BigHeadersHost, "/"), "X-Big", big)
	if resp.StatusCode != http.StatusOK || seen(t, answer).Headers.Get("X-Big") != big {
		t.Errorf("a 64 KiB header to %s: %s; want 200 and the header at the Service", BigHeadersHost, resp.Status)
	}
	for host, header := range map[string]string{AppHost: big, BigHeadersHost: strings.Repeat("x", (bigHeaderKiB+1)<<10)} {
		if resp, _ := get(t, tg.client(Untrusted), tg.url("http", host, "/"), "X-Big", header); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("a %d KiB header to %s: %s, want 431", len(header)>>10, host, resp.Status)
		}
	}
}
