package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The node's processes run in namespaces of their own (mount, network, PID
// and UTS), whose PID 1 is this package's init: a copy of the running test
// binary, started again with initEnv set, which the package's init function
// turns into runInit before main runs. It prepares the mount namespace, then
// starts the processes the parent asks for (JSON lines on its stdin) and reaps
// every child. When it exits (the parent closed its stdin, was killed, or
// killed it) the kernel kills every process of the PID namespace, containers
// and containerd shims included, and the mount namespace disappears with
// every mount of the node; the network namespace, with its links, iptables
// rules and sysctls, goes too unless the parent still holds it (Node.Halt
// keeps it until Node.Stop).
const initEnv = "NGINX_OPERATOR_NODE_INIT"

func init() {
	if cfg := os.Getenv(initEnv); cfg != "" {
		os.Exit(runInit(cfg))
	}
}

// initConfig is what the init prepares before it reports ready.
type initConfig struct {
	Hostname string
	// Sysctls maps files under /proc/sys to the values the node's
	// processes read there: host-wide kernel tunables the kubelet would
	// otherwise change for the whole machine are shadowed by bind mounts
	// of files under ShadowDir.
	Sysctls map[string]string
	// Overlays are host directories the node's processes see through an
	// overlay whose upper layer is under ShadowDir: they read the host's
	// files, and what they write stays private to the node (the kubelet's
	// /var/log/containers, the CNI result cache in /var/lib/cni).
	Overlays []string
	// Keep are directories under an overlaid one that stay the host's
	// (bind mounted back over the overlay): the node's run directory, whose
	// sockets host-side clients such as ctr use.
	Keep []string
	// Binds maps paths of the node to the host directories mounted there
	// (the NetworkPolicy enforcer's service account, where client-go's
	// in-cluster configuration reads it). Each path must resolve under one
	// of Overlays, so that the mount point made for it stays the node's.
	Binds     map[string]string
	ShadowDir string
}

// initRequest asks the init to start a process.
type initRequest struct {
	Name string
	Path string
	Args []string
	Env  []string
	Log  string // file receiving stdout and stderr, appended to
}

// initMessage is a line the init writes: the answer to the last request or
// to startup (Ready, Pid or Error), or the news that a process it started
// has exited (Exited, with Status).
type initMessage struct {
	Ready  bool   `json:",omitempty"`
	Pid    int    `json:",omitempty"`
	Error  string `json:",omitempty"`
	Exited string `json:",omitempty"`
	Status string `json:",omitempty"`
}

func runInit(raw string) int {
	var cfg initConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "node init:", err)
		return 2
	}
	var outMu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	send := func(m initMessage) {
		outMu.Lock()
		defer outMu.Unlock()
		_ = enc.Encode(m)
	}
	if err := setupInit(cfg); err != nil {
		send(initMessage{Error: err.Error()})
		return 1
	}

	var mu sync.Mutex
	names := map[int]string{}
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				// No child yet.
				time.Sleep(50 * time.Millisecond)
				continue
			}
			mu.Lock()
			name, ok := names[pid]
			delete(names, pid)
			mu.Unlock()
			if ok {
				send(initMessage{Exited: name, Status: waitStatus(ws)})
			}
		}
	}()
	send(initMessage{Ready: true})

	dec := json.NewDecoder(os.Stdin)
	for {
		var req initRequest
		if err := dec.Decode(&req); err != nil {
			// The parent is done with the node, or gone: returning ends
			// every process of the namespace.
			return 0
		}
		mu.Lock()
		pid, err := startChild(req)
		if err == nil {
			names[pid] = req.Name
		}
		mu.Unlock()
		if err != nil {
			send(initMessage{Error: err.Error()})
			continue
		}
		send(initMessage{Pid: pid})
	}
}

func waitStatus(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return "killed by " + ws.Signal().String()
	default:
		return fmt.Sprintf("wait status %#x", uint32(ws))
	}
}

