package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one control-plane binary running in its own process group, with
// its output in <dir>/<name>.log.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

// startProcess runs bin with args. Unless detached, the child is killed by the
// kernel when the process that started it dies (PR_SET_PDEATHSIG), so a
// crashed or killed test run leaves nothing behind.
func startProcess(dir, name, bin string, args []string, env []string, detached bool) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// running is false once the process has exited.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the process group and SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// killGroup stops a detached process group by pid, as `cluster-down` does.
func killGroup(pid int, grace time.Duration) {
	if syscall.Kill(-pid, syscall.SIGTERM) != nil {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// Exited lists the components of the cluster that are not running, stopped
// or crashed: a crashed one explains a test that waits in vain for a pod or
// a controller.
func (c *Cluster) Exited() []string {
	var out []string
	for _, p := range c.procs {
		if !p.running() {
			out = append(out, p.name+" (log: "+p.logPath+")")
		}
	}
	return out
}

// CPUSeconds is the CPU time (user and system) the running process of
// component has used so far, from /proc; 0 when it is not running.
func (c *Cluster) CPUSeconds(component string) float64 {
	p := c.proc(component)
	if p == nil || !p.running() {
		return 0
	}
	return processCPUSeconds(p.cmd.Process.Pid)
}

// processCPUSeconds is the CPU time (user and system) process pid has used
// so far, from /proc/<pid>/stat; 0 when it cannot be read.
func processCPUSeconds(pid int) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return 0
	}
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	// Linux reports them in clock ticks of USER_HZ, which is 100 on every
	// architecture Go supports there.
	return (utime + stime) / 100
}
