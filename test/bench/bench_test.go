// Package bench measures how the operator converges N NginxOperator instances
// on a local cluster with kwok nodes, against a floor measured the same way:
// the same child objects created directly by a plain client, so that what is
// left is the time the controller-manager, scheduler and kwok take.
//
// It has benchmarks only; `go test` without -bench runs nothing here.
//
//	BENCH_N=100 go test ./test/bench -run '^$' -bench . -benchtime 1x -timeout 2h
//
// BENCH_N lists the instance counts (default 100); BENCH_OUT, when set, is
// the directory performance.json and performance.svg are written to (make
// bench writes them to Documentation/).
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/operator"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Sizes of the unrelated load the operator's cache must not hold.
const (
	unrelatedSecrets      = 10000
	unrelatedStatefulSets = 1000
	unrelatedServices     = 1000
	// workers is how many goroutines create objects, in both runs.
	workers = 8
	// benchNamespace holds the instances (or the floor's children).
	benchNamespace = "bench"
	// benchUser is the ServiceAccount both runs write with, and the only user
	// the apiserver audits.
	benchUser = "bench-writer"
)

// benchReloaderImage is the image the floor's pods copy the reloader from,
// as the operator's do (--reloader-image); kwok runs neither.
const benchReloaderImage = operator.DefaultAgentImage + ":bench"

// controllerManagerArgs lift kube-controller-manager's client limits (20
// QPS, burst 30 by default) so that it is not what both runs wait for: with
// thousands of StatefulSets and pods it would otherwise be the bottleneck of
// the floor and of the operator alike, hiding the operator's own cost.
var controllerManagerArgs = []string{"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-statefulset-syncs=20"}

func instanceCounts(b testing.TB) []int {
	v := os.Getenv("BENCH_N")
	if v == "" {
		return []int{100}
	}
	var ns []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("BENCH_N=%q: want comma-separated positive counts", v)
		}
		ns = append(ns, n)
	}
	return ns
}

// BenchmarkConverge runs, for every N of BENCH_N, the floor and the operator
// each on a cluster of its own, prints the table and writes the results.
func BenchmarkConverge(b *testing.B) {
	// The benchmark's controller-runtime clients log nothing worth reading.
	ctrllog.SetLogger(logr.Discard())
	requireClusterComponents(b)
	var results []Result
	for _, n := range instanceCounts(b) {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for range b.N {
				r := Result{N: n}
				runFloor(b, n, &r)
				runOperator(b, n, &r)
				r.Ratio = r.OperatorSeconds / r.FloorSeconds
				b.ReportMetric(r.FloorSeconds, "s-floor")
				b.ReportMetric(r.OperatorSeconds, "s-operator")
				b.ReportMetric(r.WritesPerInstance, "writes/instance")
				b.ReportMetric(r.ReadsPerInstance, "reads/instance")
				b.ReportMetric(r.RSSMiB, "MiB-RSS")
				b.ReportMetric(r.HeapLiveMiB, "MiB-live-heap")
				results = append(results, r)
			}
		})
	}
	if len(results) == 0 {
		return
	}
	fmt.Print(Table(results))
	if dir := os.Getenv("BENCH_OUT"); dir != "" {
		if !filepath.IsAbs(dir) {
			root, err := tools.RepoRoot()
			if err != nil {
				b.Fatal(err)
			}
			dir = filepath.Join(root, dir)
		}
		if err := WriteResults(dir, results); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("wrote %s and %s\n", filepath.Join(dir, "performance.json"), filepath.Join(dir, "performance.svg"))
	}
}

// requireClusterComponents skips, or fails where tools are required,
// without the binaries of a bench cluster.
func requireClusterComponents(b testing.TB) {
	b.Helper()
	for _, bin := range clusterComponents {
		if _, err := framework.BinPath(bin); err != nil {
			tools.Missing(b, err.Error())
		}
	}
}

