package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// BenchmarkRequestMetrics measures what counting every request costs: the
// real nginx under the real nginx-reloader, as in a pod, answers as many
// small requests as 32 keep-alive clients send for BENCH_REQUEST_SECONDS
// (default 5), with request metrics off and on, and then, with them on, a
// steady BENCH_REQUEST_RATE requests per second (default 5,000). It
// reports requests per second, the reloader's CPU (a share of one core and
// per 1,000 requests) and, with metrics on, the share of requests the
// count missed: lines nginx dropped because the reloader's socket was
// full.
//
//	go test ./test/bench -run '^$' -bench RequestMetrics -benchtime 1x
func BenchmarkRequestMetrics(b *testing.B) {
	nginxBin, reloaderBin := tools.Nginx(b), framework.ReloaderBinary(b)
	seconds := 5
	if s, err := strconv.Atoi(os.Getenv("BENCH_REQUEST_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	rate := 5000
	if r, err := strconv.Atoi(os.Getenv("BENCH_REQUEST_RATE")); err == nil && r > 0 {
		rate = r
	}
	for _, run := range []struct {
		name string
		on   bool
		rate int // requests per second, 0: as many as nginx answers
	}{{"off", false, 0}, {"on", true, 0}, {fmt.Sprintf("on-at-%d-per-second", rate), true, rate}} {
		on := run.on
		name := run.name
		b.Run(name, func(b *testing.B) {
			for range b.N {
				r := runRequestLoad(b, nginxBin, reloaderBin, on, run.rate, time.Duration(seconds)*time.Second)
				b.ReportMetric(r.perSecond, "req/s")
				b.ReportMetric(r.reloaderCores*100, "%-core-reloader")
				b.ReportMetric(r.reloaderMsPer1k, "ms-reloader/1k-req")
				if on {
					b.ReportMetric(r.droppedShare*100, "%-dropped")
				}
				b.Logf("metrics %s: %d requests in %v, %.0f/s; reloader CPU %.1f%% of a core, %.2f ms per 1,000 requests; counted %d (%.2f%% dropped; the kernel counted %d drops)",
					name, r.sent, r.took.Round(time.Millisecond), r.perSecond, r.reloaderCores*100, r.reloaderMsPer1k, r.counted, r.droppedShare*100, r.kernelDropped)
			}
		})
	}
}

type requestLoad struct {
	sent, counted, kernelDropped                            int64
	took                                                    time.Duration
	perSecond, reloaderCores, reloaderMsPer1k, droppedShare float64
}

// runRequestLoad starts nginx under the reloader with request metrics on
// or off and loads it for d, at rate requests per second (0: as fast as
// it answers).
func runRequestLoad(b *testing.B, nginxBin, reloaderBin string, on bool, rate int, d time.Duration) requestLoad {
	dir, err := os.MkdirTemp("", "reqbench")
	tools.Must(b, err)
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	tools.Must(b, os.Chmod(dir, 0o755))
	port, metricsPort := tools.Port(b), tools.Port(b)
	spec := validationtest.Spec(b, v1beta1.NginxOperatorSpec{
		Ports:   []v1beta1.Port{{Name: "http", ContainerPort: int32(port)}},
		Metrics: v1beta1.MetricsSpec{Enabled: true, Requests: &v1beta1.RequestMetrics{Disabled: !on}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", ServerNames: []string{"bench.test"}, Locations: []v1beta1.Location{
			{Path: "/", Name: "bench", Respond: &v1beta1.RespondLocation{Status: 200, Body: "ok"}},
		}}}},
	})
	paths := render.Paths{Temp: dir, Content: dir, Files: dir, MimeTypes: filepath.Join(dir, "mime.types"), RequestLog: fmt.Sprintf("127.0.0.1:%d", tools.Port(b))}
	tools.Must(b, os.WriteFile(paths.MimeTypes, []byte("types {}\n"), 0o644))
	cfg, err := render.Config(spec, render.Options{Paths: paths, HealthPort: tools.Port(b)})
	tools.Must(b, err)
	// nginx.conf alone in the directory the reloader watches (it hashes
	// every file there each second), as in a pod.
	tools.Must(b, os.Mkdir(filepath.Join(dir, "conf"), 0o755))
	conf := filepath.Join(dir, "conf", "nginx.conf")
	tools.Must(b, os.WriteFile(conf, cfg, 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloader := exec.CommandContext(ctx, reloaderBin, "-listen-address=127.0.0.1:"+strconv.Itoa(metricsPort), "-config="+conf,
		"-request-log="+paths.RequestLog, "--", nginxBin, "-p", dir, "-c", conf, "-e", "stderr", "-g", "daemon off;")
	reloader.Cancel = func() error { return reloader.Process.Signal(os.Interrupt) }
	reloader.WaitDelay = 10 * time.Second
	log, err := os.Create(filepath.Join(dir, "reloader.log"))
	tools.Must(b, err)
	reloader.Stdout, reloader.Stderr = log, log
	b.Cleanup(func() {
		if b.Failed() {
			out, _ := os.ReadFile(log.Name())
			b.Logf("reloader and nginx:\n%s\nnginx.conf:\n%s", out, cfg)
		}
	})
	tools.Must(b, reloader.Start())
	defer func() { cancel(); _ = reloader.Wait() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	tools.Eventually(b, 10*time.Second, "nginx answers", func() error {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	before, droppedBefore := countedRequests(b, metricsPort)

	cpu0 := cpuSeconds(b, reloader.Process.Pid)
	var sent atomic.Int64
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	const clients = 32
	for range clients {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			var tick <-chan time.Time
			if rate > 0 {
				ticker := time.NewTicker(time.Second * clients / time.Duration(rate))
				defer ticker.Stop()
				tick = ticker.C
			}
			for time.Now().Before(deadline) {
				if tick != nil {
					<-tick
				}
				resp, err := client.Get(url)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	time.Sleep(500 * time.Millisecond) // the socket's queue drains
	cpu := cpuSeconds(b, reloader.Process.Pid) - cpu0
	counted, dropped := countedRequests(b, metricsPort)

	r := requestLoad{sent: sent.Load(), counted: counted - before, kernelDropped: dropped - droppedBefore, took: took}
	r.perSecond = float64(r.sent) / took.Seconds()
	r.reloaderCores = cpu / took.Seconds()
	r.reloaderMsPer1k = cpu * 1000 / float64(r.sent) * 1000
	if on {
		r.droppedShare = float64(r.sent-r.counted) / float64(r.sent)
	}
	return r
}

// countedRequests adds the reloader's nginx_route_requests_total samples,
// and returns reloader_request_lines_dropped_total too.
func countedRequests(b *testing.B, port int) (counted, dropped int64) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	tools.Must(b, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		value := func() int64 {
			n, err := strconv.ParseInt(line[strings.LastIndexByte(line, ' ')+1:], 10, 64)
			tools.Must(b, err)
			return n
		}
		switch {
		case strings.HasPrefix(line, "nginx_route_requests_total{"):
			counted += value()
		case strings.HasPrefix(line, "reloader_request_lines_dropped_total "):
			dropped = value()
		}
	}
	return counted, dropped
}

// cpuSeconds is the CPU time process pid used itself (utime and stime of
// /proc/pid/stat, in clock ticks of 1/100 s), not its children's.
func cpuSeconds(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	tools.Must(b, err)
	// The command name, in parentheses, may hold spaces: count after it.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, err := strconv.ParseFloat(fields[11], 64)
	tools.Must(b, err)
	stime, err := strconv.ParseFloat(fields[12], 64)
	tools.Must(b, err)
	return (utime + stime) / 100
}