func startChild(req initRequest) (int, error) {
	logf, err := os.OpenFile(req.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	p, err := os.StartProcess(req.Path, append([]string{req.Path}, req.Args...), &os.ProcAttr{
		Dir:   "/",
		Env:   req.Env,
		Files: []*os.File{null, logf, logf},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return 0, fmt.Errorf("starting %s: %w", req.Name, err)
	}
	pid := p.Pid
	_ = p.Release()
	return pid, nil
}

// setupInit runs in the new namespaces, before any other process of the node.
func setupInit(cfg initConfig) error {
	if err := syscall.Sethostname([]byte(cfg.Hostname)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	// Nothing mounted from here on propagates back to the host.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("making / a slave mount: %w", err)
	}
	// A procfs of the node's PID namespace: the node's processes find each
	// other (and containerd's shims their containers) by their own pids.
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	paths := make([]string, 0, len(cfg.Sysctls))
	for p := range cfg.Sysctls {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		shadow := filepath.Join(cfg.ShadowDir, "sysctl", strings.ReplaceAll(strings.TrimPrefix(p, "/proc/sys/"), "/", "."))
		if err := os.MkdirAll(filepath.Dir(shadow), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(shadow, []byte(cfg.Sysctls[p]+"\n"), 0o600); err != nil {
			return err
		}
		if err := syscall.Mount(shadow, p, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("shadowing %s: %w", p, err)
		}
	}
	// Handles on the host's directories to keep, taken before overlays hide them.
	keep := map[string]int{}
	for _, k := range cfg.Keep {
		fd, err := syscall.Open(k, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening %s: %w", k, err)
		}
		defer syscall.Close(fd)
		keep[k] = fd
	}
	for i, dir := range cfg.Overlays {
		base := filepath.Join(cfg.ShadowDir, "overlay", fmt.Sprint(i))
		upper, work := filepath.Join(base, "upper"), filepath.Join(base, "work")
		for _, d := range []string{upper, work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		opts := "lowerdir=" + dir + ",upperdir=" + upper + ",workdir=" + work
		if err := syscall.Mount("overlay", dir, "overlay", 0, opts); err != nil {
			return fmt.Errorf("overlay on %s: %w", dir, err)
		}
	}
	for k, fd := range keep {
		if err := syscall.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), k, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("keeping %s: %w", k, err)
		}
	}
	for target, source := range cfg.Binds {
		if err := bindUnderOverlay(source, target, cfg.Overlays); err != nil {
			return err
		}
	}
	// Routing between the pods' bridge and the link to the host; this
	// sysctl belongs to the node's network namespace.
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644); err != nil {
		return fmt.Errorf("enabling forwarding: %w", err)
	}
	return nil
}

// bindUnderOverlay mounts the host directory source at target, which must
// resolve (through symlinks such as /var/run -> /run) under one of overlays:
// the directories made for the mount point are then written to the
// overlay's private upper layer, never to the host.
func bindUnderOverlay(source, target string, overlays []string) error {
	resolved, err := resolveMissing(target)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", target, err)
	}
	under := false
	for _, o := range overlays {
		under = under || strings.HasPrefix(resolved, o+"/")
	}
	if !under {
		return fmt.Errorf("%s (%s) is under none of the overlays %v: its mount point would be made on the host", target, resolved, overlays)
	}
	if err := os.MkdirAll(resolved, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(source, resolved, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("mounting %s at %s: %w", source, target, err)
	}
	return nil
}

// resolveMissing resolves the symlinks of path's deepest existing ancestor
// and appends the rest, which does not exist yet.
func resolveMissing(path string) (string, error) {
	existing, rest := filepath.Clean(path), ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", err
	}
	return filepath.Join(real, rest), nil
}

// nsInit is the parent's handle on a running init.
type nsInit struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan initMessage
	exited  chan struct{} // closed when the init has exited
	release chan struct{} // lets the thread that started the init go

	reqMu sync.Mutex // one request at a time

	mu     sync.Mutex
	deaths map[string]string // process name -> how it exited
}