// startCluster starts a cluster with enough fake nodes for n one-replica
// instances (110 pods a node), auditing benchUser, and returns it with a
// kubeconfig of benchUser (bound to cluster-admin).
func startCluster(b testing.TB, n int) (*framework.Cluster, string) {
	b.Helper()
	dir, err := os.MkdirTemp("", "nginx-operator-bench-")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := framework.Start(ctx, framework.Options{
		Dir: dir, Nodes: n/100 + 2, PodCIDR: kwokPodCIDR,
		AuditUsers:            []string{framework.ServiceAccountUser("default", benchUser)},
		ControllerManagerArgs: controllerManagerArgs, APIServerArgs: apiServerArgs(),
	})
	if err != nil {
		b.Fatalf("%v (logs in %s)", err, dir)
	}
	b.Cleanup(func() {
		c.Stop()
		if !b.Failed() {
			os.RemoveAll(dir)
		} else {
			b.Logf("cluster logs kept in %s", dir)
		}
	})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	kubeconfig := c.ServiceAccountKubeconfig(ctx, b, "default", benchUser)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: benchUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: benchUser}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, ns := range []string{benchNamespace, "unrelated"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return c, kubeconfig
}

// unlimited is cfg without client-side rate limiting, as fast as the
// apiserver answers.
func unlimited(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func configFor(b testing.TB, kubeconfig string) *rest.Config {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	return unlimited(cfg)
}

// benchInstance is the instance both runs deploy: one replica, one port,
// the default configuration.
func benchInstance(i int) *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%04d", i), Namespace: benchNamespace},
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr.To[int32](1),
			Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		},
	}
}

// inParallel runs fn(0..n-1) on workers goroutines and fails on the first error.
func inParallel(b testing.TB, n int, fn func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// runFloor creates what the operator would create for n instances (the
// children its builders produce) with a plain clientset and returns the
// seconds until every StatefulSet reports its replica ready.
func runFloor(b testing.TB, n int, r *Result) {
	c, kubeconfig := startCluster(b, n)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(configFor(b, kubeconfig))
	ready := watchReady(ctx, b, n, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cs.AppsV1().StatefulSets(benchNamespace).Watch(ctx, opts)
	}, func(obj any) (string, bool) {
		sts, ok := obj.(*appsv1.StatefulSet)
		if !ok {
			return "", false
		}
		return sts.Name, sts.Status.ReadyReplicas >= 1 && sts.Status.ObservedGeneration >= sts.Generation
	})
	start, cpu := time.Now(), controlPlaneCPU(c)
	created := createdAfter(ctx, b, n, start, cs)
	inParallel(b, n, func(i int) error {
		inst, errs := validation.NginxOperator(ctx, benchInstance(i))
		if len(errs) > 0 {
			return errs.ToAggregate()
		}
		config, err := render.Config(&inst.Spec, render.Options{Paths: render.PodPaths(), Namespace: benchNamespace})
		if err != nil {
			return err
		}
		in := nginx.Materials{Config: config, ConfigHash: fmt.Sprintf("%016x", i), Image: "nginx:1.27", ExporterImage: "nginx/nginx-prometheus-exporter:1.4",
			ReloaderImage: benchReloaderImage, References: render.ReferencesOf(&inst.Spec)}
		co := metav1.CreateOptions{FieldManager: "bench-floor"}
		if _, err := cs.CoreV1().ServiceAccounts(benchNamespace).Create(ctx, nginx.ServiceAccount(inst), co); err != nil {
			return err
		}
		if _, err := cs.CoreV1().Secrets(benchNamespace).Create(ctx, nginx.ConfigSecret(inst, in), co); err != nil {
			return err
		}
		if _, err := cs.CoreV1().Services(benchNamespace).Create(ctx, nginx.HeadlessService(inst), co); err != nil {
			return err
		}
		if _, err := cs.CoreV1().Services(benchNamespace).Create(ctx, nginx.Service(inst, serviceport.Resolve(&inst.Spec, serviceport.Standard)), co); err != nil {
			return err
		}
		_, err = cs.AppsV1().StatefulSets(benchNamespace).Create(ctx, nginx.StatefulSet(inst, in), co)
		return err
	})
	select {
	case <-ready:
	case <-time.After(time.Duration(n)*time.Second + 5*time.Minute):
		b.Fatalf("floor: %d StatefulSets did not become ready", n)
	}
	r.FloorSeconds = time.Since(start).Seconds()
	r.FloorControlPlaneCPUSeconds = controlPlaneCPU(c) - cpu
	r.FloorCreatedSeconds = <-created
	// Idle, its controller-manager and kwok still keep a thousand pods
	// going: the operator's run must not share the machine with them.
	c.Stop()
}

