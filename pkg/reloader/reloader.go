// Package reloader runs nginx and reloads it gracefully when its mounted
// configuration changes, in the manner of prometheus-operator's
// config-reloader. It depends on the standard library only: it runs in every
// nginx pod, so what it maps into memory is paid once per pod.
//
// It is nginx's parent: it starts nginx, checks every new configuration with
// `nginx -t` before it signals a reload (SIGHUP), so a configuration nginx
// refuses is reported with nginx's own message while the old one keeps
// serving, and it stops nginx with a graceful quit (SIGQUIT) whatever signal
// it is stopped with.
package reloader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/fsutil"
)

// MetricsPath is where the reloader serves Metrics over HTTP (on
// layout.ReloaderPort in an nginx pod); NginxMonitor scrape configurations
// point Prometheus at it.
const MetricsPath = "/metrics"

// Options configure a Reloader.
type Options struct {
	// Nginx is the nginx binary and Args its arguments (-c, -g).
	Nginx string
	Args  []string
	// Config is the mounted nginx.conf.
	Config string
	// Work, when set, is the working copy nginx runs from (Args name it
	// with -c): the reloader copies Config there, and takes pushed
	// configurations (ServeConfig) signed with the key in the file
	// PushKey. The hash it reports is the working copy's. Unset, nginx runs
	// from Config and nothing can be pushed.
	Work, PushKey string
	// Watch are the files and directories whose content nginx reads only
	// when it (re)loads, besides Files: the configuration's directory.
	Watch []string
	// Files is the directory of the files a configuration's manifest
	// names (files.go): a configuration is loaded only once every file of
	// its manifest is there with its digest, and a change of those files
	// reloads nginx. Other files there are none of nginx's concern.
	Files string
	// Interval between two looks at Watch.
	Interval time.Duration
	// Logf reports what the reloader does.
	Logf func(format string, args ...any)
}

// Reloader runs nginx; its state is what Metrics and Status report.
type Reloader struct {
	opts Options

	mu          sync.Mutex
	reloads     int
	failures    int
	pushCount   int
	lastOK      bool
	lastSuccess time.Time
	loadedHash  string
	lastError   string
	// rejectedHash is the configuration nginx last refused, until one loads.
	rejectedHash string
	// waitingHash is the configuration held back until the files of its
	// manifest are in Options.Files, waitingFor those it waits for.
	waitingHash string
	waitingFor  []string
	// durations counts the successful reloads by how long they took.
	durations histogram

	// pushes hands ServeConfig's configurations to Run; pushed are the
	// hashes of the last pushHistory of them, oldest first, and
	// volumeHash the mounted configuration's last seen (Run's alone).
	pushes     chan push
	pushed     []string
	volumeHash string
	// revision is the highest revision taken, from a push or the volume
	// (Run's alone; see RevisionFile).
	revision uint64
	// reading admits one pushed body at a time (ServeConfig).
	reading chan struct{}

	// Requests are the request metrics (requests.go), served with the
	// reloader's own.
	Requests *Requests
}

// New returns a Reloader for opts.
func New(opts Options) *Reloader {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Reloader{opts: opts, lastOK: true, pushes: make(chan push), reading: make(chan struct{}, 1),
		durations: histogram{bounds: reloadBuckets}, Requests: NewRequests()}
}

