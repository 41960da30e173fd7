package prober

import (
	"errors"
	"net"
	"time"
)

// lastRead is what the schedule needs to know of a pod's last read.
type lastRead struct {
	// stale: the pod was asked something new during the read (it moved,
	// was nudged or should serve another configuration).
	stale bool
	// err is why the pod did not answer; failures counts the reads in a
	// row before this one that did not.
	err      error
	failures int
	// spotted: the pod was found by the pod watch and not yet asked for a
	// configuration.
	spotted bool
	// settled: the pod serves, or refused, the configuration asked for,
	// and no nudge is awaited.
	settled bool
	// behindFor is how long ago the pod was asked for its configuration.
	behindFor time.Duration
}

// nextRead is when a pod is read next after r, and the failures in a row
// it then counts (see the prober's pace, probeBehind and the rest).
func nextRead(r lastRead, now time.Time) (due time.Time, failures int) {
	switch {
	case r.stale:
		return now, r.failures
	case r.err != nil:
		first := probeRetryFirst
		if timedOut(r.err) {
			first = probeRetryTimedOut
		}
		return now.Add(min(first<<min(r.failures, 16), probeRetryMax)), r.failures + 1
	case r.spotted:
		// Track decides soon.
		return now.Add(probeBehind), 0
	case r.settled:
		return now.Add(probeSettled), 0
	case r.behindFor < probeBehindFor:
		return now.Add(probeBehind), 0
	}
	return now.Add(probeBehindSlowly), 0
}

// timedOut tells a read that found no answer at all (the connection or the
// request timed out) from one the pod refused or answered wrongly.
func timedOut(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}
