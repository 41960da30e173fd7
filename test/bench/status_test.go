package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// kwokPodCIDR is where kwok's pods get their addresses (framework's
// default), and reloaderPort where the operator reads their reloaders.
const (
	kwokPodCIDR  = "10.244.0.0/16"
	reloaderPort = "18082"
	// statusChanges is how many spec changes the status benchmark times.
	statusChanges = 20
)

// podPortRule makes connections from this host to the reloader port of
// kwok's pods end as target says: REJECT (refused at once, as from a pod
// whose port is closed) or DROP (no answer, as a default-deny
// NetworkPolicy does). kwok's pods run nothing, and what a connection to
// an address nobody serves meets depends on the machine's routes (here, a
// proxy that answers every connection); the rule makes it the same
// everywhere. It needs root (iptables); the benchmark says when it lacks it.
func podPortRule(b testing.TB, target string) bool {
	b.Helper()
	rule := []string{"OUTPUT", "-d", kwokPodCIDR, "-p", "tcp", "--dport", reloaderPort, "-m", "comment", "--comment", "nginx-operator-bench", "-j", target}
	if target == "REJECT" {
		rule = append(rule, "--reject-with", "tcp-reset")
	}
	if os.Geteuid() != 0 {
		return false
	}
	if out, err := exec.Command("iptables", append([]string{"-I"}, rule...)...).CombinedOutput(); err != nil {
		b.Logf("iptables: %v: %s", err, out)
		return false
	}
	b.Cleanup(func() { _ = exec.Command("iptables", append([]string{"-D"}, rule...)...).Run() })
	return true
}

// podsRefuse is the operator's flags for a kwok cluster: the defaults,
// with every pod refusing its reloader port; without root, reads off
// (--read-pod-status=false), which the log says.
func podsRefuse(b testing.TB) []string {
	b.Helper()
	if podPortRule(b, "REJECT") {
		return nil
	}
	b.Log("not root: the operator runs with --read-pod-status=false, not as bundle.yaml does")
	return []string{"--read-pod-status=false"}
}

// statusScenario is one way the pods' reloaders answer, or do not.
type statusScenario struct {
	name string
	// args are added to the operator's flags.
	args []string
	// rule is podPortRule's target, "" for none.
	rule string
}

// statusResult is what one scenario measured.
type statusResult struct {
	scenario string
	// convergeSeconds: the instances created until every one is Available.
	convergeSeconds float64
	// changeP50, changeP95: a spec change until status.observedGeneration
	// says it was seen.
	changeP50, changeP95 time.Duration
	// idle is how long nothing was asked of the operator; idleReconciles,
	// idleWrites and idleCPUSeconds what it did meanwhile.
	idle                                       time.Duration
	idleReconciles, idleWrites, idleCPUSeconds float64
	// writesPerInstance from the operator's start to the end of the changes.
	writesPerInstance float64
	rssMiB, anonMiB   float64
}

// BenchmarkPodStatus runs the operator as bundle.yaml does (it reads every
// pod's reloader) on BENCH_STATUS_N one-replica instances (default 1,000),
// where the pods refuse the reloader's port and where it is dropped (a
// default-deny NetworkPolicy), against reads off: the time to converge, a
// spec change until the status has seen it, what BENCH_IDLE (default 5m)
// with nothing to do costs, writes and memory.
func BenchmarkPodStatus(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	requireClusterComponents(b)
	n := 1000
	if v := os.Getenv("BENCH_STATUS_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("BENCH_STATUS_N=%q: want a positive count", v)
		}
	}
	idle := 5 * time.Minute
	if v := os.Getenv("BENCH_IDLE"); v != "" {
		var err error
		if idle, err = time.ParseDuration(v); err != nil || idle <= 0 {
			b.Fatalf("BENCH_IDLE=%q: want a positive duration", v)
		}
	}
	var results []statusResult
	for _, sc := range []statusScenario{
		{name: "reads off", args: []string{"--read-pod-status=false"}},
		{name: "default, port refused", rule: "REJECT"},
		{name: "default, port dropped", rule: "DROP"},
	} {
		b.Run(strings.ReplaceAll(sc.name, " ", "_"), func(b *testing.B) {
			for range b.N {
				if sc.rule != "" && !podPortRule(b, sc.rule) {
					tools.Missing(b, "needs root: iptables makes the pods' reloader port "+sc.rule)
				}
				results = append(results, runStatusScenario(b, n, idle, sc))
			}
		})
	}
	fmt.Print(statusTable(n, results))
}

