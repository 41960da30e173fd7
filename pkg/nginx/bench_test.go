//go:build !unit

package nginx_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkConverge200Instances creates 200 instances for a fresh operator and
// reports how long they take to converge, the API requests it took, and the
// operator's heap with them in its cache, then again after 5,000 Secrets the
// operator does not manage are added (its cache must not hold them).
//
//	go test ./pkg/nginx -run '^$' -bench Converge200 -benchtime 1x
func BenchmarkConverge200Instances(b *testing.B) {
	cfg := env.Cluster(b).Config
	inprocess.InstallCRDs(b, cfg)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	c := inprocess.Client(b, env.Cluster(b).Config)
	const n = 200
	for range b.N {
		ns := framework.Namespace(b, cs)
		baseHeap := heapInUse()
		counter := &inprocess.RequestCounter{}
		stop := inprocess.StartWatching(b, env, counter, ns)

		start := time.Now()
		for i := range n {
			if err := c.Create(ctx, instance(ns, fmt.Sprintf("web-%03d", i))); err != nil {
				b.Fatal(err)
			}
		}
		if !framework.WaitFor(ctx, 5*time.Minute, func(ctx context.Context) bool {
			for i := range n {
				if !reconciled(ctx, c, ns, fmt.Sprintf("web-%03d", i)) {
					return false
				}
			}
			return true
		}) {
			b.Fatal("200 instances did not converge")
		}
		took := time.Since(start)
		heap200 := heapInUse() - baseHeap

		for i := range 5000 {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%04d", i), Namespace: ns},
				Data: map[string][]byte{"key": make([]byte, 1024)}}
			if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		// A window in which nothing may happen: an operator that cached
		// every Secret would have listed and stored these by now.
		time.Sleep(2 * time.Second)
		heapSecrets := heapInUse() - baseHeap
		stop()

		b.ReportMetric(took.Seconds(), "s-to-converge")
		b.ReportMetric(float64(counter.Reads()), "reads")
		b.ReportMetric(float64(len(counter.Writes())), "writes")
		b.ReportMetric(float64(heap200)/(1<<20), "MiB-heap-200-instances")
		b.ReportMetric(float64(heapSecrets)/(1<<20), "MiB-heap-plus-5000-secrets")
	}
}
