//go:build !unit

package gateway_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The operator's CPU for each route attached to one Gateway, one at a time,
// against a real apiserver and without pods: everything the operator does
// for a route (the Gateway controller's translation and check, the route's
// and the Gateway's status, the NginxOperator controller's rendering and
// write, and the reconciles its own writes set off), as this process's CPU
// time (the operator runs in it; the apiserver does not). BENCH_ROUTES
// routes (default 200); with -cpuprofile, where that time goes.
func BenchmarkAttachingRoutesOneAtATime(b *testing.B) {
	n := 200
	if v := os.Getenv("BENCH_ROUTES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("BENCH_ROUTES=%q: want a positive integer", v)
		}
	}
	ctx, ns, c := setup(b)
	gatewayToAPI(b, c, ns)
	secret := types.NamespacedName{Namespace: ns, Name: layout.NamesFor(graph.InstanceName("web")).ConfigSecret}
	serves := func(path string) error {
		var s corev1.Secret
		if err := c.Get(ctx, secret, &s); err != nil {
			return err
		}
		if !strings.Contains(string(s.Data[layout.ConfigFile]), " "+path+"/ {") {
			return fmt.Errorf("nginx.conf does not serve %s yet", path)
		}
		return nil
	}
	b.ResetTimer()
	began, cpu, reconciles := time.Now(), processCPU(), reconcileCounts(b)
	for i := range n {
		name := fmt.Sprintf("r%04d", i)
		tools.Must(b, c.Create(ctx, apiRoute(ns, name)))
		tools.Eventually(b, time.Minute, name+" served", func() error { return serves("/" + name) })
	}
	// The reconciles the last route set off settle.
	time.Sleep(2 * time.Second)
	used := processCPU() - cpu
	b.StopTimer()
	for controller, count := range reconcileCounts(b) {
		if per := float64(count-reconciles[controller]) / float64(n); per > 0 {
			b.ReportMetric(per, controller+"-reconciles/route")
		}
	}
	b.ReportMetric(float64(used.Milliseconds())/float64(n), "cpu-ms/route")
	b.ReportMetric(float64(time.Since(began).Milliseconds())/float64(n), "wall-ms/route")
	b.Logf("%d routes: %s of this process's CPU (%.1f ms a route) over %s", n, used.Round(time.Millisecond), float64(used.Milliseconds())/float64(n), time.Since(began).Round(time.Second))
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reconcileCounts are controller-runtime's reconcile_total by controller.
func reconcileCounts(b *testing.B) map[string]float64 {
	families, err := ctrlmetrics.Registry.Gather()
	tools.Must(b, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}
