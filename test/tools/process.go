package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a program a test runs in the background: nginx, the exporter,
// Prometheus.
type Process struct {
	name   string
	cmd    *exec.Cmd
	out    Buffer
	exited chan struct{}
	err    error
}

// Start runs bin with args in a process group of its own until the test
// ends, then stops it and its children (SIGTERM, SIGKILL after 10 s); what it
// printed is logged when the test failed.
func Start(t testing.TB, name, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{name: name, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.Output())
		}
	})
	return p
}

// Exited returns the error the process ended with, or nil while it runs
// (an exit status of 0 is reported as an error too: these programs serve
// until stopped).
func (p *Process) Exited() error {
	select {
	case <-p.exited:
		if p.err == nil {
			return fmt.Errorf("%s exited", p.name)
		}
		return fmt.Errorf("%s exited: %w", p.name, p.err)
	default:
		return nil
	}
}

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Output is what the process printed so far.
func (p *Process) Output() string { return p.out.String() }

// NginxArgs are the arguments that run nginx on the configuration file conf
// with prefix as its prefix directory, then args. Errors go to stderr (-e,
// nginx 1.19.5 or later): nginx then opens no compiled-in error log, which a
// test's user may not be allowed to write.
func NginxArgs(prefix, conf string, args ...string) []string {
	return append([]string{"-p", prefix, "-c", conf, "-e", "stderr"}, args...)
}

// NginxTest runs `nginx -t` on conf: nil when nginx accepts it, otherwise an
// error that quotes nginx.
func NginxTest(nginx, prefix, conf string) error {
	out, err := exec.Command(nginx, NginxArgs(prefix, conf, "-t", "-q")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("nginx -t: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// StartNginx runs the real nginx on conf in the foreground (see Start).
func StartNginx(t testing.TB, nginx, prefix, conf string) *Process {
	t.Helper()
	return Start(t, "nginx", nginx, NginxArgs(prefix, conf, "-g", "daemon off;")...)
}

// ErrNotYet is what a condition of Eventually returns while it waits.
var ErrNotYet = errors.New("not yet")

// Poll is the tests' one way to wait for something to happen; WaitFor and
// Eventually are its two faces. It calls cond at once and then every
// interval until cond says done (Poll returns nil), cond returns an error
// (Poll returns it at once: what it waits for will not happen), or timeout
// passes or ctx ends first (Poll returns an error saying so).
func Poll(ctx context.Context, interval, timeout time.Duration, cond func(context.Context) (done bool, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		done, err := cond(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not so within %s: %w", timeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// WaitFor polls cond every 100 ms until it is true (true) or timeout passes
// (false): for a caller that says itself what went wrong.
func WaitFor(ctx context.Context, timeout time.Duration, cond func(context.Context) bool) bool {
	return WaitForEvery(ctx, 100*time.Millisecond, timeout, cond)
}

// WaitForEvery is WaitFor checking cond every interval.
func WaitForEvery(ctx context.Context, interval, timeout time.Duration, cond func(context.Context) bool) bool {
	return Poll(ctx, interval, timeout, func(ctx context.Context) (bool, error) { return cond(ctx), nil }) == nil
}

// Eventually calls cond every 100 ms until it returns nil and fails t when
// timeout passes first, with what and cond's last error. A cond that
// returns a *Stop error ends the wait at once (a server that exited will not
// start answering).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	var last error
	err := Poll(context.Background(), 100*time.Millisecond, timeout, func(context.Context) (bool, error) {
		last = cond()
		var stop *Stop
		if errors.As(last, &stop) {
			return false, stop.Err
		}
		return last == nil, nil
	})
	switch {
	case err == nil:
	case last == nil || errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("%s: still not so after %s: %v", what, timeout, last)
	default:
		t.Fatalf("%s: %v", what, err)
	}
}

// Settled waits until count has not changed for quiet (a burst of writes or
// reconciles is over), failing t after timeout.
func Settled(t testing.TB, quiet, timeout time.Duration, what string, count func() int) {
	t.Helper()
	last, since := count(), time.Now()
	Eventually(t, timeout, what+" settle", func() error {
		if n := count(); n != last {
			last, since = n, time.Now()
		}
		if d := time.Since(since); d < quiet {
			return fmt.Errorf("last change %s ago", d.Round(time.Millisecond))
		}
		return nil
	})
}

// Stop ends Eventually's wait with Err.
type Stop struct{ Err error }

func (s *Stop) Error() string { return s.Err.Error() }

// Buffer collects what a process or a logger writes while a test reads it.
type Buffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Len is how many bytes were written so far: an offset for Since.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// Since is what was written after offset.
func (b *Buffer) Since(offset int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()[offset:]
}

// FreePort returns a TCP port free on every address, for a server a test
// starts. It is released before use, so it comes from below the kernel's
// ephemeral range: a port the kernel picked (":0") is one it also hands out
// as the local port of outgoing connections, and one of those took a
// port between FreePort and nginx's bind (nginx: "bind() to 0.0.0.0:43759
// failed (98: Address already in use)"). Within a process a port is handed
// out once; across processes a collision needs two equal random picks.
func FreePort() (int, error) {
	low := ephemeralLow()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 200 {
		p := freePortFloor + rand.IntN(low-freePortFloor)
		if handedOut[p] {
			continue
		}
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		handedOut[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free TCP port between %d and %d", freePortFloor, low)
}

// freePortFloor is the lowest port FreePort hands out: above the
// well-known and most registered services' ports.
const freePortFloor = 20000

var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// where it cannot be read, Linux's default).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low <= freePortFloor+1000 {
		return 32768
	}
	return low
}

// Port is FreePort for a test: it fails the test when there is none.
func Port(t testing.TB) int {
	t.Helper()
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Must fails the test at once on an error a test cannot go on without.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
