package framework

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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

// FreePort asks the kernel for a free loopback TCP port. The port is released
// before use, so a rare collision with another process is possible; callers
// that start servers retry on a bind failure.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
