// Command nginx-reloader runs nginx and reloads it when its mounted
// configuration changes (see pkg/reloader). Usage:
//
//	nginx-reloader [flags] -- nginx -c /etc/nginx/operator/nginx.conf -g 'daemon off;'
//	nginx-reloader -install /reloader/nginx-reloader
//
// The second form copies the binary to a path and exits: the operator's init
// container puts the reloader into an emptyDir with it, for the nginx
// container to run from whatever nginx image it has.
//
// It serves Prometheus metrics on /metrics and its state as JSON on /status,
// and takes a new configuration the operator signs on PUT /config (with
// -work-config and -push-key).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// paths is a repeatable flag.
type paths []string

func (p *paths) String() string     { return strings.Join(*p, ",") }
func (p *paths) Set(v string) error { *p = append(*p, v); return nil }

func main() {
	var watch paths
	listen := flag.String("listen-address", ":18082", "where to serve /metrics, /status and /healthz; empty: nowhere")
	config := flag.String("config", "/etc/nginx/operator/nginx.conf", "the mounted nginx.conf")
	work := flag.String("work-config", "", "the working copy of -config nginx runs from (name it in nginx's -c), which a PUT to "+reloader.ConfigPath+" may replace; empty: nginx runs from -config and nothing can be pushed")
	pushKey := flag.String("push-key", "", "the file holding the key pushed configurations are signed with")
	interval := flag.Duration("interval", time.Second, "how often to look at the watched files")
	install := flag.String("install", "", "copy this binary to the given path and exit")
	requestLog := flag.String("request-log", "", "the loopback UDP address to bind for nginx's request lines, counted on /metrics; empty: none")
	flag.Var(&watch, "watch", "a file or directory nginx reads when it loads its configuration; repeatable (default: the directory of -config)")
	files := flag.String("files", "", "the directory of the files a configuration's manifest names: a configuration is loaded once they are all there with the manifest's digests")
	flag.Parse()
	if *install != "" {
		if err := reloader.Install(*install); err != nil {
			fmt.Fprintln(os.Stderr, "nginx-reloader:", err)
			os.Exit(1)
		}
		return
	}
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: nginx-reloader [flags] -- nginx ARGS...")
		os.Exit(2)
	}
	if len(watch) == 0 {
		watch = paths{dir(*config)}
	}
	logger := log.New(os.Stderr, "nginx-reloader: ", log.LstdFlags)
	r := reloader.New(reloader.Options{Nginx: args[0], Args: args[1:], Config: *config, Work: *work, PushKey: *pushKey, Watch: watch, Files: *files, Interval: *interval, Logf: logger.Printf})
	// SIGTERM (Kubernetes' default) and SIGQUIT (nginx images' STOPSIGNAL)
	// both end in a graceful quit of nginx.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	if *requestLog != "" {
		// Bound before nginx starts, so that its first requests count.
		conn, err := reloader.ListenRequests(*requestLog)
		if err != nil {
			logger.Fatal(err)
		}
		go func() {
			if err := r.Requests.Serve(ctx, conn); err != nil {
				logger.Print(err)
			}
		}()
	}

	if *listen != "" {
		mux := http.NewServeMux()
		mux.HandleFunc(reloader.MetricsPath, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write(r.Metrics())
		})
		mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(r.Status())
		})
		mux.HandleFunc(reloader.ConfigPath, r.ServeConfig)
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
		srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Fatalf("serving %s: %v", *listen, err)
			}
		}()
	}
	if err := r.Run(ctx); err != nil {
		logger.Print(err)
		os.Exit(1)
	}
}

func dir(path string) string {
	if i := strings.LastIndex(path, "/"); i > 0 {
		return path[:i]
	}
	return "."
}
