package realpods

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// chainClock records when a route change reaches the config Secret of the
// Gateway's instance on its way to nginx, as this process's watch sees it
// (the operator's write: the Gateway controller's translation and the
// nginx controller's rendering, which hand over in memory). With the
// reloads' spans from the reloader's log it splits the time from apply to
// served into stages.
type chainClock struct {
	mu sync.Mutex
	// secret are the times of the config Secret's changes.
	secret []time.Time
}

// change is one route change: when it was applied and first served.
type change struct{ applied, served time.Time }

// span is one reload: from nginx -t to the new workers taking over.
type span struct{ start, end time.Time }

func (e *benchEnv) startChainClock(b *testing.B) *chainClock {
	c := &chainClock{}
	sw, err := e.cs.CoreV1().Secrets(e.ns).Watch(e.ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + layout.NamesFor(e.instance()).ConfigSecret})
	tools.Must(b, err)
	b.Cleanup(sw.Stop)
	go func() {
		for ev := range sw.ResultChan() {
			if ev.Type == watch.Modified {
				c.record(&c.secret)
			}
		}
	}()
	return c
}

func (c *chainClock) record(into *[]time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*into = append(*into, time.Now())
}

// stages are, for changes, the medians and 95th percentiles of each stage
// of the way from apply to served: to the Secret's change (the operator's
// whole part), from there to the start of the next
// reload (the kubelet's refresh of the pod's volume and the reloader's
// notice of it), the reload, and from its end to the first answer served.
// A change whose chain cannot be followed (its stages were merged with
// another's) is left out.
func (c *chainClock) stages(changes []change, reloads []span) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := []string{"apply -> Secret", "Secret -> reload start", "reload", "reload end -> served"}
	got := make([][]time.Duration, len(names))
	for _, ch := range changes {
		w, ok := firstAfter(c.secret, ch.applied)
		i := slices.IndexFunc(reloads, func(r span) bool { return !r.start.Before(w) })
		if !ok || i < 0 || reloads[i].start.After(ch.served) {
			continue
		}
		r := reloads[i]
		if os.Getenv("BENCH_CHAIN_TRACE") != "" {
			fmt.Printf("chain: applied %s secret %s reload %s-%s served %s\n", ch.applied.Format("15:04:05.000"),
				w.Format("15:04:05.000"), r.start.Format("15:04:05.000"), r.end.Format("15:04:05.000"), ch.served.Format("15:04:05.000"))
		}
		for k, d := range []time.Duration{w.Sub(ch.applied), r.start.Sub(w), r.end.Sub(r.start), ch.served.Sub(r.end)} {
			got[k] = append(got[k], d)
		}
	}
	var lines []string
	for k, name := range names {
		lines = append(lines, fmt.Sprintf("  %-24s p50 %8s  p95 %8s  (%d changes)", name, percentile(got[k], 50), percentile(got[k], 95), len(got[k])))
	}
	return strings.Join(lines, "\n")
}

// firstAfter is the first of times not before t.
func firstAfter(times []time.Time, t time.Time) (time.Time, bool) {
	for _, x := range times {
		if !x.Before(t) {
			return x, true
		}
	}
	return time.Time{}, false
}

// reloadLineAt is a reload's log line with the kubelet's timestamp: when
// it ended, and how long it took.
var reloadLineAt = regexp.MustCompile(`(?m)^(\S+) .*reloaded nginx with configuration \S+ in (\S+)$`)

// reloadSpans are the reloads of the instance's pods, in time order.
func (e *benchEnv) reloadSpans(b *testing.B) []span {
	var out []span
	for _, pod := range e.instancePods(b) {
		raw, err := e.cs.CoreV1().Pods(e.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "nginx", Timestamps: true}).DoRaw(e.ctx)
		tools.Must(b, err)
		for _, m := range reloadLineAt.FindAllSubmatch(raw, -1) {
			end, err1 := time.Parse(time.RFC3339Nano, string(m[1]))
			took, err2 := time.ParseDuration(string(m[2]))
			if err1 == nil && err2 == nil {
				out = append(out, span{start: end.Add(-took), end: end})
			}
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.start.Compare(b.start) })
	return out
}
