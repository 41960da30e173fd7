package prober

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// The prober reads a pod at once when it appears or is nudged, every second
// while it serves an earlier configuration (then every half minute), seldom
// once it serves the one asked for, and backs off from a pod that does not
// answer up to five minutes; only a changed answer wakes the instance.
func TestProberPacesItsReads(t *testing.T) {
	answers := fakeReloaders{"web-0": {Hash: "old", LastReloadSuccessful: true}}
	p := New(answers)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	web := types.NamespacedName{Namespace: "team-a", Name: "web"}
	pod := func(name, nudge string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Annotations: map[string]string{layout.ConfigHashAnnotation: nudge}},
			Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "team-a", Name: name} }
	next := func(name string) time.Duration {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.pods[key(name)].due.Sub(now)
	}
	read := func(name string) (woke bool) {
		p.read(context.Background(), key(name))
		select {
		case <-p.Events():
			return true
		default:
			return false
		}
	}

	// Behind: every quarter second, then every second, then every half
	// minute.
	p.Track(web, pod("web-0", "new"), Want{Hash: "new"})
	if d := next("web-0"); d != 0 {
		t.Errorf("a new pod is due in %s, want at once", d)
	}
	if !read("web-0") || next("web-0") != probeBehindQuickly {
		t.Errorf("behind: next read in %s, want %s, and the first answer wakes the instance", next("web-0"), probeBehindQuickly)
	}
	if read("web-0") {
		t.Error("the same answer again woke the instance")
	}
	now = now.Add(probeBehindQuickFor)
	if read("web-0"); next("web-0") != probeBehind {
		t.Errorf("behind for %s: next read in %s, want %s", probeBehindQuickFor, next("web-0"), probeBehind)
	}
	now = now.Add(probeBehindFor)
	if read("web-0"); next("web-0") != probeBehindSlowly {
		t.Errorf("behind for %s: next read in %s, want %s", probeBehindFor, next("web-0"), probeBehindSlowly)
	}

	// Loaded: seldom; a nudge makes it due at once.
	answers["web-0"] = reloader.Status{Hash: "new", LastReloadSuccessful: true}
	if !read("web-0") || next("web-0") != probeSettled {
		t.Errorf("loaded: next read in %s, want %s, and the new answer wakes the instance", next("web-0"), probeSettled)
	}
	if a := p.Track(web, pod("web-0", "newer"), Want{Hash: "newer"}); !a.Read || a.Status.Hash != "new" || next("web-0") != 0 {
		t.Errorf("nudged with a new configuration: answer %+v, next read in %s, want the last answer and a read at once", a, next("web-0"))
	}
	if read("web-0"); next("web-0") != probeBehindQuickly {
		t.Errorf("nudged with a new configuration, still serving the old: next read in %s, want %s", next("web-0"), probeBehindQuickly)
	}

	// A nudge that leaves the configuration's hash (a rotated certificate):
	// behind until the reloader has acted on it, loaded or refused.
	answers["web-0"] = reloader.Status{Hash: "newer", LastReloadSuccessful: true, Reloads: 3}
	read("web-0")
	rotated := pod("web-0", "newer")
	rotated.Annotations[layout.FilesHashAnnotation] = "second"
	p.Track(web, rotated, Want{Hash: "newer"})
	if read("web-0"); next("web-0") != probeBehind {
		t.Errorf("nudged with new files, not yet acted on: next read in %s, want %s", next("web-0"), probeBehind)
	}
	answers["web-0"] = reloader.Status{Hash: "newer", RejectedHash: "newer", Error: "key values mismatch", Reloads: 3, Failures: 1}
	if !read("web-0") || next("web-0") != probeBehind {
		t.Errorf("the reloader refused new files: next read in %s, want %s (another attempt may follow), and the refusal wakes the instance", next("web-0"), probeBehind)
	}
	// It was the files before the nudge: the nudged ones load a second later.
	answers["web-0"] = reloader.Status{Hash: "newer", LastReloadSuccessful: true, Reloads: 4, Failures: 1}
	if !read("web-0") {
		t.Error("the load of the nudged files did not wake the instance")
	}
	for i := range probeNudgeQuiet {
		if read("web-0"); (next("web-0") == probeSettled) != (i == probeNudgeQuiet-1) {
			t.Errorf("%d same answers after the nudge was acted on: next read in %s, want %s only after %d", i+1, next("web-0"), probeSettled, probeNudgeQuiet)
		}
	}

	// No answer: a delay that doubles, up to five minutes.
	p.Track(web, pod("web-1", "new"), Want{Hash: "new"})
	var delays []time.Duration
	for range 10 {
		read("web-1")
		delays = append(delays, next("web-1"))
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, probeRetryMax, probeRetryMax}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays after failed reads %v, want %v", delays, want)
		}
	}

	// A read that times out (a NetworkPolicy drops the port) starts from
	// half a minute.
	p.Track(web, pod("web-2", "new"), Want{Hash: "new"})
	p.reader = timingOut{}
	read("web-2")
	if next("web-2") != probeRetryTimedOut {
		t.Errorf("after a read that timed out: next in %s, want %s", next("web-2"), probeRetryTimedOut)
	}
	p.reader = answers

	// Pods that stopped running are forgotten.
	p.Keep(web, []corev1.Pod{*pod("web-0", "newer")})
	p.mu.Lock()
	_, kept := p.pods[key("web-1")]
	p.mu.Unlock()
	if kept {
		t.Error("a pod no longer running is still read")
	}
}