// runStatusScenario converges n instances, idles for idle, then times
// statusChanges spec changes, each to another instance.
func runStatusScenario(b testing.TB, n int, idle time.Duration, sc statusScenario) statusResult {
	_, kubeconfig, cl, _ := operatorCluster(b, n)
	ctx := context.Background()
	op := startOperatorProcess(b, kubeconfig, sc.args)
	start := scrape(b, op)
	r := statusResult{scenario: sc.name, idle: idle}

	ready := watchReady(ctx, b, n, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cl.Watch(ctx, &v1beta1.NginxOperatorList{}, client.InNamespace(benchNamespace), &client.ListOptions{Raw: &opts})
	}, available)
	began := time.Now()
	inParallel(b, n, func(i int) error { return cl.Create(ctx, benchInstance(i)) })
	select {
	case <-ready:
	case <-time.After(time.Duration(n)*time.Second + 10*time.Minute):
		b.Fatalf("%s: %d instances did not become Available", sc.name, n)
	}
	r.convergeSeconds = time.Since(began).Seconds()

	settle(b, op)
	idleStart := scrape(b, op)
	time.Sleep(idle)
	idleEnd := scrape(b, op)
	r.idleReconciles, r.idleWrites, r.idleCPUSeconds = idleEnd.reconciles-idleStart.reconciles, idleEnd.writes-idleStart.writes, idleEnd.cpu-idleStart.cpu

	var took []time.Duration
	for i := range statusChanges {
		took = append(took, timeSpecChange(ctx, b, cl, fmt.Sprintf("web-%04d", i%n), int32(30+i)))
	}
	slices.Sort(took)
	r.changeP50, r.changeP95 = took[len(took)/2], took[(len(took)*95+99)/100-1]
	end := scrape(b, op)
	r.writesPerInstance = (end.writes - start.writes) / float64(n)
	status := procStatus(op.cmd.Process.Pid)
	r.rssMiB, r.anonMiB = status["VmRSS"]/(1<<20), status["RssAnon"]/(1<<20)
	return r
}

// available is true of an instance whose status describes its generation
// and says Reconciled and Available.
func available(obj any) (string, bool) {
	inst, ok := obj.(*v1beta1.NginxOperator)
	if !ok {
		return "", false
	}
	return inst.Name, inst.Status.ObservedGeneration == inst.Generation &&
		meta.IsStatusConditionTrue(inst.Status.Conditions, v1beta1.ConditionReconciled) &&
		meta.IsStatusConditionTrue(inst.Status.Conditions, v1beta1.ConditionAvailable)
}

// timeSpecChange changes name's keepalive timeout and returns how long the
// status took to observe the new generation, read from the apiserver every
// 10 ms.
func timeSpecChange(ctx context.Context, b testing.TB, cl client.Client, name string, keepalive int32) time.Duration {
	b.Helper()
	key := client.ObjectKey{Namespace: benchNamespace, Name: name}
	began := time.Now()
	inst := framework.UpdateInstance(ctx, b, cl, key, func(n *v1beta1.NginxOperator) { n.Spec.Config.KeepaliveTimeoutSeconds = keepalive })
	for time.Since(began) < 5*time.Minute {
		var now v1beta1.NginxOperator
		if err := cl.Get(ctx, key, &now); err == nil && now.Status.ObservedGeneration >= inst.Generation {
			return time.Since(began)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("%s: generation %d not observed in 5 minutes", name, inst.Generation)
	return 0
}

// statusTable prints the scenarios side by side.
func statusTable(n int, results []statusResult) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%d instances, 1 replica each; a spec change timed %d times\n", n, statusChanges)
	fmt.Fprintf(&sb, "%-24s %10s %10s %10s %9s %10s %11s %10s %9s %7s %7s\n",
		"scenario", "converge s", "change p50", "change p95", "idle", "idle rec/i", "idle writes", "idle CPU s", "writes/i", "RSS Mi", "anon Mi")
	for _, r := range results {
		fmt.Fprintf(&sb, "%-24s %10.1f %10s %10s %9s %10.2f %11.0f %10.2f %9.2f %7.1f %7.1f\n",
			r.scenario, r.convergeSeconds, r.changeP50.Round(time.Millisecond), r.changeP95.Round(time.Millisecond),
			r.idle, r.idleReconciles/float64(n), r.idleWrites, r.idleCPUSeconds, r.writesPerInstance, r.rssMiB, r.anonMiB)
	}
	return sb.String()
}