// ConfigHash identifies a rendered nginx.conf. The operator names its
// configurations and writes status.configHash with it too, so the hash a pod
// reports compares with the instance's. (It is the first 16 hex digits of
// the SHA-256 of the text as a JSON string, the operator's hash before there
// was a reloader: existing instances keep their hashes.)
func ConfigHash(config []byte) string {
	b, _ := json.Marshal(string(config)) // a string always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// Run starts nginx and watches the configuration until ctx ends, then quits
// nginx gracefully and waits for it. It returns nginx's exit error, or nil
// when nginx exited after the graceful quit.
func (r *Reloader) Run(ctx context.Context) error {
	if r.opts.Work != "" {
		r.followVolume()
	}
	digest, waiting, err := r.digest()
	if err != nil {
		return err
	}
	if len(waiting) > 0 {
		// nginx starts all the same: a pod's volumes are written before
		// it starts, so a file is missing only in the moment an instance
		// stops naming it; should nginx exit for it, the container's
		// restart comes with the volumes as the kubelet refreshes them.
		r.opts.Logf("starting nginx without the files its configuration names, or with other content: %s", strings.Join(waitingNames(waiting), ", "))
	}
	r.loaded(r.diskHash())
	cmd := exec.Command(r.opts.Nginx, r.opts.Args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting nginx: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	tick := time.NewTicker(r.opts.Interval)
	defer tick.Stop()
	// The watch ends with Run, also when nginx exits.
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	watched := r.opts.Watch
	if r.opts.Files != "" {
		watched = append(slices.Clone(watched), r.opts.Files)
	}
	changed := changes(watchCtx, watched, r.opts.Logf)
	for {
		var pushes []push
		select {
		case err := <-exited:
			return fmt.Errorf("nginx exited: %w", errOrExit(err))
		case <-ctx.Done():
			// SIGQUIT: nginx closes its listeners and lets the workers
			// finish the requests in flight (SIGTERM would cut them).
			_ = cmd.Process.Signal(syscall.SIGQUIT)
			return quitError(<-exited)
		case p := <-r.pushes:
			pushes = r.takePushes(p)
		case <-changed:
			// A writer's burst of changes (the kubelet's rename, then a
			// new key's link) is read as one.
			time.Sleep(changeSettle)
			select {
			case <-changed:
			default:
			}
		case <-tick.C:
		}
		if r.opts.Work != "" && pushes == nil {
			r.followVolume()
		}
		digest = r.reloadIfChanged(cmd.Process, digest)
		r.answer(pushes)
	}
}

// reloadIfChanged reloads nginx when what it reads differs from digest,
// and returns the digest nginx was last asked to load. A configuration
// whose files are not all there with their manifest's digests is not
// loaded: it waits for them (the kubelet brings them), and nginx keeps
// serving what it loaded, its files included.
func (r *Reloader) reloadIfChanged(nginx *os.Process, digest string) string {
	now, waiting, err := r.digest()
	if err != nil {
		r.opts.Logf("reading the configuration: %v", err)
		return digest
	}
	if r.wait(waiting) {
		return digest
	}
	if now != digest {
		r.reload(nginx)
	}
	return now
}

// wait records that the configuration on disk waits for the files
// waiting (none: it waits for nothing), and reports whether it does.
func (r *Reloader) wait(waiting []string) bool {
	hash := ""
	if len(waiting) > 0 {
		hash = r.diskHash()
	}
	r.mu.Lock()
	changed := hash != r.waitingHash || !slices.Equal(waiting, r.waitingFor)
	r.waitingHash, r.waitingFor = hash, waiting
	loaded := r.loadedHash
	r.mu.Unlock()
	switch {
	case !changed || len(waiting) == 0:
	case hash == loaded:
		r.opts.Logf("the files of configuration %s in %s are not those it names (%s): nginx keeps what it loaded until they, or the configuration, change",
			hash, r.opts.Files, strings.Join(waitingNames(waiting), ", "))
	default:
		r.opts.Logf("configuration %s waits for its files in %s: %s", hash, r.opts.Files, strings.Join(waitingNames(waiting), ", "))
	}
	return len(waiting) > 0
}

// changeSettle is how long a change waits for the rest of its burst.
const changeSettle = 20 * time.Millisecond

func errOrExit(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// quitError is nil when nginx ended well after SIGQUIT.
func quitError(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() != 0 {
		return err
	}
	if err != nil && !errors.As(err, &exit) {
		return err
	}
	return nil
}

// reload checks the new configuration with nginx -t and, when nginx accepts
// it, makes nginx load it: new workers take new connections while the old
// ones finish theirs. It returns once the new workers take every new
// connection (see awaitSwitch), so the status never runs ahead of nginx.
func (r *Reloader) reload(nginx *os.Process) {
	// The hash is read first: should the file change again meanwhile, the
	// status names the older configuration until the next reload loads the
	// newer one, never one nginx has not loaded.
	hash := r.diskHash()
	began := time.Now()
	out, err := exec.Command(r.opts.Nginx, append(append([]string{}, r.opts.Args...), "-t")...).CombinedOutput()
	if err != nil {
		msg := testError(out, err)
		r.refused(hash, msg)
		r.opts.Logf("nginx refused the new configuration; the old one keeps serving: %s", msg)
		return
	}
	before, procErr := workers(nginx.Pid)
	if procErr == nil && len(before) == 0 {
		before, err = awaitWorkers(nginx.Pid, switchTimeout)
	}
	if err == nil {
		err = nginx.Signal(syscall.SIGHUP)
	}
	switch {
	case err != nil:
	case procErr != nil:
		// No process table to read (a chroot without /proc): nginx gets
		// the time a reload takes instead of being watched.
		r.opts.Logf("cannot watch nginx's workers (%v): taking the reload as done after %s", procErr, unwatchedReloadWait)
		time.Sleep(unwatchedReloadWait)
	default:
		err = awaitSwitch(nginx.Pid, pids(before), switchTimeout)
	}
	if err != nil {
		r.refused(hash, err.Error())
		r.opts.Logf("reloading nginx: %v", err)
		return
	}
	// Watching nginx's processes during the reload allocated (the process
	// table, read every 10 ms); give the memory back rather than keep the
	// heap at its peak between reloads, as the reloader runs in every pod.
	debug.FreeOSMemory()
	took := time.Since(began)
	r.loaded(hash)
	r.mu.Lock()
	r.reloads++
	r.durations.observe(took.Seconds())
	r.mu.Unlock()
	r.opts.Logf("reloaded nginx with configuration %s in %s", r.Status().Hash, took.Round(time.Millisecond))
}

// loaded records a successful load of the configuration hash ("" when it
// could not be read).
func (r *Reloader) loaded(hash string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if hash != "" {
		r.loadedHash = hash
	}
	r.lastOK, r.lastError, r.lastSuccess, r.rejectedHash = true, "", time.Now(), ""
}

// refused records that nginx did not load the configuration hash.
func (r *Reloader) refused(hash, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures, r.lastOK, r.lastError, r.rejectedHash = r.failures+1, false, msg, hash
}

// diskHash is the ConfigHash of the configuration nginx runs from, "" when
// it cannot be read.
func (r *Reloader) diskHash() string {
	config, err := os.ReadFile(r.served())
	if err != nil {
		return ""
	}
	return ConfigHash(config)
}

// ErrorLine is the last line of nginx's log (or of nginx -t's output) that
// reports an error nginx cannot start or run with ([emerg], [alert] or
// [crit]), from its level on: the timestamp and pid before it say nothing a
// status needs. "" when there is none, as for a process the kernel killed.
func ErrorLine(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, level := range []string{"[emerg]", "[alert]", "[crit]"} {
			if at := strings.Index(lines[i], level); at >= 0 {
				return strings.TrimSpace(lines[i][at:])
			}
		}
	}
	return ""
}

// testError is what nginx -t said when it refused a configuration: its
// error line, or all it said, or how it failed to run.
func testError(out []byte, err error) string {
	if line := ErrorLine(string(out)); line != "" {
		return line
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return s
	}
	return err.Error()
}

// served is the nginx.conf nginx runs from.
func (r *Reloader) served() string {
	if r.opts.Work != "" {
		return r.opts.Work
	}
	return r.opts.Config
}

// digest sums the content of every file nginx reads when it loads: the
// nginx.conf it runs from, the files its manifest names and every watched
// file, following symlinks (the kubelet swaps a mounted volume's ..data
// link to update it atomically) and skipping the kubelet's own "..<name>"
// entries. With a working copy, the mounted nginx.conf, its revision and
// the push key are not what nginx reads. waiting are the files of the manifest that are
// missing or hold other content than it says.
func (r *Reloader) digest() (sum string, waiting []string, err error) {
	h := sha256.New()
	config, err := os.ReadFile(r.served())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(h, "%s missing\n", r.served())
	case err != nil:
		return "", nil, err
	default:
		fmt.Fprintf(h, "%s %d\n", r.served(), len(config))
		h.Write(config)
		if waiting, err = filesOf(config, r.opts.Files, h); err != nil {
			return "", nil, err
		}
	}
	var add func(path string) error
	add = func(path string) error {
		if r.opts.Work != "" && (path == r.opts.Config || path == r.opts.PushKey || path == r.revisionPath()) {
			return nil
		}
		info, err := os.Stat(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(h, "%s missing\n", path)
				return nil
			}
			return err
		}
		if !info.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d\n", path, len(b))
			h.Write(b)
			return nil
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "..") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if err := add(filepath.Join(path, n)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range r.opts.Watch {
		if p == r.served() {
			continue
		}
		if err := add(p); err != nil {
			return "", nil, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), waiting, nil
}

// Status is the reloader's state.
type Status struct {
	// Hash is the ConfigHash of the configuration nginx last loaded.
	Hash string `json:"hash"`
	// LastReloadSuccessful is false after nginx refused a configuration,
	// until one loads; Error is nginx's message then, and RejectedHash the
	// ConfigHash of the nginx.conf it refused (the TLS and CA files it reads
	// may be what it refused, with the same nginx.conf as Hash).
	LastReloadSuccessful bool   `json:"lastReloadSuccessful"`
	Error                string `json:"error,omitempty"`
	RejectedHash         string `json:"rejectedHash,omitempty"`
	Reloads              int    `json:"reloads"`
	Failures             int    `json:"failures"`
	// Pushes counts the configurations pushed to the reloader (taken
	// before the volume brought them).
	Pushes int `json:"pushes"`
	// WaitingHash is the ConfigHash of a configuration the reloader holds
	// back until the files directory has every file its manifest names
	// with the manifest's digest (the kubelet has yet to bring them), and
	// WaitingFor names those files (the first ten, then how many more).
	// Meanwhile nginx serves Hash. Waiting is no refusal.
	WaitingHash string   `json:"waitingHash,omitempty"`
	WaitingFor  []string `json:"waitingFor,omitempty"`
}

// Status returns the current state.
func (r *Reloader) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := Status{Hash: r.loadedHash, LastReloadSuccessful: r.lastOK, Error: r.lastError, RejectedHash: r.rejectedHash, Reloads: r.reloads, Failures: r.failures, Pushes: r.pushCount}
	if r.waitingHash != "" && r.waitingHash != r.loadedHash {
		st.WaitingHash, st.WaitingFor = r.waitingHash, slices.Clone(waitingNames(r.waitingFor))
	}
	return st
}

// Metrics is the Prometheus text exposition of the state, with the names
// prometheus-operator's config-reloader uses.
func (r *Reloader) Metrics() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	metric := func(name, help, typ string, value any, labels string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s%s %v\n", name, help, name, typ, name, labels, value)
	}
	ok := 0
	if r.lastOK {
		ok = 1
	}
	metric("reloader_reloads_total", "Reloads of nginx with a new configuration.", "counter", r.reloads, "")
	metric("reloader_pushes_total", "Configurations the operator pushed, before the volume brought them.", "counter", r.pushCount, "")
	metric("reloader_reloads_failed_total", "New configurations nginx refused; the previous one kept serving.", "counter", r.failures, "")
	metric("reloader_last_reload_successful", "1 if nginx runs the configuration on disk, 0 if it refused it.", "gauge", ok, "")
	metric("reloader_last_reload_success_timestamp_seconds", "When nginx last loaded a configuration.", "gauge", r.lastSuccess.Unix(), "")
	metric("reloader_config_info", "The configuration nginx runs, by the hash the operator reports.", "gauge", 1, fmt.Sprintf("{hash=%q}", r.loadedHash))
	metric("reloader_waiting_files", "Files the configuration on disk names that the files directory does not hold yet, with their digests; it is loaded once there are none.",
		"gauge", len(r.waitingFor), "")
	r.durations.write(&b, "reloader_reload_duration_seconds",
		"How long a reload took, from nginx -t until the new workers take every new connection.")
	r.Requests.write(&b)
	return b.Bytes()
}

