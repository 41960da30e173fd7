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
// leader election would: a replica that exits is started again, as the
// kubelet would; a replica the test kills is replaced at once.
//
// It is also the suite's judge of the operators themselves: a replica may
// end only because the test ended it (killed, stopped) or, while the test
// has the control plane down on purpose (outage), because it lost its
// lease or could not start against it. Any other exit, and a panic in any
// replica's log, recovered or not, fails the test when it ends (see
// findings).
type replicas struct {
	t          *testing.T
	kubeconfig string
	args       []string
	proc       framework.OperatorProcess // which binary, with what environment

	mu        sync.Mutex
	ops       []*framework.Operator
	started   []*framework.Operator // every process started, in order
	startedAt map[*framework.Operator]time.Time
	ended     map[*framework.Operator]string // why the test ended a process
	exits     []string                       // exits the test did not cause
	restarts  int                            // replicas started again after they exited on their own
	// outageExits counts the replicas that exited because the test had the
	// control plane down on purpose: they lost their lease, or were started
	// during the outage and gave up.
	outageExits int
	// From outageFrom until outageUntil, a replica that exits with an error
	// (status 1) having lost its lease, or having been started in between,
	// does so because of the test (zero: no outage).
	outageFrom, outageUntil time.Time
	// report fails the test with a finding (t.Error); the tests of the
	// judge catch it instead.
	report    func(finding string)
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
	r := startReplicas(ctx, t, cl, ns, operatorReplicas, framework.OperatorProcess{})
	if _, _, err := r.waitLeader(ctx, 2*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	return ctx, cl, ns, w, r
}

// startReplicas starts n operators (p says which binary) watching ns only,
// electing a leader with a Lease in ns and serving the conversion webhook
// (its certificate Secret in ns): the bundle's configuration, with the
// local webhook URL.
func startReplicas(ctx context.Context, t *testing.T, c *framework.Cluster, ns string, n int, p framework.OperatorProcess) *replicas {
	t.Helper()
	r := &replicas{
		t:          t,
		kubeconfig: c.ServiceAccountKubeconfig(ctx, t, operatorNamespace, operatorServiceAccount),
		proc:       p,
		args: []string{
			// kwok's pods run no reloader to read.
			"--read-pod-status=false",
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
		ended:     map[*framework.Operator]string{},
		startedAt: map[*framework.Operator]time.Time{},
		stop:      make(chan struct{}),
	}
	r.report = func(f string) { t.Error(f) }
	// Registered first, so it runs last: after every process has stopped,
	// a panic while shutting down counts too.
	t.Cleanup(r.judge)
	for range n {
		r.ops = append(r.ops, r.newOperator())
	}
	r.supervise.Add(1)
	go r.superviseLoop()
	return r
}

// newOperator starts a replica. Cleanups run last-in first-out: the halt
// registered after the process's own stop runs before it, so the
// supervisor never takes the test's final stop for an exit of its own.
func (r *replicas) newOperator() *framework.Operator {
	op := framework.StartOperatorWith(r.t, r.proc, r.kubeconfig, r.args...)
	r.t.Cleanup(r.halt)
	r.started = append(r.started, op)
	r.startedAt[op] = time.Now()
	return op
}

// end ends op for the test, saying how; r.mu must be held.
func (r *replicas) end(op *framework.Operator, how string) {
	r.ended[op] = how
	if how == "killed" {
		op.Kill()
	} else {
		op.Stop()
	}
}

// superviseLoop restarts replicas that exited, and notes why they did.
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
				r.exited(i, op)
				r.ops[i] = r.newOperator()
				r.restarts++
			}
		}
		r.mu.Unlock()
	}
}

// exited notes why replica i (op) ended on its own: an outage the test
// caused (a lease lost, or a start that gave up against the downed control
// plane), or an exit that fails the test. r.mu is held.
func (r *replicas) exited(i int, op *framework.Operator) {
	code, _ := op.ExitCode()
	inOutage := code == 1 && time.Now().Before(r.outageUntil)
	switch {
	case inOutage && op.LogContains(leaseLost):
		r.outageExits++
		r.t.Logf("operator replica %d lost its lease during the control-plane outage and exited; starting it again", i)
		return
	case inOutage && r.startedAt[op].After(r.outageFrom):
		r.outageExits++
		r.t.Logf("operator replica %d, started during the control-plane outage, gave up (%s); starting it again", i, logTail(op.Log, 1))
		return
	}
	r.exits = append(r.exits, fmt.Sprintf("operator replica %d exited on its own with status %d (log %s):\n%s", i, code, op.Log, logTail(op.Log, 15)))
	r.t.Logf("operator replica %d exited on its own with status %d (log %s); starting it again", i, code, op.Log)
}

// leaseLost is what the operator logs when leader election ends its run.
const leaseLost = "leader election lost"

// outage runs disrupt, which takes the control plane down on purpose: until
// outageGrace after it returns, a replica that exits because it lost its
// lease, or one started meanwhile that gives up, does so because of the
// test. Without it, one that does fails the
// test.
func (r *replicas) outage(disrupt func() error) error {
	r.mu.Lock()
	r.outageFrom, r.outageUntil = time.Now(), time.Now().Add(24*time.Hour)
	r.mu.Unlock()
	err := disrupt()
	r.mu.Lock()
	r.outageUntil = time.Now().Add(outageGrace)
	r.mu.Unlock()
	return err
}

// outageGrace is how long after the control plane is back a replica may
// still exit for a lease it lost during the outage: a renewal that began
// before it may be given up a renew deadline later, and the supervisor
// sees the exit within a tick.
const outageGrace = leaseDuration + renewDeadline + 5*time.Second

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

// unplannedRestarts is how many replicas exited without being killed and
// were started again.
func (r *replicas) unplannedRestarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts
}

// findings are what fails the test: exits the test did not cause, and
// panics in the log of any process it started, whatever ended it.
func (r *replicas) findings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.exits...)
	for i, op := range r.started {
		if p := panicsIn(op.Log); p != "" {
			out = append(out, fmt.Sprintf("operator process %d (log %s) panicked:\n%s", i, op.Log, p))
		}
	}
	return out
}

// judge, when the test ends, fails it on any finding, and logs how every
// operator process ended.
func (r *replicas) judge() {
	r.halt()
	found := r.findings()
	r.mu.Lock()
	defer r.mu.Unlock()
	killed, stopped := 0, 0
	for _, how := range r.ended {
		if how == "killed" {
			killed++
		} else {
			stopped++
		}
	}
	r.t.Logf("operator processes: %d started; %d killed and %d stopped by the test, %d exited because of a control-plane outage the test caused, %d other exits, %d findings",
		len(r.started), killed, stopped, r.outageExits, len(r.exits), len(found))
	for _, f := range found {
		r.report(f)
	}
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
			r.end(op, "killed")
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
			r.end(op, "stopped")
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
