// Package prober reads what each nginx pod's reloader serves, and pushes
// a pod behind the configuration it should serve, off the reconcile
// workers: prober.go keeps the pods a reconcile asks about and reads or
// pushes to them in the background with bounded concurrency, schedule.go
// decides when a pod is read next (a pure function of its last read),
// reader.go reads and pushes over the pod network, and pods.go holds what
// the prober needs of a pod (the operator's nudge, whether nginx runs).
package prober

import (
	"context"
	"maps"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// The prober's pace. A pod is read at once when it appears, moves, is
// nudged with a new configuration or is asked for another one (a pod
// behind gets the configuration pushed instead of read, and the push's
// answer is its status after the reload); then every quarter second while
// it serves an earlier configuration hash, for five seconds (a pod the push
// did not reach gets it from its volume within one or two: the status then
// says so within a quarter second of it, where a second's pace put it up
// to a second later), then every second, for two minutes,
// then every half minute; every five minutes once
// it serves the one asked for or refused it; and, while it does not answer,
// after a delay that doubles up to five minutes, from two seconds for a pod
// that refuses the connection (its reloader is starting) and from half a
// minute for one that lets it time out (a NetworkPolicy drops the port:
// that will not change soon). Such a pod holds a read for the reader's
// connect timeout (NewHTTPReader: a second); 128 reads at a time
// go through 1,000 of them in under ten seconds, and a read waiting on a
// connection costs the operator nothing but a socket.
const (
	probeConcurrency    = 128
	probeBehindQuickly  = 250 * time.Millisecond
	probeBehindQuickFor = 5 * time.Second
	probeBehind         = time.Second
	probeBehindFor      = 2 * time.Minute
	probeBehindSlowly   = 30 * time.Second
	probeSettled        = 5 * time.Minute
	probeRetryFirst     = 2 * time.Second
	probeRetryTimedOut  = 30 * time.Second
	probeRetryMax       = 5 * time.Minute
	probeNudgeQuiet     = 3
	probeEventsBacklog  = 1024
)

// Prober reads what each nginx pod's reloader serves, off the reconcile
// workers: a reconcile tells it which pods should serve which configuration
// (Track) and gets the last answers back at once; the prober asks the pods
// in the background, with bounded concurrency and a backoff for a pod that
// does not answer, and sends the instance to Events when an answer changes,
// so that the instance is reconciled again. It runs as one of the manager's
// runnables (Start).
type Prober struct {
	reader PodConfigReader
	now    func() time.Time
	events chan event.GenericEvent
	wake   chan struct{}

	mu   sync.Mutex
	pods map[types.NamespacedName]*probe
}

// probe is what the prober knows of one pod.
type probe struct {
	instance types.NamespacedName
	pod      PodAddress
	// asked is what the last Track asked of the pod: its IP, the
	// configuration it should serve, and the nudge it got (see
	// SyncAnnotations); a change makes the pod due at once.
	asked struct {
		ip, want string
		nudge    map[string]string
	}
	wantSince time.Time
	// push is the configuration to push to the pod while its answer does
	// not show it (nil: none, or the pod shows it, or its reloader refused
	// pushes); pushRefused is the configuration hash a reloader refused a
	// push of (an older reloader, a key the pod does not hold yet), which
	// is not pushed again.
	push        *Want
	pushRefused string
	// After a nudge whose files (a rotated certificate, say) leave the
	// configuration's hash as it was, the pod is read as one behind
	// (awaitingNudge) until its reloader has made an attempt beyond the
	// attemptsBefore it had made, and then answered the same for
	// probeNudgeQuiet reads in a row (quietReads): an attempt may still be
	// on the files before the nudge (the reloader looks once a second, and
	// the kubelet writes each volume in turn), and the next one follows
	// within seconds.
	attemptsBefore, quietReads int
	awaitingNudge              bool
	// answered is true once a read completed; status or err is its outcome.
	answered bool
	status   reloader.Status
	err      error
	failures int
	due      time.Time
	reading  bool
}

// New reads pods with reader.
func New(reader PodConfigReader) *Prober {
	return &Prober{
		reader: reader, now: time.Now,
		events: make(chan event.GenericEvent, probeEventsBacklog),
		wake:   make(chan struct{}, 1),
		pods:   map[types.NamespacedName]*probe{},
	}
}

// Events delivers the instances whose pods answered something new.
func (p *Prober) Events() <-chan event.GenericEvent { return p.events }

// Answer is the prober's last read of one pod, as Track returns it.
type Answer struct {
	// Read is false until the pod answered or failed to once.
	Read   bool
	Status reloader.Status
	Err    error
}

// Want is the configuration a pod should serve: its hash and, to push it
// to the pod's reloader, its text, the instance's push key (without them
// the pod gets it from its volume alone) and its revision (the config
// Secret's reloader.RevisionFile; 0: none).
type Want struct {
	Hash        string
	Config, Key []byte
	Revision    uint64
}

// Track records that pod, a running nginx pod of instance, should serve the
// configuration want, and returns what the prober last read of it. Reads
// happen in the background; a pod new to the prober, or with a new IP,
// nudge or wanted configuration, is read at once, and a pod whose answer
// does not show want gets it pushed rather than read.
func (p *Prober) Track(instance types.NamespacedName, pod *corev1.Pod, w Want) Answer {
	want := w.Hash
	p.mu.Lock()
	defer p.mu.Unlock()
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	pr, ok := p.pods[key]
	if !ok {
		pr = &probe{instance: instance}
		p.pods[key] = pr
	}
	nudge := SyncAnnotations(pod)
	nudged := !maps.Equal(pr.asked.nudge, nudge)
	if pr.asked.want != want || nudged {
		pr.wantSince = p.now()
	}
	// A pod Spot found has been read, but not yet for any configuration:
	// its first want is a reason to read it again only if the answer does
	// not show that configuration.
	rewanted := pr.asked.want != want && (pr.asked.want != "" || !pr.answered || !shows(pr.status, want))
	if ok && pr.answered && pr.err == nil && nudged {
		pr.awaitingNudge, pr.attemptsBefore, pr.quietReads = true, attempts(pr.status), 0
	}
	moved := !ok || pr.asked.ip != pod.Status.PodIP
	pr.asked.ip, pr.asked.want, pr.asked.nudge = pod.Status.PodIP, want, nudge
	// The text is held only for a pod that answers and does not show it:
	// a pod not read yet starts from the volume, which holds the current
	// configuration, and one that does not answer would keep it held.
	pr.push = nil
	if w.Config != nil && pr.pushRefused != want && pr.answered && pr.err == nil && !holds(pr.status, want) {
		pr.push = &w
	}
	if moved || nudged || rewanted {
		p.readNow(pr, pod)
	}
	return Answer{Read: pr.answered, Status: pr.status, Err: pr.err}
}

// Spot has a running nginx pod read as soon as the pod watch shows it, new
// or at a new address, rather than when a reconcile first asks (Track):
// the answer is then usually in by the time the StatefulSet reports the
// pod ready, and one status write says both. Other pods, and pods it knows
// at that address, are left to Track.
func (p *Prober) Spot(instance types.NamespacedName, pod *corev1.Pod) {
	if !NginxRunning(pod) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	pr, ok := p.pods[key]
	switch {
	case !ok:
		pr = &probe{instance: instance}
		pr.asked.nudge = SyncAnnotations(pod)
		p.pods[key] = pr
	case pr.asked.ip == pod.Status.PodIP:
		return
	}
	pr.asked.ip = pod.Status.PodIP
	p.readNow(pr, pod)
}

// Drop forgets a pod that was deleted.
func (p *Prober) Drop(pod types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pods, pod)
}