// createdAfter sends, once every one of n StatefulSets exists, the seconds
// since start.
func createdAfter(ctx context.Context, b testing.TB, n int, start time.Time, cs kubernetes.Interface) <-chan float64 {
	all := watchReady(ctx, b, n, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cs.AppsV1().StatefulSets(benchNamespace).Watch(ctx, opts)
	}, func(obj any) (string, bool) {
		if sts, ok := obj.(*appsv1.StatefulSet); ok {
			return sts.Name, true
		}
		return "", false
	})
	out := make(chan float64, 1)
	go func() {
		<-all
		out <- time.Since(start).Seconds()
	}()
	return out
}

// clusterComponents are the processes of a bench cluster.
var clusterComponents = []string{framework.Etcd, framework.KubeAPIServer, framework.KubeControllerManager, framework.KubeScheduler, framework.Kwok}

// controlPlaneCPU is the CPU time the cluster's own processes have used.
func controlPlaneCPU(c *framework.Cluster) float64 {
	var sum float64
	for _, component := range clusterComponents {
		sum += c.CPUSeconds(component)
	}
	return sum
}

// watchReady watches from now on and closes the returned channel once n
// distinct objects were seen ready; a closed watch is opened again from the
// last resource version.
func watchReady(ctx context.Context, b testing.TB, n int, open func(context.Context, metav1.ListOptions) (watch.Interface, error), isReady func(any) (string, bool)) <-chan struct{} {
	b.Helper()
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	b.Cleanup(cancel)
	first, err := open(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		seen := map[string]bool{}
		rv := ""
		w := first
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					rv = "" // too old: look at everything again
					continue
				}
				if m, err := meta.Accessor(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
				if name, ok := isReady(ev.Object); ok && !seen[name] {
					seen[name] = true
					if len(seen) == n {
						close(done)
						w.Stop()
						return
					}
				}
			}
			if ctx.Err() != nil {
				return
			}
			for {
				w, err = open(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: false})
				if err == nil {
					break
				}
				select { // retry the watch a second later, unless the run is over
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return done
}

// operatorProcess is the operator binary running against a bench cluster.
type operatorProcess struct {
	cmd             *exec.Cmd
	health, metrics string
	pprof           string // the profiler's address, with BENCH_PROFILE
	log             string
	exited          chan struct{}
}

// startOperatorProcess runs the operator as bundle.yaml does, with args added
// (later flags win) and env added to its environment.
func startOperatorProcess(b testing.TB, kubeconfig string, args []string, env ...string) *operatorProcess {
	b.Helper()
	bin := os.Getenv("BENCH_OPERATOR_BIN") // another build, to compare
	if bin == "" {
		bin = framework.OperatorBinary(b)
	}
	var ports [4]int
	for i := range ports {
		p, err := tools.FreePort()
		if err != nil {
			b.Fatal(err)
		}
		ports[i] = p
	}
	o := &operatorProcess{
		health:  fmt.Sprintf("127.0.0.1:%d", ports[0]),
		metrics: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		pprof:   fmt.Sprintf("127.0.0.1:%d", ports[3]),
		log:     filepath.Join(b.TempDir(), "operator.log"),
		exited:  make(chan struct{}),
	}
	logFile, err := os.Create(o.log)
	if err != nil {
		b.Fatal(err)
	}
	args = append([]string{"--kubeconfig=" + kubeconfig,
		"--health-probe-bind-address=" + o.health,
		"--metrics-bind-address=" + o.metrics, "--metrics-secure=false",
		fmt.Sprintf("--webhook-port=%d", ports[2]), "--webhook-cert-dir=" + b.TempDir(),
		"--conversion-webhook=false", "--log-level=error"}, append(profilerArgs(o.pprof), args...)...)
	o.cmd = exec.Command(bin, args...)
	o.cmd.Stdout, o.cmd.Stderr = logFile, logFile
	o.cmd.Env = os.Environ()
	for _, e := range env {
		if e != "" {
			o.cmd.Env = append(o.cmd.Env, e)
		}
	}
	o.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := o.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = o.cmd.Wait(); logFile.Close(); close(o.exited) }()
	b.Cleanup(o.stop)
	if !framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) bool {
		return httpOK(ctx, "http://"+o.health+"/readyz")
	}) {
		data, _ := os.ReadFile(o.log)
		b.Fatalf("the operator did not become ready:\n%s", data)
	}
	return o
}