// reloadBuckets are the upper bounds of reloader_reload_duration_seconds:
// a small configuration reloads in tens of milliseconds, one with
// thousands of locations in seconds.
var reloadBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// histogram is a Prometheus histogram (the reloader depends on the
// standard library only).
type histogram struct {
	bounds []float64 // upper bounds of the buckets but +Inf
	counts []uint64  // per bucket, not cumulative
	sum    float64
	count  uint64
}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(h.bounds))
	}
	if i := sort.SearchFloat64s(h.bounds, v); i < len(h.bounds) {
		h.counts[i]++
	}
	h.sum += v
	h.count++
}

// write writes h with its HELP and TYPE lines and no labels.
func (h *histogram) write(b *bytes.Buffer, name, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	h.samples(b, name, "")
}

// samples writes h's buckets, sum and count with labels (Prometheus' text
// format, without braces; "" for none).
func (h *histogram) samples(b *bytes.Buffer, name, labels string) {
	sep, braced := "", ""
	if labels != "" {
		sep, braced = ",", "{"+labels+"}"
	}
	var cumulative uint64
	for i, le := range h.bounds {
		if h.counts != nil {
			cumulative += h.counts[i]
		}
		fmt.Fprintf(b, "%s_bucket{%s%sle=\"%s\"} %d\n", name, labels, sep, strconv.FormatFloat(le, 'g', -1, 64), cumulative)
	}
	fmt.Fprintf(b, "%s_bucket{%s%sle=\"+Inf\"} %d\n%s_sum%s %s\n%s_count%s %d\n", name, labels, sep, h.count,
		name, braced, strconv.FormatFloat(h.sum, 'g', -1, 64), name, braced, h.count)
}

// Install copies the running executable to dst, executable by all, for an
// init container to put the reloader beside nginx in an image that lacks it.
func Install(dst string) error {
	self, err := os.Executable()
	if err != nil {
		// No /proc (a chroot): the path it was started by.
		self = os.Args[0]
	}
	f, err := os.Open(self)
	if err != nil {
		return err
	}
	defer f.Close()
	return fsutil.Write(dst, 0o755, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
}