// Started, the prober reads a tracked pod at once, in the background, and
// wakes its instance with the answer.
func TestProberReadsInTheBackgroundAndWakesTheInstance(t *testing.T) {
	p := New(fakeReloaders{"web-0": {Hash: "new", LastReloadSuccessful: true}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	web := types.NamespacedName{Namespace: "team-a", Name: "web"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-0"}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
	if a := p.Track(web, pod, Want{Hash: "new"}); a.Read {
		t.Fatalf("answered before any read: %+v", a)
	}
	select {
	case e := <-p.Events():
		if e.Object.GetNamespace() != "team-a" || e.Object.GetName() != "web" {
			t.Errorf("woke %s/%s, want team-a/web", e.Object.GetNamespace(), e.Object.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event after the read")
	}
	if a := p.Track(web, pod, Want{Hash: "new"}); !a.Read || a.Status.Hash != "new" {
		t.Errorf("after the read: %+v, want configuration new", a)
	}
}

// A running pod the pod watch shows is read before any reconcile asks for
// it (Spot); the reconcile's first ask then finds the answer and reads
// nothing again; a pod not running, or spotted again at the same address,
// is not read; a deleted pod is dropped.
func TestProberSpotsPodsFromTheWatch(t *testing.T) {
	p := New(fakeReloaders{"web-0": {Hash: "new", LastReloadSuccessful: true}})
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	web := types.NamespacedName{Namespace: "team-a", Name: "web"}
	key := types.NamespacedName{Namespace: "team-a", Name: "web-0"}
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-0"}, Status: corev1.PodStatus{PodIP: "10.0.0.1",
		ContainerStatuses: []corev1.ContainerStatus{{Name: layout.NginxContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	due := func() (time.Duration, bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		pr, ok := p.pods[key]
		if !ok {
			return 0, false
		}
		return pr.due.Sub(now), true
	}

	starting := running.DeepCopy()
	starting.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	p.Spot(web, starting)
	if _, ok := due(); ok {
		t.Fatal("a pod whose nginx is not running was spotted")
	}
	p.Spot(web, running)
	if d, ok := due(); !ok || d != 0 {
		t.Fatalf("a running pod spotted: due in %s (known %v), want at once", d, ok)
	}
	p.read(context.Background(), key)
	<-p.Events()
	if d, _ := due(); d != probeBehind {
		t.Errorf("read before any ask: next read in %s, want %s (an answer settles nothing before the pod was asked for a configuration)", d, probeBehind)
	}
	if a := p.Track(web, running, Want{Hash: "new"}); !a.Read || a.Status.Hash != "new" {
		t.Errorf("the first ask after the pod was spotted and read: %+v, want its answer", a)
	}
	p.Spot(web, running)
	if d, _ := due(); d != probeBehind {
		t.Errorf("after the first ask, for what the pod serves, and the pod spotted again: next read in %s, want %s still (nothing new to read)", d, probeBehind)
	}
	// Asked first for a configuration its answer does not show (the pod
	// was nudged before it ran, and serves the files it started with):
	// read again at once.
	other := types.NamespacedName{Namespace: "team-a", Name: "web-1"}
	behind := running.DeepCopy()
	behind.Name = "web-1"
	p.Spot(web, behind)
	p.reader = fakeReloaders{"web-1": {Hash: "old", LastReloadSuccessful: true}}
	p.read(context.Background(), other)
	<-p.Events()
	p.Track(web, behind, Want{Hash: "new"})
	p.mu.Lock()
	behindDue := p.pods[other].due.Sub(now)
	p.mu.Unlock()
	if behindDue != 0 {
		t.Errorf("spotted and read on configuration old, then asked for new: next read in %s, want at once", behindDue)
	}
	moved := running.DeepCopy()
	moved.Status.PodIP = "10.0.0.2"
	if p.Spot(web, moved); func() time.Duration { d, _ := due(); return d }() != 0 {
		t.Error("a pod spotted at a new address is not read at once")
	}
	p.Drop(key)
	if _, ok := due(); ok {
		t.Error("a dropped pod is still read")
	}
}

// timingOut is a pod network that drops every packet.
type timingOut struct{}

func (timingOut) Read(context.Context, PodAddress) (reloader.Status, error) {
	return reloader.Status{}, &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
}

func (t timingOut) Push(ctx context.Context, pod PodAddress, _ Want) (reloader.Status, bool, error) {
	st, err := t.Read(ctx, pod)
	return st, false, err
}

// fakeReloaders answer for pods by name.
type fakeReloaders map[string]reloader.Status

func (f fakeReloaders) Read(_ context.Context, pod PodAddress) (reloader.Status, error) {
	st, ok := f[pod.Name]
	if !ok {
		return st, errors.New("connection refused")
	}
	return st, nil
}

// Push loads config into the pod's fake reloader.
func (f fakeReloaders) Push(_ context.Context, pod PodAddress, w Want) (reloader.Status, bool, error) {
	st, ok := f[pod.Name]
	if !ok {
		return st, false, errors.New("connection refused")
	}
	st.Hash, st.Reloads = string(w.Config), st.Reloads+1
	f[pod.Name] = st
	return st, true, nil
}

// pushCounter counts the pushes to fakeReloaders, and can refuse them as an
// older reloader does (it is then read).
type pushCounter struct {
	fakeReloaders
	pushes int
	refuse bool
}

func (c *pushCounter) Push(ctx context.Context, pod PodAddress, w Want) (reloader.Status, bool, error) {
	c.pushes++
	if c.refuse {
		st, err := c.Read(ctx, pod)
		return st, false, err
	}
	return c.fakeReloaders.Push(ctx, pod, w)
}

// A pod behind gets the configuration pushed, once: when it then shows it,
// the prober holds the text no longer; a pod that goes back (its volume
// brought an older configuration) gets it pushed again; a reloader that
// refuses pushes is read, and not pushed that configuration again.
func TestProberPushesToPodsBehindUntilTheyShowTheConfiguration(t *testing.T) {
	reloaders := &pushCounter{fakeReloaders: fakeReloaders{"web-0": {Hash: "old", LastReloadSuccessful: true}}}
	p := New(reloaders)
	web := types.NamespacedName{Namespace: "team-a", Name: "web"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-0"}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
	key := types.NamespacedName{Namespace: "team-a", Name: "web-0"}
	holds := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.pods[key].push != nil
	}
	want := Want{Hash: "new", Config: []byte("new"), Key: []byte("k")}
	// A pod not read yet is read first: nothing is held for it.
	p.Track(web, pod, want)
	if holds() {
		t.Error("the text is held for a pod not read yet")
	}
	p.read(context.Background(), key)
	p.Track(web, pod, want)
	p.read(context.Background(), key)
	if a := p.Track(web, pod, want); reloaders.pushes != 1 || a.Status.Hash != "new" || holds() {
		t.Fatalf("after the first read: %d pushes, answer %+v, holding the text: %v; want 1 push, new, not held", reloaders.pushes, a.Status, holds())
	}
	p.read(context.Background(), key)
	if reloaders.pushes != 1 {
		t.Errorf("a pod showing the configuration was pushed it again: %d pushes", reloaders.pushes)
	}
	reloaders.fakeReloaders["web-0"] = reloader.Status{Hash: "old", LastReloadSuccessful: true}
	p.read(context.Background(), key)
	p.Track(web, pod, want)
	p.read(context.Background(), key)
	if reloaders.pushes != 2 || reloaders.fakeReloaders["web-0"].Hash != "new" {
		t.Errorf("a pod gone back to old: %d pushes, serving %q; want 2, new", reloaders.pushes, reloaders.fakeReloaders["web-0"].Hash)
	}

	// A pod that stops answering: nothing is held for it.
	delete(reloaders.fakeReloaders, "web-0")
	p.read(context.Background(), key)
	p.Track(web, pod, Want{Hash: "newest", Config: []byte("newest"), Key: []byte("k")})
	if holds() {
		t.Error("the text is held for a pod that does not answer")
	}
	reloaders.fakeReloaders["web-0"] = reloader.Status{Hash: "new", LastReloadSuccessful: true}
	p.read(context.Background(), key)

	reloaders.refuse = true
	newer := Want{Hash: "newer", Config: []byte("newer"), Key: []byte("k")}
	p.Track(web, pod, newer)
	p.read(context.Background(), key)
	p.Track(web, pod, newer)
	p.read(context.Background(), key)
	if reloaders.pushes != 3 || holds() {
		t.Errorf("a reloader refusing pushes: %d pushes, holding the text: %v; want one more push, then reads", reloaders.pushes, holds())
	}
}