func (o *operatorProcess) stop() {
	select {
	case <-o.exited:
		return
	default:
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.exited:
	case <-time.After(30 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.exited
	}
}

// operatorCluster starts a cluster for pods pods with the CRDs installed,
// and the bench writer's clients of it.
func operatorCluster(b testing.TB, pods int) (*framework.Cluster, string, client.WithWatch, kubernetes.Interface) {
	c, kubeconfig := startCluster(b, pods)
	if err := framework.InstallCRDs(context.Background(), c.Config); err != nil {
		b.Fatal(err)
	}
	cfg := configFor(b, kubeconfig)
	cl, err := client.NewWithWatch(cfg, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		b.Fatal(err)
	}
	return c, kubeconfig, cl, kubernetes.NewForConfigOrDie(cfg)
}

// runOperator runs the operator on a cluster of its own and fills r.
func runOperator(b testing.TB, n int, r *Result) {
	c, kubeconfig, cl, cs := operatorCluster(b, n)
	ctx := context.Background()
	args := podsRefuse(b)
	op := startOperatorProcess(b, kubeconfig, args, os.Getenv("BENCH_OPERATOR_ENV")) // e.g. GOMEMLIMIT=40MiB
	before := scrape(b, op)
	auditBefore := countAudit(b, c.AuditLog())

	ready := watchReady(ctx, b, n, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cl.Watch(ctx, &v1beta1.NginxOperatorList{}, client.InNamespace(benchNamespace), &client.ListOptions{Raw: &opts})
	}, available)
	start, cpu := time.Now(), controlPlaneCPU(c)
	created := createdAfter(ctx, b, n, start, cs)
	profiled := profileCPU(b, fmt.Sprintf("converge-%d", n), op, c.Config, 60)
	inParallel(b, n, func(i int) error { return cl.Create(ctx, benchInstance(i)) })
	select {
	case <-ready:
	case <-time.After(time.Duration(n)*time.Second + 5*time.Minute):
		b.Fatalf("operator: %d instances did not become Available", n)
	}
	r.OperatorSeconds = time.Since(start).Seconds()
	r.ControlPlaneCPUSeconds = controlPlaneCPU(c) - cpu
	r.OperatorCreatedSeconds = <-created
	// Let the last status writes and Events land before counting.
	settle(b, op)
	profiled()
	profileHeap(b, fmt.Sprintf("converge-%d", n), op)
	after := afterGC(b, op)
	auditAfter := countAudit(b, c.AuditLog())
	r.WritesPerInstance = (after.writes - before.writes) / float64(n)
	r.ReadsPerInstance = (after.reads - before.reads) / float64(n)
	r.ReconcilesPerInstance = (after.reconciles - before.reconciles) / float64(n)
	if rec := after.reconciles - before.reconciles; rec > 0 {
		r.ReconcileMillis = 1000 * (after.reconcileTime - before.reconcileTime) / rec
		r.QueueWaitMillis = 1000 * (after.queueWait - before.queueWait) / rec
	}
	r.CPUSeconds = after.cpu - before.cpu
	r.RSSMiB = after.rss / (1 << 20)
	status := procStatus(op.cmd.Process.Pid)
	r.PeakRSSMiB = status["VmHWM"] / (1 << 20)
	r.RSSAnonMiB, r.RSSFileMiB = status["RssAnon"]/(1<<20), status["RssFile"]/(1<<20)
	r.HeapLiveMiB = after.heapLive / (1 << 20)
	r.WritesByKind = map[string]float64{}
	for k, v := range auditAfter {
		if d := v - auditBefore[k]; d > 0 {
			r.WritesByKind[k] = float64(d) / float64(n)
		}
	}

	// Objects the operator does not manage: its cache must not grow with them.
	inParallel(b, unrelatedSecrets, func(i int) error {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: "unrelated"},
			Data: map[string][]byte{"key": make([]byte, 1024)}}
		_, err := cs.CoreV1().Secrets("unrelated").Create(ctx, s, metav1.CreateOptions{})
		return err
	})
	inParallel(b, unrelatedStatefulSets, func(i int) error {
		inst, errs := validation.NginxOperator(ctx, benchInstance(i)) // admission's defaults, as the floor's
		if len(errs) > 0 {
			return errs.ToAggregate()
		}
		sts := nginx.StatefulSet(inst, nginx.Materials{Config: []byte("x"), ConfigHash: "0", Image: "nginx:1.27", ReloaderImage: benchReloaderImage})
		sts.Namespace, sts.Name = "unrelated", fmt.Sprintf("unrelated-%04d", i)
		sts.Labels = map[string]string{"app": "unrelated"}
		sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "unrelated", "i": strconv.Itoa(i)}}
		sts.Spec.Template.Labels = sts.Spec.Selector.MatchLabels
		sts.Spec.Replicas = ptr.To[int32](0)
		_, err := cs.AppsV1().StatefulSets("unrelated").Create(ctx, sts, metav1.CreateOptions{})
		return err
	})
	// Services (with their EndpointSlices) in a namespace no instance
	// names anything in: the operator must neither cache nor reconcile
	// for them.
	inParallel(b, unrelatedServices, func(i int) error {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%04d", i), Namespace: "unrelated"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "unrelated"}, Ports: []corev1.ServicePort{{Port: 80}}}}
		_, err := cs.CoreV1().Services("unrelated").Create(ctx, svc, metav1.CreateOptions{})
		return err
	})
	settle(b, op)
	profileHeap(b, fmt.Sprintf("unrelated-%d", n), op) // what the unrelated objects added, against converge-N's
	unrelated := afterGC(b, op)
	r.RSSAnonUnrelatedMiB = procStatus(op.cmd.Process.Pid)["RssAnon"] / (1 << 20)
	r.HeapLiveUnrelatedMiB = unrelated.heapLive / (1 << 20)
	r.HeapGrowthPercent = 100 * (unrelated.heapLive - after.heapLive) / after.heapLive
	r.GCsDuringUnrelated = unrelated.gcCycles - after.gcCycles
	r.ReconcilesDuringUnrelated = unrelated.reconciles - after.reconciles

	// A restarted operator reconciles every instance once more: that pass
	// (what a resync does) must not write.
	op.stop()
	op = startOperatorProcess(b, kubeconfig, args, os.Getenv("BENCH_OPERATOR_ENV"))
	if !framework.WaitFor(ctx, time.Duration(n)*time.Second+2*time.Minute, func(context.Context) bool {
		m := scrape(b, op)
		return m.reconciles >= float64(n) && m.queueDepth == 0
	}) {
		b.Fatalf("the restarted operator did not reconcile %d instances", n)
	}
	settle(b, op)
	resync := scrape(b, op)
	r.ResyncWrites = resync.writes
	r.ResyncReconciles = resync.reconciles
}

// settle waits until the operator's work queue has been empty for two
// seconds in a row.
func settle(b testing.TB, op *operatorProcess) {
	b.Helper()
	quiet := 0
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for quiet < 4 {
		<-tick.C
		if scrape(b, op).queueDepth == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// afterGC scrapes the operator until a garbage collection happened since
// the first scrape, so that go_gc_heap_live_bytes describes the heap at rest
// rather than whatever was in flight at the last collection. Each scrape
// allocates a little in the operator, which is what brings the collection
// on without a debug endpoint.
func afterGC(b testing.TB, op *operatorProcess) figures {
	b.Helper()
	first := scrape(b, op)
	f := first
	for range 5000 {
		if f = scrape(b, op); f.gcCycles > first.gcCycles {
			break
		}
	}
	return f
}
