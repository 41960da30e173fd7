package reloader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A reload is not done when nginx gets SIGHUP: its master parses the
// configuration, starts new workers, waits about 100 ms, and only then tells
// the old workers to quit, which stops them accepting connections. Until
// then the old configuration answers new connections too, so the reloader
// reports a configuration loaded only once nginx has done all of that: the
// status then says what clients get.

// workerTitle marks nginx's worker processes (nginx sets its process titles,
// which /proc/<pid>/cmdline shows); a worker told to quit retitles itself
// with shuttingDownTitle before it closes its listeners.
const (
	workerTitle       = "worker process"
	shuttingDownTitle = "is shutting down"
)

// switchTimeout bounds the wait for nginx's master to switch to the new
// workers. It refuses a configuration on its own only when the environment
// changed since `nginx -t` (a port taken, a file gone); it then keeps the
// old workers, logs why, and the reload counts as refused.
const switchTimeout = 30 * time.Second

// unwatchedReloadWait is how long a reload is given where the reloader
// cannot read the process table: nginx parses the configuration, starts
// the new workers and, 100 ms later, stops the old ones accepting.
const unwatchedReloadWait = time.Second

// workerPoll is how often the reloader looks at nginx's processes while it
// waits for the switch.
const workerPoll = 10 * time.Millisecond

// process is one child of nginx's master.
type process struct {
	pid   int
	title string
}

// workers are the worker processes of the nginx master pid. It reads the
// whole process table: in a pod that is a handful of processes, and it
// runs once per poll during a reload only.
func workers(master int) ([]process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil || parentOf(stat) != master {
			continue // gone since the listing, or not nginx's
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		title := strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		if strings.Contains(title, workerTitle) {
			out = append(out, process{pid: pid, title: title})
		}
	}
	return out, nil
}

// parentOf reads the parent pid from a /proc/<pid>/stat line: the field
// after the state, which follows the command name in parentheses (the name
// may hold spaces and parentheses itself, so the last ')' ends it). -1 when
// the line cannot be read.
func parentOf(stat []byte) int {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return -1
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
}

// pids are the process ids of ps.
func pids(ps []process) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.pid)
	}
	return out
}

// switched tells whether nginx serves new connections with workers started
// after before only: at least one new worker runs, and every worker of
// before is gone or shutting down.
func switched(before []int, now []process) bool {
	started := false
	for _, p := range now {
		switch {
		case !slices.Contains(before, p.pid):
			started = started || !strings.Contains(p.title, shuttingDownTitle)
		case !strings.Contains(p.title, shuttingDownTitle):
			return false
		}
	}
	return started
}

// errNoSwitch: nginx accepted the configuration with -t but its master did
// not start workers on it.
var errNoSwitch = errors.New("nginx did not switch to new workers")

// awaitSwitch waits until the master pid serves with workers started after
// before (see switched), for at most timeout.
func awaitSwitch(master int, before []int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		now, err := workers(master)
		if err != nil {
			return err
		}
		if switched(before, now) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %s: the old configuration keeps serving (nginx's log says why)", errNoSwitch, timeout)
		}
		time.Sleep(workerPoll)
	}
}

// awaitWorkers waits, for at most timeout, until the master pid runs
// workers, and returns them. nginx installs its signal handlers only once
// it has read its configuration, just before it starts its first workers:
// a SIGHUP before then ends it (the signal's default action), so a reload
// pushed as a pod starts waits for them.
func awaitWorkers(master int, timeout time.Duration) ([]process, error) {
	deadline := time.Now().Add(timeout)
	for {
		now, err := workers(master)
		if err != nil || len(now) > 0 {
			return now, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("nginx started no workers within %s", timeout)
		}
		time.Sleep(workerPoll)
	}
}
