package tools

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestPollEndsWhenDoneOnAnErrorOrAtTheTimeout(t *testing.T) {
	ctx := context.Background()
	calls := 0
	if err := Poll(ctx, time.Millisecond, time.Minute, func(context.Context) (bool, error) { calls++; return calls == 3, nil }); err != nil || calls != 3 {
		t.Errorf("done on the third call: %v after %d calls", err, calls)
	}
	gone := errors.New("the server exited")
	if err := Poll(ctx, time.Millisecond, time.Minute, func(context.Context) (bool, error) { return false, gone }); !errors.Is(err, gone) {
		t.Errorf("an error ends the wait with it: got %v", err)
	}
	if err := Poll(ctx, time.Millisecond, 20*time.Millisecond, func(context.Context) (bool, error) { return false, nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a timeout: got %v", err)
	}
}

// recorder is a testing.TB whose Fatalf records and ends the goroutine.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func eventually(timeout time.Duration, cond func() error) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(r, timeout, "the thing", cond)
	}()
	<-done
	return r.msg
}

func TestEventuallyFailsWithTheLastErrorOrTheStop(t *testing.T) {
	if msg := eventually(time.Minute, func() error { return nil }); msg != "" {
		t.Errorf("a condition that holds failed: %s", msg)
	}
	if msg := eventually(50*time.Millisecond, func() error { return errors.New("got 503") }); !strings.Contains(msg, "the thing: still not so after 50ms: got 503") {
		t.Errorf("a timeout: %q", msg)
	}
	if msg := eventually(time.Minute, func() error { return &Stop{Err: errors.New("nginx exited")} }); msg != "the thing: nginx exited" {
		t.Errorf("a stop: %q", msg)
	}
}
