// Package echo is the upstream behind every proxy location the tests
// exercise: the node's test server runs it in pods
// (test/framework/node/internal/testserver) and the renderer's tests run it
// on loopback, so both tiers read one answer format.
//
// Every request is answered with a line "hello from <name>" and a line of
// JSON, Seen, describing the request as it arrived: what nginx forwarded.
// The query can ask for ?sleep=<duration> before the answer (read timeouts)
// and ?status=<code>; with ?flush=1 the status line and headers go out at
// once, before the sleep, so a client learns that its request reached the
// server and is held there, through nginx too (the body still waits for the
// sleep). /ws echoes WebSocket messages; AuthPath is an authentication
// service. Every answer carries
// X-Powered-By and Cache-Control, for response header filters to act on.
// The request's body is read whole, and its length reported, before the
// answer.
// It imports the standard library and x/net's websocket alone: it is built
// into the test server's image.
package echo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/websocket"
)

// Seen is what the server saw of a request, the second line of its answer.
type Seen struct {
	// Server is the name the handler was made with.
	Server string `json:"server"`
	// TLS tells whether the request came over TLS.
	TLS bool `json:"tls"`
	// URI is the path and query as on the request line.
	URI     string      `json:"uri"`
	Host    string      `json:"host"`
	Headers http.Header `json:"headers"`
	// Remote is the address of the connection's peer, without its port:
	// nginx's, for a request it proxied.
	Remote string `json:"remote"`
	// BodyBytes is the length of the request's body, read whole before
	// the answer.
	BodyBytes int64 `json:"bodyBytes"`
}

// Headers the handler sets on every answer.
const (
	PoweredBy    = "echo"
	CacheControl = "public, max-age=600"
)

// Handler answers as name.
func Handler(name string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ws", websocket.Handler(func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }))
	mux.Handle(AuthPath, authHandler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		bodyBytes, _ := io.Copy(io.Discard, r.Body)
		q := r.URL.Query()
		flush := q.Get("flush") == "1"
		if !flush {
			sleep(q)
		}
		w.Header().Set("X-Powered-By", PoweredBy)
		w.Header().Set("Cache-Control", CacheControl)
		if flush {
			// nginx holds back a header shorter than its postpone_output
			// (1460 bytes) until body follows: padding makes it go out.
			w.Header().Set("X-Echo-Padding", strings.Repeat("x", 2048))
		}
		code, err := strconv.Atoi(q.Get("status"))
		if err == nil {
			w.WriteHeader(code)
		} else if flush {
			w.WriteHeader(http.StatusOK)
		}
		if flush {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			sleep(q)
		}
		fmt.Fprintf(w, "hello from %s\n", name)
		remote, _, _ := net.SplitHostPort(r.RemoteAddr)
		_ = json.NewEncoder(w).Encode(Seen{Server: name, TLS: r.TLS != nil, URI: r.RequestURI, Host: r.Host, Headers: r.Header, Remote: remote, BodyBytes: bodyBytes})
	})
	return mux
}

// AuthPath answers as an external authentication service: 200 with
// X-Auth-User for the Authorization AuthorizedBearer, 403 for
// ForbiddenBearer, 401 for anything else. Each answer counts the checks
// this handler answered so far in X-Auth-Checks, which tells a check that
// reached it from one a cache answered; X-Auth-Original-URL repeats the
// X-Original-URL it got.
const (
	AuthPath         = "/external-auth"
	AuthorizedBearer = "Bearer good"
	ForbiddenBearer  = "Bearer forbidden"
	AuthorizedUser   = "alice"
)

func authHandler() http.Handler {
	var checks atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Auth-Checks", strconv.FormatInt(checks.Add(1), 10))
		w.Header().Set("X-Auth-Original-URL", r.Header.Get("X-Original-URL"))
		switch r.Header.Get("Authorization") {
		case AuthorizedBearer:
			w.Header().Set("X-Auth-User", AuthorizedUser)
		case ForbiddenBearer:
			w.WriteHeader(http.StatusForbidden)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
}

// sleep waits for the query's ?sleep, if any.
func sleep(q url.Values) {
	if d, err := time.ParseDuration(q.Get("sleep")); err == nil {
		time.Sleep(d)
	}
}

// Decode reads what the server saw from its answer's body.
func Decode(body string) (Seen, error) {
	var s Seen
	greeting, rest, ok := strings.Cut(body, "\n")
	if !ok || !strings.HasPrefix(greeting, "hello from ") {
		return s, errors.New("not the echo server's answer")
	}
	err := json.Unmarshal([]byte(rest), &s)
	return s, err
}
