package render

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// main is the main context: the processes, the events context, the http
// context and, with streams, the stream context (stream.go).
func (r *renderer) main(spec *v1beta1.NginxOperatorSpec) []conf.Directive {
	out := []conf.Directive{
		conf.D("worker_processes", workerProcesses(spec.Resources)),
		conf.D("worker_shutdown_timeout", strconv.FormatInt(workerShutdownTimeout(spec.Pod.TerminationGracePeriodSeconds), 10)+"s"),
		conf.D("pid", r.temp("nginx.pid")),
		conf.D("error_log", "stderr", "warn"),
		conf.B("events", nil, conf.D("worker_connections", itoa(spec.Config.WorkerConnections))),
		conf.B("http", nil, r.http(spec)...),
	}
	if len(spec.Config.Streams) > 0 {
		out = append(out, conf.B("stream", nil, r.stream(spec)...))
	}
	return out
}

// temp is a file or directory under the writable temp path.
func (r *renderer) temp(name string) string { return r.opts.Paths.Temp + "/" + name }

// workerProcesses is one nginx worker per CPU of the container's limit,
// rounded up, at most v1beta1.MaxWorkerProcesses. nginx's "auto" counts the
// node's CPUs: on a large node a container limited to one CPU would run
// dozens of workers, each with its own connections and caches, all
// throttled together. The bound is compared as a quantity first, so a
// limit of any size (milli-units of one beyond int64) cannot overflow.
func workerProcesses(r corev1.ResourceRequirements) string {
	cpu, ok := r.Limits[corev1.ResourceCPU]
	if !ok || cpu.Sign() <= 0 {
		return "auto"
	}
	if cpu.Cmp(*resource.NewQuantity(v1beta1.MaxWorkerProcesses, resource.DecimalSI)) >= 0 {
		return strconv.Itoa(v1beta1.MaxWorkerProcesses)
	}
	return strconv.FormatInt(max(1, (cpu.MilliValue()+999)/1000), 10)
}

// workerShutdownTimeout is how long nginx's workers may finish their
// requests after a graceful quit or a reload: what the pod's grace period
// leaves after the preStop delay, less 2 s for nginx to exit before the
// kubelet kills it.
func workerShutdownTimeout(gracePeriod int64) int64 {
	return max(gracePeriod-layout.PreStopDelaySeconds-2, 1)
}
