package chaos

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// The size of the leader-kill test: instances created, updated and (one in
// deleteEvery) deleted while the leader is killed leaderKills times.
const (
	churnInstances = 300
	leaderKills    = 20
	deleteEvery    = 10
	// churnRate is the test's writes per second: slow enough that the churn
	// lasts about as long as the kills, so kills land on every phase of it.
	churnRate = 12
)

// operatorReplicas is how many operator processes run, one of them leading.
const operatorReplicas = 2

// TestLeaderKillsDuringChurnLoseNothing runs two operator replicas with
// leader election and SIGKILLs whichever leads, leaderKills times, each time
// starting the killed replica again at once, while the test creates
// churnInstances instances, changes the configuration of each and deletes
// every deleteEvery-th. At the end every instance has converged with its
// children owned exactly once, deleted instances left nothing behind, and
// the operator, left alone, makes fewer than maxIdleRate requests a second
// besides its lease renewals.
func TestLeaderKillsDuringChurnLoseNothing(t *testing.T) {
	ctx, cl, _, w, r := setUp(t)

	// The churn: create i, change the configuration of i-40, delete i-80
	// when it is a deleteEvery-th: creates, updates and deletes interleave.
	type op struct {
		kind string
		i    int
	}
	const lag = 40
	var ops []op
	for i := 0; i < churnInstances+2*lag; i++ {
		if i < churnInstances {
			ops = append(ops, op{"create", i})
		}
		if j := i - lag; j >= 0 && j < churnInstances {
			ops = append(ops, op{"update", j})
		}
		if j := i - 2*lag; j >= 0 && j < churnInstances && j%deleteEvery == 0 {
			ops = append(ops, op{"delete", j})
		}
	}
	var done atomic.Int64
	churnErr := make(chan error, 1)
	churnStart := time.Now()
	go func() {
		tick := time.NewTicker(time.Second / churnRate)
		defer tick.Stop()
		for _, o := range ops {
			<-tick.C
			name := instanceName(o.i)
			var err error
			switch o.kind {
			case "create":
				// One in three is scaled to zero: Available False, ScaledToZero.
				err = w.create(ctx, name, int32(min(1, o.i%3)), 60)
			case "update":
				err = w.setKeepalive(ctx, name, 61)
			case "delete":
				err = w.delete(ctx, name)
			}
			if err != nil {
				churnErr <- err
				return
			}
			done.Add(1)
		}
		churnErr <- nil
	}()

	// The kills, spread over the churn: kill k waits until k/leaderKills of
	// it is done, and until the previous kill's successor leads.
	var kills int
	var lastKill time.Time
	var failovers []time.Duration
	var killErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := range leaderKills {
			framework.WaitFor(ctx, 5*time.Minute, func(context.Context) bool {
				return done.Load() >= int64(k*len(ops)/leaderKills)
			})
			killed, err := r.killLeader()
			if err != nil {
				killErr = err
				return
			}
			lastKill = time.Now()
			kills++
			if _, _, err := r.waitLeader(ctx, 2*time.Minute, killed); err != nil {
				killErr = err
				return
			}
			failovers = append(failovers, time.Since(lastKill))
		}
	}()
	if err := <-churnErr; err != nil {
		t.Fatal(err)
	}
	churnTime := time.Since(churnStart)
	wg.Wait()
	if killErr != nil {
		t.Fatalf("after %d leader kills: %v", kills, killErr)
	}
	var slowest, total time.Duration
	for _, f := range failovers {
		slowest = max(slowest, f)
		total += f
	}
	t.Logf("churn: %d creates, %d updates, %d deletes in %.1fs; %d leader kills, failover mean %.2fs, slowest %.2fs (lease %s, renew %s, retry %s) (the end of the test fails it on any replica's exit the test did not cause: %d so far)",
		churnInstances, churnInstances, (churnInstances+deleteEvery-1)/deleteEvery, churnTime.Seconds(), kills,
		total.Seconds()/float64(max(1, len(failovers))), slowest.Seconds(), leaseDuration, renewDeadline, retryPeriod, r.unplannedRestarts())
	if kills != leaderKills {
		t.Fatalf("%d leader kills, want %d", kills, leaderKills)
	}

	w.waitConverged(ctx, t, 4*time.Minute)
	t.Logf("%d instances converged %.1fs after the last leader kill", w.live(), time.Since(lastKill).Seconds())

	checkIdle(t, measureIdle(t, cl, r, idleWindow), operatorReplicas)
	// Still converged after the idle window: nothing came undone.
	if p := w.problems(ctx); len(p) > 0 {
		t.Errorf("after the idle window: %v", p)
	}
}
