package clientchecks

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/echo"
)

// Source is where a client's connections come from, as nginx sees them.
type Source int

const (
	// Untrusted is any client: nginx believes none of its X-Forwarded-*
	// headers. The checks send from here unless they test trust.
	Untrusted Source = iota
	// Trusted is a proxy in Options.TrustedProxies.
	Trusted
)

// Target is the nginx serving Spec, as a tier reaches it.
type Target struct {
	Options
	*Fixtures
	// Dial connects to port (Options.HTTPPort or HTTPSPort) of the nginx
	// from source. The sources may reach two instances of Spec that differ
	// in Options.TrustedProxies alone: one may not be able to connect from
	// two addresses.
	Dial func(ctx context.Context, from Source, port int32) (net.Conn, error)
	// Address is the address nginx sees each source's connections come from.
	Address map[Source]string
	// TLS verifies ServingSecret's certificate for AppHost.
	TLS *tls.Config
	// AccessLog returns the lines the nginx (of both sources) logged so far.
	AccessLog func(t *testing.T) []string
	// Workers counts the worker processes of the Trusted source's nginx.
	Workers func(t *testing.T) int
}

// A Check is one thing a client expects of the nginx.
type Check struct {
	Name string
	// Slow checks wait for a timeout or an idle connection; Run starts them
	// first and runs the others meanwhile.
	Slow bool
	Run  func(t *testing.T, tg *Target)
}

// Run runs every check of Checks as a subtest.
func Run(t *testing.T, tg *Target) {
	var slow sync.WaitGroup
	for _, c := range Checks {
		if c.Slow {
			slow.Go(func() { t.Run(c.Name, func(t *testing.T) { c.Run(t, tg) }) })
		}
	}
	for _, c := range Checks {
		if !c.Slow {
			t.Run(c.Name, func(t *testing.T) { c.Run(t, tg) })
		}
	}
	slow.Wait()
}

// client is an HTTP/1.1 client, one connection a request, that connects to
// the nginx from source whatever host a URL names (see url) and does not
// follow redirects.
func (tg *Target) client(from Source) *http.Client {
	return &http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				_, port, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				p, err := strconv.ParseInt(port, 10, 32)
				if err != nil {
					return nil, err
				}
				return tg.Dial(ctx, from, int32(p))
			},
			DisableKeepAlives: true,
			TLSClientConfig:   tg.TLS.Clone(),
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// transport is c's transport, for a check to change.
func transport(c *http.Client) *http.Transport { return c.Transport.(*http.Transport) }

// url is the URL of path on host at the nginx's port for scheme: host is the
// virtual host (Host and SNI), as a browser sends it.
func (tg *Target) url(scheme, host, path string) string {
	port := tg.HTTPPort
	if scheme == "https" {
		port = tg.HTTPSPort
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + path
}

// fetch sends a GET for url with c and the header name and value pairs
// ("Host" sets the Host header) and returns the response with its body.
func fetch(ctx context.Context, c *http.Client, url string, header ...string) (*http.Response, string, error) {
	req, err := newRequest(ctx, http.MethodGet, url, nil, header...)
	if err != nil {
		return nil, "", err
	}
	return exchange(c, req)
}

// newRequest is a request for url with body and the header name and value
// pairs ("Host" sets the Host header).
func newRequest(ctx context.Context, method, url string, body []byte, header ...string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	return req, nil
}

// exchange sends req with c and returns the response with its body.
func exchange(c *http.Client, req *http.Request) (*http.Response, string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// get is fetch that fails the test when no answer comes.
func get(t *testing.T, c *http.Client, url string, header ...string) (*http.Response, string) {
	t.Helper()
	resp, body, err := fetch(t.Context(), c, url, header...)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// request is newRequest that fails the test on a malformed URL.
func request(ctx context.Context, t *testing.T, method, url string, body []byte, header ...string) *http.Request {
	t.Helper()
	req, err := newRequest(ctx, method, url, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// do is exchange that fails the test when no answer comes.
func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, body, err := exchange(c, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// seen is what the echo server saw of a request that nginx proxied.
func seen(t *testing.T, body string) echo.Seen {
	t.Helper()
	s, err := echo.Decode(body)
	if err != nil {
		t.Fatalf("not the echo server's answer (%v): %q", err, body)
	}
	return s
}
