package chaos

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// Leader election timings of the operators under test: short, so a killed
// leader's lease expires quickly, yet with a renew deadline a loaded
// 2-core machine meets. The idle measurement accounts for the renewals
// they cause.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// replicas runs the operator binary as a Deployment with n replicas and
// leader election would: a replica that exits (a lost lease makes
// controller-runtime exit) is started again, as the kubelet would; a replica
// the test kills is replaced at once.
type replicas struct {
	t          *testing.T
	kubeconfig string
	args       []string

	mu        sync.Mutex
	ops       []*framework.Operator
	restarts  int // replicas started again after they exited on their own
	stop      chan struct{}
	supervise sync.WaitGroup
}

// setUp is every chaos test's start: the cluster with the bundle installed,
// a namespace of its own, the world the end-state checks look at, and
// operatorReplicas operators with a leader elected.
func setUp(t *testing.T) (context.Context, *framework.Cluster, string, *world, *replicas) {
	t.Helper()
	cl := install(t)
	ctx := context.Background()
	ns, _ := env.Namespace(t)
	w := newWorld(t, cl, ns)
	r := startReplicas(ctx, t, cl, ns, operatorReplicas)
	if _, _, err := r.waitLeader(ctx, 2*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	return ctx, cl, ns, w, r
}

// startReplicas starts n operators watching ns only, electing a leader with
// a Lease in ns and serving the conversion webhook (its certificate Secret
// in ns): the bundle's configuration, with the local webhook URL.
func startReplicas(ctx context.Context, t *testing.T, c *framework.Cluster, ns string, n int) *replicas {
	t.Helper()
	r := &replicas{
		t:          t,
		kubeconfig: c.ServiceAccountKubeconfig(ctx, t, operatorNamespace, operatorServiceAccount),
		args: []string{
			"--namespaces=" + ns, "--namespace=" + ns,
			"--leader-elect", "--leader-election-namespace=" + ns,
			"--leader-elect-lease-duration=" + leaseDuration.String(),
			"--leader-elect-renew-deadline=" + renewDeadline.String(),
			"--leader-elect-retry-period=" + retryPeriod.String(),
			"--conversion-webhook=true",
			"--metrics-bind-address=0",
			// Debug logs of hundreds of instances would flood a failure report.
			"--log-level=info",
			"--graceful-shutdown-timeout=10s",
		},
		stop: make(chan struct{}),
	}
	for range n {
		r.ops = append(r.ops, r.newOperator())
	}
	r.supervise.Add(1)
	go r.superviseLoop()
	// Stop supervising before StartOperator's own cleanups stop the processes.
	t.Cleanup(r.halt)
	return r
}

func (r *replicas) newOperator() *framework.Operator {
	return framework.StartOperator(r.t, r.kubeconfig, r.args...)
}

// superviseLoop restarts replicas that exited.
func (r *replicas) superviseLoop() {
	defer r.supervise.Done()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		r.mu.Lock()
		for i, op := range r.ops {
			if op != nil && !op.Running() {
				r.t.Logf("operator replica %d exited on its own (log %s); starting it again", i, op.Log)
				r.ops[i] = r.newOperator()
				r.restarts++
			}
		}
		r.mu.Unlock()
	}
}

// halt ends supervision; the processes keep running until the test's
// cleanups (or stopAll) stop them.
func (r *replicas) halt() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.supervise.Wait()
}

// unplannedRestarts is how many replicas exited without being killed.
func (r *replicas) unplannedRestarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts
}

// leader is the replica that leads: a running process that logged that it
// acquired the lease. A process that loses the lease exits, so a running
// one that once acquired it still holds it (or is exiting right now).
func (r *replicas) leader() (int, *framework.Operator) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, op := range r.ops {
		if op != nil && op.Running() && op.LogContains("acquired lease") {
			return i, op
		}
	}
	return -1, nil
}

// waitLeader waits until some replica other than not leads.
func (r *replicas) waitLeader(ctx context.Context, timeout time.Duration, not *framework.Operator) (int, *framework.Operator, error) {
	var idx int
	var op *framework.Operator
	if !framework.WaitFor(ctx, timeout, func(context.Context) bool {
		idx, op = r.leader()
		return op != nil && op != not
	}) {
		return -1, nil, fmt.Errorf("no new leader within %s", timeout)
	}
	return idx, op, nil
}

// killLeader SIGKILLs the current leader, as a crash would, leaving its
// lease held until it expires, and starts a replacement process at once.
func (r *replicas) killLeader() (*framework.Operator, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, op := range r.ops {
		if op != nil && op.Running() && op.LogContains("acquired lease") {
			op.Kill()
			r.ops[i] = r.newOperator()
			return op, nil
		}
	}
	return nil, fmt.Errorf("no replica leads")
}

// stopAll stops every replica gracefully (the leader releases its lease)
// and supervision with it; startAll brings them back.
func (r *replicas) stopAll() {
	r.halt()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range r.ops {
		if op != nil {
			op.Stop()
		}
	}
}

func (r *replicas) startAll() {
	r.mu.Lock()
	for i := range r.ops {
		r.ops[i] = r.newOperator()
	}
	r.stop = make(chan struct{})
	r.mu.Unlock()
	r.supervise.Add(1)
	go r.superviseLoop()
}
