package conversion

import (
	"context"
	"time"

	"github.com/go-logr/logr"
)

// retryAfterError is how soon a failed pass is retried, at most.
const retryAfterError = 10 * time.Second

// periodic runs fn every interval until the manager stops. A failing pass is
// logged and retried sooner; it never stops the manager, since the next pass
// may well succeed (a CRD installed late, a conflict with kubectl apply).
type periodic struct {
	name       string
	leader     bool
	interval   time.Duration
	fn         func(context.Context) error
	log        logr.Logger
	delayFirst bool
}

func (p *periodic) NeedLeaderElection() bool { return p.leader }

func (p *periodic) Start(ctx context.Context) error {
	p.log.Info("starting", "loop", p.name, "interval", p.interval, "leaderOnly", p.leader)
	wait := time.Duration(0)
	if p.delayFirst {
		wait = p.interval
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = p.interval
		if err := p.fn(ctx); err != nil && ctx.Err() == nil {
			p.log.Error(err, "pass failed; retrying", "loop", p.name)
			wait = min(p.interval, retryAfterError)
		}
	}
}
