package prober

import (
	"errors"
	"os"
	"testing"
	"time"

	"net"
)

// When a pod is read next, by what its last read found.
func TestNextReadPacesThePodsByTheirLastAnswer(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	refused := errors.New("connection refused")
	dropped := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		name         string
		read         lastRead
		wantIn       time.Duration
		wantFailures int
	}{
		{"asked something new meanwhile: at once", lastRead{stale: true, failures: 2}, 0, 2},
		{"stale wins over an error", lastRead{stale: true, err: refused}, 0, 0},
		{"refused once: 2 s", lastRead{err: refused}, probeRetryFirst, 1},
		{"refused 3 times before: 16 s", lastRead{err: refused, failures: 3}, 16 * time.Second, 4},
		{"refused long: at most 5 min", lastRead{err: refused, failures: 40}, probeRetryMax, 41},
		{"timed out once: 30 s", lastRead{err: dropped}, probeRetryTimedOut, 1},
		{"timed out twice before: 2 min", lastRead{err: dropped, failures: 2}, 2 * time.Minute, 3},
		{"timed out 4 times before: at most 5 min", lastRead{err: dropped, failures: 4}, probeRetryMax, 5},
		{"spotted, not yet asked: 1 s", lastRead{spotted: true, settled: true}, probeBehind, 0},
		{"serves what it was asked: 5 min", lastRead{settled: true, failures: 3}, probeSettled, 0},
		{"behind for a minute: 1 s", lastRead{behindFor: time.Minute}, probeBehind, 0},
		{"behind for 2 minutes: 30 s", lastRead{behindFor: probeBehindFor}, probeBehindSlowly, 0},
	} {
		due, failures := nextRead(tc.read, now)
		if due.Sub(now) != tc.wantIn || failures != tc.wantFailures {
			t.Errorf("%s: next read in %s with %d failures, want %s with %d", tc.name, due.Sub(now), failures, tc.wantIn, tc.wantFailures)
		}
	}
}
