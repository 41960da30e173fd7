package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// RestartOptions say how Restart takes a component down.
type RestartOptions struct {
	// Kill ends the component with SIGKILL, as a crash or a node loss
	// would; otherwise it gets SIGTERM and up to 10s to exit cleanly.
	Kill bool
	// Downtime is how long the component stays down before it starts again.
	Downtime time.Duration
}

// Restart stops one control-plane component of the cluster (Etcd,
// KubeAPIServer, KubeControllerManager, KubeScheduler or Kwok) and starts it
// again in place (see StartComponent), after opts.Downtime.
func (c *Cluster) Restart(ctx context.Context, component string, opts RestartOptions) error {
	if err := c.StopComponent(component, opts.Kill); err != nil {
		return err
	}
	if opts.Downtime > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(opts.Downtime):
		}
	}
	return c.StartComponent(ctx, component)
}

// StopComponent ends one control-plane component: with SIGKILL when kill,
// as a crash would, otherwise with SIGTERM and up to 10s to exit cleanly.
// StartComponent brings it back.
func (c *Cluster) StopComponent(component string, kill bool) error {
	p := c.proc(component)
	if p == nil {
		return fmt.Errorf("the cluster runs no %s", component)
	}
	if !kill {
		p.stop(10 * time.Second)
		return nil
	}
	if p.running() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.exited
	return nil
}

// StartComponent starts a component stopped by StopComponent again in
// place: the same binary, flags, environment, data directory, ports and
// certificates, its output appended to the same log, so clients keep their
// configuration. It returns once the component serves again; for etcd, once
// the apiserver is ready again too, since everything reaches etcd through it.
func (c *Cluster) StartComponent(ctx context.Context, component string) error {
	idx := -1
	for i, p := range c.procs {
		if p.name == component {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("the cluster runs no %s", component)
	}
	old := c.procs[idx]
	if old.running() {
		return fmt.Errorf("%s is running; stop it first", component)
	}
	// cmd.Env is os.Environ() plus the component's own variables; exec
	// keeps the last value of a repeated key, so passing it whole is exact.
	p, err := startProcess(c.Dir, old.name, old.cmd.Path, old.cmd.Args[1:], old.cmd.Env, c.Detached)
	if err != nil {
		return err
	}
	c.procs[idx] = p
	if c.Detached {
		if err := c.writePids(); err != nil {
			return err
		}
	}
	switch component {
	case Etcd:
		url := flagValue(old.cmd.Args, "--listen-client-urls")
		if err := waitHealthy(ctx, p, http.DefaultClient, url+"/health", 60*time.Second); err != nil {
			return err
		}
		if api := c.proc(KubeAPIServer); api != nil && api.running() {
			return c.waitAPIServerReady(ctx, api)
		}
	case KubeAPIServer:
		return c.waitAPIServerReady(ctx, p)
	case Kwok:
		// kwok exits when it cannot reach the apiserver at start; one that
		// died would leave every later pod unmanaged without a word.
		url := "http://" + flagValue(old.cmd.Args, "--server-address") + "/healthz"
		return waitHealthy(ctx, p, http.DefaultClient, url, 60*time.Second)
	}
	return nil
}

// waitAPIServerReady polls the apiserver's /readyz (which includes its
// etcd check) with the admin's credentials.
func (c *Cluster) waitAPIServerReady(ctx context.Context, p *process) error {
	tr, err := rest.TransportFor(c.Config)
	if err != nil {
		return err
	}
	return waitHealthy(ctx, p, &http.Client{Transport: tr, Timeout: 5 * time.Second}, c.Host+"/readyz", 90*time.Second)
}

// proc is the process of the component name, running or stopped.
func (c *Cluster) proc(name string) *process {
	for _, p := range c.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// writePids rewrites a detached cluster's pids file after a restart.
func (c *Cluster) writePids() error {
	var pids []string
	for _, p := range c.procs {
		pids = append(pids, strconv.Itoa(p.cmd.Process.Pid))
	}
	return os.WriteFile(filepath.Join(c.Dir, pidsFile), []byte(strings.Join(pids, "\n")+"\n"), 0o600)
}

// flagValue is the value of --name=value in args.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}