// readNow makes pr, the probe of pod, due at once; p.mu is held.
func (p *Prober) readNow(pr *probe, pod *corev1.Pod) {
	pr.pod = PodAddress{Namespace: pod.Namespace, Name: pod.Name, IP: pod.Status.PodIP}
	pr.due, pr.failures = p.now(), 0
	p.poke()
}

// poke wakes the loop to look at the pods' due times again.
func (p *Prober) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Keep forgets the pods of instance that are not in running: deleted,
// stopped or replaced.
func (p *Prober) Keep(instance types.NamespacedName, running []corev1.Pod) {
	keep := map[string]bool{}
	for i := range running {
		keep[running[i].Name] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, pr := range p.pods {
		if pr.instance == instance && !keep[key.Name] {
			delete(p.pods, key)
		}
	}
}

// Forget drops every pod of instance, which is gone.
func (p *Prober) Forget(instance types.NamespacedName) { p.Keep(instance, nil) }

// Start reads the pods that are due until ctx ends.
func (p *Prober) Start(ctx context.Context) error {
	sem := make(chan struct{}, probeConcurrency)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := p.readDue(ctx, sem)
		timer.Reset(max(time.Until(next), 10*time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// readDue starts a read of every pod that is due, at most probeConcurrency
// at a time, and returns when the next pod is due.
func (p *Prober) readDue(ctx context.Context, sem chan struct{}) time.Time {
	p.mu.Lock()
	now := p.now()
	next := now.Add(probeSettled)
	var due []types.NamespacedName
	for key, pr := range p.pods {
		switch {
		case pr.reading:
		case !pr.due.After(now):
			pr.reading = true
			due = append(due, key)
		case pr.due.Before(next):
			next = pr.due
		}
	}
	p.mu.Unlock()
	for _, key := range due {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return next
		}
		go func() {
			defer func() { <-sem }()
			p.read(ctx, key)
		}()
	}
	return next
}

// read asks one pod, records its answer and schedules the next read; a
// changed answer sends the pod's instance to Events.
func (p *Prober) read(ctx context.Context, key types.NamespacedName) {
	p.mu.Lock()
	pr, ok := p.pods[key]
	if !ok {
		p.mu.Unlock()
		return
	}
	pod, asked := pr.pod, pr.asked
	push := pr.push
	p.mu.Unlock()

	var st reloader.Status
	var err error
	pushed := false
	if push != nil {
		began := p.now()
		st, pushed, err = p.reader.Push(ctx, pod, *push)
		if err != nil {
			// The pod now follows its volume, which the kubelet refreshes
			// within a minute or so: said, since a client sees the delay.
			log.FromContext(ctx).Info("pushing the configuration to a pod failed; it follows its volume until a read succeeds",
				"pod", key, "configuration", push.Hash, "after", p.now().Sub(began).Round(time.Millisecond), "error", err.Error())
		}
	} else {
		st, err = p.reader.Read(ctx, pod)
	}

	p.mu.Lock()
	if p.pods[key] != pr {
		p.mu.Unlock()
		return // forgotten meanwhile
	}
	// Asked something new during the read (the pod moved, was nudged or
	// should serve another configuration): the answer may be stale.
	// (A first want, for a pod Spot found, changes nothing a read sees.)
	stale := pr.asked.ip != asked.ip || pr.asked.want != asked.want && asked.want != "" || !maps.Equal(pr.asked.nudge, asked.nudge)
	changed := !pr.answered || (err == nil) != (pr.err == nil) || !reflect.DeepEqual(st, pr.status)
	pr.answered, pr.status, pr.err, pr.reading = true, st, err, false
	pr.settlePush(push, pushed, err)
	if err == nil && pr.awaitingNudge && attempts(st) > pr.attemptsBefore {
		if changed {
			pr.quietReads = 0
		} else if pr.quietReads++; pr.quietReads >= probeNudgeQuiet {
			pr.awaitingNudge = false
		}
	}
	pr.due, pr.failures = nextRead(lastRead{
		stale: stale, err: err, failures: pr.failures, spotted: pr.asked.want == "",
		settled: !pr.awaitingNudge && shows(st, pr.asked.want), behindFor: p.now().Sub(pr.wantSince),
		awaitingNudge: pr.awaitingNudge && shows(st, pr.asked.want),
	}, p.now())
	instance := pr.instance
	p.mu.Unlock()
	// The loop skipped this pod while it was being read: it must see the
	// pod's new due time.
	p.poke()
	if changed {
		obj := &v1beta1.NginxOperator{}
		obj.Namespace, obj.Name = instance.Namespace, instance.Name
		select {
		case p.events <- event.GenericEvent{Object: client.Object(obj)}:
		case <-ctx.Done():
		}
	}
}

// settlePush drops the configuration to push once the pod holds it (it
// shows it, or waits for its files), does not answer, or its reloader
// refused the push (it answered, but did not take it); the prober's lock
// is held.
func (pr *probe) settlePush(tried *Want, pushed bool, err error) {
	if pr.push == nil {
		return
	}
	if tried != nil && tried.Hash == pr.push.Hash && err == nil && !pushed {
		pr.pushRefused, pr.push = tried.Hash, nil
		return
	}
	if err != nil || holds(pr.status, pr.push.Hash) {
		pr.push = nil
	}
}

// shows tells whether a reloader's answer is about configuration want: it
// loaded it, or refused it.
func shows(st reloader.Status, want string) bool { return st.Hash == want || st.RejectedHash == want }

// holds tells whether a reloader has configuration want: it shows it, or
// holds it back until the kubelet brings the files it names (a pod
// waiting is read as one behind, not pushed again).
func holds(st reloader.Status, want string) bool { return shows(st, want) || st.WaitingHash == want }

// attempts are the reloads and refusals a reloader made since it started.
func attempts(st reloader.Status) int { return st.Reloads + st.Failures }
