package rollout

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// BenchmarkConfigChangeReachesEveryPod measures, on the real node, how long
// a configuration change takes from the spec's update until every pod's
// nginx serves it, as a client asking each pod directly sees it (served),
// and until the instance's status says so (status.loadedReplicas, which
// the operator reads from each pod's reloader); what the change writes to
// the API server; and the reloaders' resident memory. One iteration is one change; run it with -benchtime=20x:
//
//	go test -run '^$' -bench ConfigChange -benchtime 20x -timeout 30m ./test/realpods/rollout/
func BenchmarkConfigChangeReachesEveryPod(b *testing.B) {
	for _, replicas := range []int32{2, 10} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			ctx, ns, cs, cl, n := setupFor(b, 25*time.Minute)
			site(ctx, b, cl, ns)
			web := webInstance(ns)
			web.Spec.Replicas = ptr.To(replicas)
			if err := cl.Create(ctx, web); err != nil {
				b.Fatal(err)
			}
			key := client.ObjectKeyFromObject(web)
			waitLoaded(ctx, b, cl, key, replicas, 5*time.Minute)
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=web"})
			if err != nil {
				b.Fatal(err)
			}
			hc := n.HTTPClient()
			hc.Timeout = 2 * time.Second
			writes := countWrites(ctx, b, cs, ns)

			served := make([]time.Duration, 0, b.N)
			reported := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				v := strconv.Itoa(i + 2)
				began := time.Now()
				framework.UpdateInstance(ctx, b, cl, key, func(n *v1beta1.NginxOperator) { n.Spec.Config.Servers[0].Locations[0].Headers[0].Value = v })
				var wg sync.WaitGroup
				for _, pod := range pods.Items {
					wg.Go(func() { waitPodServes(ctx, b, hc, pod.Status.PodIP, v) })
				}
				wg.Wait()
				served = append(served, time.Since(began))
				waitLoaded(ctx, b, cl, key, replicas, 2*time.Minute)
				reported = append(reported, time.Since(began))
			}
			b.StopTimer()
			// The last change's writes have all been made once the status
			// says it is loaded; the watches deliver them until none comes
			// for 2 s.
			tools.Settled(b, 2*time.Second, time.Minute, "the watched writes", writes.total)
			counts := writes.stop()
			slices.Sort(served)
			slices.Sort(reported)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(percentile(served, 50).Seconds(), "served-p50-s")
			b.ReportMetric(percentile(served, 95).Seconds(), "served-p95-s")
			b.ReportMetric(percentile(served, 100).Seconds(), "served-max-s")
			b.ReportMetric(percentile(reported, 50).Seconds(), "status-p50-s")
			b.ReportMetric(percentile(reported, 95).Seconds(), "status-p95-s")
			for _, kind := range slices.Sorted(maps.Keys(counts)) {
				b.ReportMetric(float64(counts[kind])/float64(b.N), kind+"-writes/op")
			}
			if rss := reloaderRSS(b); len(rss) > 0 {
				slices.Sort(rss)
				b.ReportMetric(float64(rss[len(rss)-1])/(1<<20), "reloader-max-RSS-MiB")
			}
		})
	}
}

// waitPodServes waits until the nginx at ip answers with X-Version v.
func waitPodServes(ctx context.Context, b *testing.B, hc *http.Client, ip, v string) {
	url := "http://" + net.JoinHostPort(ip, "8080") + "/"
	for ctx.Err() == nil {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.Header.Get("X-Version") == v {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Errorf("%s never served version %s", url, v)
}

// reloaderRSS is the resident memory, in bytes, of every nginx-reloader
// running on this machine: the node's pods are its processes too.
func reloaderRSS(b *testing.B) []int64 {
	b.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		b.Fatal(err)
	}
	var out []int64
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte(layout.ReloaderMountPath+"/")) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if kib, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(kib), " kB"), 10, 64); err == nil {
					out = append(out, n<<10)
				}
			}
		}
	}
	return out
}

// percentile of sorted durations, by the nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// writeCounter counts, from watches, the operator's writes in a namespace
// that a configuration change causes: the config Secret's updates, the
// pods' annotation patches and the instance's status updates (spec updates,
// the benchmark's own, are told apart by their new generation).
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
	stops  []func()
	wg     sync.WaitGroup
}

func countWrites(ctx context.Context, b *testing.B, cs kubernetes.Interface, ns string) *writeCounter {
	b.Helper()
	w := &writeCounter{counts: map[string]int{"secret": 0, "pod": 0, "status": 0}}
	secrets, err := cs.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + layout.NamesFor("web").ConfigSecret})
	if err != nil {
		b.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=web"})
	if err != nil {
		b.Fatal(err)
	}
	wc, err := client.NewWithWatch(env.Cluster(b).Config, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		b.Fatal(err)
	}
	instances, err := wc.Watch(ctx, &v1beta1.NginxOperatorList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	podAnnotations := map[string]map[string]string{}
	generations := map[string]int64{}
	w.consume(secrets, func(watch.Event) string { return "secret" })
	w.consume(pods, func(e watch.Event) string {
		pod, ok := e.Object.(*corev1.Pod)
		if !ok {
			return ""
		}
		// A watch starts with the pods as they are: no write.
		before, seen := podAnnotations[pod.Name]
		podAnnotations[pod.Name] = pod.Annotations
		if !seen || maps.Equal(before, pod.Annotations) {
			return ""
		}
		return "pod"
	})
	w.consume(instances, func(e watch.Event) string {
		n, ok := e.Object.(*v1beta1.NginxOperator)
		if !ok {
			return ""
		}
		before, seen := generations[n.Name]
		generations[n.Name] = n.Generation
		if !seen || before != n.Generation {
			return ""
		}
		return "status"
	})
	return w
}

// consume counts w's MODIFIED events as kind says, until stop.
func (w *writeCounter) consume(events watch.Interface, kind func(watch.Event) string) {
	w.stops = append(w.stops, events.Stop)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for e := range events.ResultChan() {
			if e.Type != watch.Added && e.Type != watch.Modified {
				continue
			}
			k := kind(e)
			if e.Type == watch.Added || k == "" {
				continue
			}
			w.mu.Lock()
			w.counts[k]++
			w.mu.Unlock()
		}
	}()
}

// total is the number of writes counted so far.
func (w *writeCounter) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.counts {
		n += c
	}
	return n
}

// stop ends the watches and returns the counts.
func (w *writeCounter) stop() map[string]int {
	for _, stop := range w.stops {
		stop()
	}
	w.wg.Wait()
	return w.counts
}
