package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// The backends of BenchmarkEndpoints: Services of endpointsPerService pods
// each, every instance proxying one of them; a rollout rolls the first
// rolledServices of them.
const (
	backendServices     = 100
	endpointsPerService = 3
	rolledServices      = 34 // 102 pods
)

// endpointsResult is one scenario of BenchmarkEndpoints.
type endpointsResult struct {
	scenario                 string
	converge                 time.Duration
	writes                   float64 // per instance, to convergence
	heapMiB, anonMiB         float64
	rolled                   int // instances whose Service's pods rolled
	rollout                  time.Duration
	configWrites, podNudges  float64 // per rolled instance, during the rollout
	statusWrites, reconciles float64 // per rolled instance, during the rollout
}

// BenchmarkEndpoints measures what proxying to endpoints costs
// (BENCH_ENDPOINTS_N instances, default 1,000, the operator as bundle.yaml
// runs it): converging instances that proxy to Services of 3 pods each,
// against the same instances proxying nothing, then a rollout of about 100
// of those pods: the configuration writes (each one a reload) and pod
// nudges per instance concerned, and memory.
func BenchmarkEndpoints(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	requireClusterComponents(b)
	n := 1000
	if v := os.Getenv("BENCH_ENDPOINTS_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < backendServices {
			b.Fatalf("BENCH_ENDPOINTS_N=%q: want a count of at least %d", v, backendServices)
		}
	}
	var results []endpointsResult
	for _, proxied := range []bool{false, true} {
		name := map[bool]string{false: "no proxy", true: "proxy to 3 pods"}[proxied]
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			for range b.N {
				results = append(results, runEndpoints(b, n, name, proxied))
			}
		})
	}
	fmt.Printf("\n%d instances; %d Services of %d pods each behind them, %d of which roll\n", n, backendServices, endpointsPerService, rolledServices)
	fmt.Printf("%-16s %10s %9s %8s %8s %7s %9s %10s %10s %10s %9s\n", "scenario", "converge s", "writes/i", "heap Mi", "anon Mi",
		"rolled", "rollout s", "config/i", "nudges/i", "status/i", "rec/i")
	for _, r := range results {
		fmt.Printf("%-16s %10.1f %9.2f %8.1f %8.1f %7d %9.1f %10.2f %10.2f %10.2f %9.2f\n", r.scenario, r.converge.Seconds(), r.writes,
			r.heapMiB, r.anonMiB, r.rolled, r.rollout.Seconds(), r.configWrites, r.podNudges, r.statusWrites, r.reconciles)
	}
}

func runEndpoints(b testing.TB, n int, name string, proxied bool) endpointsResult {
	c, kubeconfig, cl, cs := operatorCluster(b, n+backendServices*endpointsPerService)
	ctx := context.Background()
	op := startOperatorProcess(b, kubeconfig, podsRefuse(b), os.Getenv("BENCH_OPERATOR_ENV"))
	r := endpointsResult{scenario: name}
	if proxied {
		inParallel(b, backendServices, func(i int) error { return createBackend(ctx, cs, i) })
	}
	before := scrape(b, op)
	ready := watchReady(ctx, b, n, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cl.Watch(ctx, &v1beta1.NginxOperatorList{}, client.InNamespace(benchNamespace), &client.ListOptions{Raw: &opts})
	}, func(obj any) (string, bool) {
		name, ok := available(obj)
		return name, ok && (!proxied || upstreamEndpoints(obj) == endpointsPerService)
	})
	start := time.Now()
	inParallel(b, n, func(i int) error {
		inst := benchInstance(i)
		if proxied {
			inst.Spec.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/",
				Proxy: &v1beta1.ProxyLocation{Service: backendName(i % backendServices), Port: 80}}}}}
		}
		return cl.Create(ctx, inst)
	})
	select {
	case <-ready:
	case <-time.After(time.Duration(n)*time.Second + 5*time.Minute):
		b.Fatalf("%s: %d instances did not become Available", name, n)
	}
	r.converge = time.Since(start)
	settle(b, op)
	after := afterGC(b, op)
	r.writes = (after.writes - before.writes) / float64(n)
	r.heapMiB = after.heapLive / (1 << 20)
	r.anonMiB = procStatus(op.cmd.Process.Pid)["RssAnon"] / (1 << 20)
	if proxied {
		rollBackends(ctx, b, c, cs, op, n, &r)
	}
	return r
}

// rollBackends rolls the first rolledServices backends and waits until
// every instance proxying to them has the new pods' endpoints and the
// operator is idle; it counts what the operator wrote meanwhile, per
// instance concerned.
func rollBackends(ctx context.Context, b testing.TB, c *framework.Cluster, cs kubernetes.Interface, op *operatorProcess, n int, r *endpointsResult) {
	auditBefore, before := countAudit(b, c.AuditLog()), scrape(b, op)
	start := time.Now()
	inParallel(b, rolledServices, func(i int) error {
		patch := `{"spec":{"template":{"metadata":{"annotations":{"rolled":"1"}}}}}`
		_, err := cs.AppsV1().Deployments(benchNamespace).Patch(ctx, backendName(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})
	if !framework.WaitFor(ctx, 5*time.Minute, func(ctx context.Context) bool {
		for i := range rolledServices {
			d, err := cs.AppsV1().Deployments(benchNamespace).Get(ctx, backendName(i), metav1.GetOptions{})
			if err != nil || d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != endpointsPerService ||
				d.Status.Replicas != endpointsPerService || d.Status.AvailableReplicas != endpointsPerService {
				return false
			}
		}
		return true
	}) {
		b.Fatal("the backends did not roll out")
	}
	// The last endpoint changes reach the instances a batch later.
	time.Sleep(2 * nginx.EndpointsBatch)
	settle(b, op)
	r.rollout = time.Since(start)
	after, auditAfter := scrape(b, op), countAudit(b, c.AuditLog())
	for i := range n {
		if i%backendServices < rolledServices {
			r.rolled++
		}
	}
	per := func(key string) float64 { return float64(auditAfter[key]-auditBefore[key]) / float64(r.rolled) }
	r.configWrites, r.podNudges, r.statusWrites = per("patch secrets"), per("patch pods"), per("patch nginxoperators/status")
	r.reconciles = (after.reconciles - before.reconciles) / float64(r.rolled)
}

func backendName(i int) string { return fmt.Sprintf("backend-%02d", i) }

// createBackend creates the Deployment and Service of backend i.
func createBackend(ctx context.Context, cs kubernetes.Interface, i int) error {
	labels := map[string]string{"app": backendName(i)}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: backendName(i), Namespace: benchNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](endpointsPerService),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: "backend:1", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}},
			}},
		},
	}
	if _, err := cs.AppsV1().Deployments(benchNamespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: backendName(i), Namespace: benchNamespace}, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
	_, err := cs.CoreV1().Services(benchNamespace).Create(ctx, svc, metav1.CreateOptions{})
	return err
}

// upstreamEndpoints is how many endpoints an instance's one upstream has.
func upstreamEndpoints(obj any) int32 {
	inst, ok := obj.(*v1beta1.NginxOperator)
	if !ok || len(inst.Status.Upstreams) != 1 {
		return -1
	}
	return inst.Status.Upstreams[0].Endpoints
}
