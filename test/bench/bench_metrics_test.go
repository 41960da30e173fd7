package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// figures are what one scrape of the operator's /metrics says.
type figures struct {
	reads, writes float64 // client-go requests: GET, and every other method
	cpu, rss      float64 // process_cpu_seconds_total, process_resident_memory_bytes
	heapLive      float64 // go_gc_heap_live_bytes: marked live by the last GC
	gcCycles      float64
	reconciles    float64 // of the NginxOperator controller
	reconcileTime float64 // seconds its reconciles took, in all
	queueWait     float64 // seconds its requests waited in the work queue, in all
	queueDepth    float64 // of every work queue
}

func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func scrape(b testing.TB, op *operatorProcess) figures {
	b.Helper()
	families, err := framework.ScrapeMetrics(context.Background(), op.metrics)
	if err != nil {
		b.Fatal(err)
	}
	var f figures
	value, label := framework.MetricValue, framework.MetricLabel
	for name, fam := range families {
		for _, m := range fam.GetMetric() {
			switch name {
			case "rest_client_requests_total":
				if label(m, "method") == http.MethodGet {
					f.reads += value(m)
				} else {
					f.writes += value(m)
				}
			case "process_cpu_seconds_total":
				f.cpu = value(m)
			case "process_resident_memory_bytes":
				f.rss = value(m)
			case "go_gc_heap_live_bytes":
				f.heapLive = value(m)
			case "go_gc_cycles_total_gc_cycles_total":
				f.gcCycles = value(m)
			case "controller_runtime_reconcile_total":
				if label(m, "controller") == "nginxoperator" {
					f.reconciles += value(m)
				}
			case "controller_runtime_reconcile_time_seconds":
				if label(m, "controller") == "nginxoperator" {
					f.reconcileTime += m.GetHistogram().GetSampleSum()
				}
			case "workqueue_queue_duration_seconds":
				if label(m, "name") == "nginxoperator" {
					f.queueWait += m.GetHistogram().GetSampleSum()
				}
			case "workqueue_depth":
				f.queueDepth += value(m)
			}
		}
	}
	return f
}

// procStatus reads the kB figures of /proc/<pid>/status, in bytes: VmHWM
// (the peak resident set), RssAnon (heap, stacks, runtime) and RssFile (the
// binary's pages the process has touched, which no GC setting changes).
func procStatus(pid int) map[string]float64 {
	out := map[string]float64{}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(rest, " kB") {
			continue
		}
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		out[key] = kb * 1024
	}
	return out
}

// countAudit counts the operator's mutating requests in the apiserver's
// audit log by "verb resource[/subresource]"; the operator is told apart by
// its user agent.
// refusedPrefix marks, in countAudit's keys, the requests the API server
// refused as a conflict: the applier's create-only apply of a child its
// cache has not seen yet, which the operator created itself a moment
// before (k8sutil.Applier.Apply). They write nothing.
const refusedPrefix = "refused "

func countAudit(b testing.TB, path string) map[string]int {
	b.Helper()
	counts := map[string]int{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return counts
	}
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var ev struct {
			Verb      string `json:"verb"`
			UserAgent string `json:"userAgent"`
			ObjectRef *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.ObjectRef == nil || !strings.HasPrefix(ev.UserAgent, "nginx-operator/") {
			continue
		}
		switch ev.Verb {
		case "get", "list", "watch":
			continue
		}
		key := ev.Verb + " " + ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			key += "/" + ev.ObjectRef.Subresource
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == http.StatusConflict {
			key = refusedPrefix + key
		}
		counts[key]++
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return counts
}