// startInit starts the init in new namespaces and waits until it is ready.
// logPath receives its stderr.
func startInit(cfg initConfig, logPath string) (*nsInit, error) {
	cmd, err := initCommand(cfg)
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	in := &nsInit{
		cmd: cmd, stdin: stdin,
		replies: make(chan initMessage, 1), exited: make(chan struct{}), release: make(chan struct{}),
		deaths: map[string]string{},
	}
	if err := in.forkOnLockedThread(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting the node's init: %w", err)
	}
	go in.readMessages(stdout, logf)
	if err := in.waitReady(logPath); err != nil {
		return nil, err
	}
	return in, nil
}

// initCommand runs this very binary as the init (initEnv carries cfg) in new
// mount, network, PID and UTS namespaces.
func initCommand(cfg initConfig) (*exec.Cmd, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), initEnv+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS,
		Setpgid:    true,
		// If the test process dies, so does the node.
		Pdeathsig: syscall.SIGKILL,
	}
	return cmd, nil
}

// forkOnLockedThread starts the init. The kernel sends Pdeathsig when the
// thread that forked the child exits, and the Go runtime may end threads:
// fork from a thread locked to a goroutine that stays until Stop.
func (in *nsInit) forkOnLockedThread() error {
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		err := in.cmd.Start()
		started <- err
		if err != nil {
			runtime.UnlockOSThread()
			return
		}
		<-in.release
		runtime.UnlockOSThread()
	}()
	return <-started
}

// readMessages reads the init's stdout until it ends: a process's exit is
// recorded in deaths, every other message is a reply. Then it reaps the
// init, closes its log and closes exited.
func (in *nsInit) readMessages(stdout io.Reader, logf *os.File) {
	dec := json.NewDecoder(stdout)
	for {
		var m initMessage
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Exited != "" {
			in.mu.Lock()
			in.deaths[m.Exited] = m.Status
			in.mu.Unlock()
			continue
		}
		in.replies <- m
	}
	_ = in.cmd.Wait()
	logf.Close()
	close(in.exited)
}

// waitReady waits for the init's first reply, which says whether it set the
// node up; a failed, exited or silent init is killed.
func (in *nsInit) waitReady(logPath string) error {
	select {
	case m := <-in.replies:
		if !m.Ready {
			in.kill()
			return fmt.Errorf("the node's init failed: %s (log: %s)", m.Error, logPath)
		}
	case <-in.exited:
		in.kill()
		return fmt.Errorf("the node's init exited (log: %s)", logPath)
	case <-time.After(30 * time.Second):
		in.kill()
		return fmt.Errorf("the node's init did not start (log: %s)", logPath)
	}
	return nil
}

// pid is the init's pid in the host's PID namespace.
func (in *nsInit) pid() int { return in.cmd.Process.Pid }

// start runs a process in the node; its output goes to logPath.
func (in *nsInit) start(name, path string, args, env []string, logPath string) error {
	in.reqMu.Lock()
	defer in.reqMu.Unlock()
	line, err := json.Marshal(initRequest{Name: name, Path: path, Args: args, Env: env, Log: logPath})
	if err != nil {
		return err
	}
	if _, err := in.stdin.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("starting %s: the node's init is gone: %w", name, err)
	}
	select {
	case m := <-in.replies:
		if m.Error != "" {
			return errors.New(m.Error)
		}
		return nil
	case <-in.exited:
		return fmt.Errorf("starting %s: the node's init exited", name)
	}
}

// death says how process name exited, or "" while it runs.
func (in *nsInit) death(name string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.deaths[name]
}

// kill ends the init, and with it every process of the node, and waits
// until the kernel has reaped them all.
func (in *nsInit) kill() {
	select {
	case <-in.exited:
	default:
		_ = in.stdin.Close()
		_ = in.cmd.Process.Signal(syscall.SIGKILL)
		<-in.exited
	}
	select {
	case <-in.release:
	default:
		close(in.release)
	}
}
