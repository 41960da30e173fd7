package nginx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// observe is the one place an instance's status is computed from the
// reconcile's outcome and the live StatefulSet.
func TestObserveComputesConditionsFromTheOutcomeAndTheStatefulSet(t *testing.T) {
	sts := func(replicas, ready, updated int32, rolled bool) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}}
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: replicas, ReadyReplicas: ready, UpdatedReplicas: updated, CurrentRevision: "a", UpdateRevision: "b"}
		if rolled {
			s.Status.CurrentRevision = "b"
		}
		return s
	}
	type want struct {
		status metav1.ConditionStatus
		reason string
	}
	for _, tc := range []struct {
		name                                     string
		sts                                      *appsv1.StatefulSet
		err                                      error
		available, progressing, degraded, reconc want
	}{
		{"no StatefulSet yet", nil, nil,
			want{metav1.ConditionFalse, ReasonStatefulSetMissing}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"all replicas ready and rolled out", sts(2, 2, 2, true), nil,
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionFalse, ReasonRolloutComplete}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"a cached StatefulSet older than the one just applied", func() *appsv1.StatefulSet {
			s := sts(2, 2, 2, true)
			s.Generation = 4
			return s
		}(), nil,
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"rolling", sts(2, 2, 1, false), nil,
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"not ready", sts(3, 1, 3, true), nil,
			want{metav1.ConditionFalse, ReasonReplicasNotReady}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"scaled to zero", sts(0, 0, 0, true), nil,
			want{metav1.ConditionFalse, ReasonScaledToZero}, want{metav1.ConditionFalse, ReasonRolloutComplete}, want{metav1.ConditionFalse, ReasonAsExpected}, want{metav1.ConditionTrue, ReasonReconcileSucceeded}},
		{"an invalid spec keeps the old pods serving", sts(2, 2, 2, true), configErrorf("config.servers[0].locations[1]: path %q appears twice", "/a"),
			want{metav1.ConditionTrue, ReasonReplicasReady}, want{metav1.ConditionFalse, ReasonRolloutComplete}, want{metav1.ConditionTrue, ReasonInvalidConfig}, want{metav1.ConditionFalse, ReasonInvalidConfig}},
		{"a missing Secret", nil, k8sutil.MissingReference(ReasonSecretNotFound, "TLS Secret %q not found", "web-tls"),
			want{metav1.ConditionFalse, ReasonStatefulSetMissing}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionTrue, ReasonSecretNotFound}, want{metav1.ConditionFalse, ReasonSecretNotFound}},
		{"an API error", nil, errors.New("connection refused"),
			want{metav1.ConditionFalse, ReasonStatefulSetMissing}, want{metav1.ConditionTrue, ReasonRollingUpdate}, want{metav1.ConditionTrue, ReasonApplyFailed}, want{metav1.ConditionFalse, ReasonApplyFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 5}}
			n.Status.ConfigHash = "current"
			observe(n, tc.sts, nil, podConfigs{}, tc.err)
			if n.Status.ObservedGeneration != 5 || n.Status.Selector == "" {
				t.Errorf("observedGeneration %d selector %q", n.Status.ObservedGeneration, n.Status.Selector)
			}
			for typ, w := range map[string]want{v1beta1.ConditionAvailable: tc.available, v1beta1.ConditionProgressing: tc.progressing,
				v1beta1.ConditionDegraded: tc.degraded, v1beta1.ConditionReconciled: tc.reconc} {
				c := meta.FindStatusCondition(n.Status.Conditions, typ)
				if c == nil || c.Status != w.status || c.Reason != w.reason || c.ObservedGeneration != 5 {
					t.Errorf("%s = %+v, want %s/%s", typ, c, w.status, w.reason)
				}
			}
		})
	}
}

// A pod whose nginx cannot start degrades the instance with nginx's own
// error line; a ready nginx, a pod being deleted and a crash without an
// nginx error do not.
func TestDegradedQuotesNginxWhenAPodCannotStartOnTheConfiguration(t *testing.T) {
	const emerg = `nginx: [emerg] host not found in upstream "nope.team-a.svc.cluster.local:80" in /etc/nginx/conf/nginx.conf:31`
	crashed := func(name string, edit func(*corev1.ContainerStatus)) corev1.Pod {
		st := corev1.ContainerStatus{
			Name: layout.NginxContainerName, RestartCount: 3,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "2026/11/23 18:40:00 [notice] 1#1: using the \"epoll\" event method\n" + emerg + "\n"}},
		}
		if edit != nil {
			edit(&st)
		}
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status:     corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "exporter", Ready: true}, st}},
		}
	}
	ready := func(name string) corev1.Pod {
		return crashed(name, func(st *corev1.ContainerStatus) {
			st.Ready, st.State = true, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		})
	}
	const want = `nginx refuses the configuration in pod web-1: [emerg] host not found in upstream "nope.team-a.svc.cluster.local:80" in /etc/nginx/conf/nginx.conf:31`
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string // Degraded's message when ConfigRejected, "" for not degraded
	}{
		{"no pods", nil, ""},
		{"every pod ready", []corev1.Pod{ready("web-0"), ready("web-1")}, ""},
		{"a pod of the current configuration in CrashLoopBackOff", []corev1.Pod{ready("web-0"), crashed("web-1", nil)}, want},
		{"nginx exited and is not restarted yet", []corev1.Pod{crashed("web-1", func(st *corev1.ContainerStatus) {
			st.State, st.LastTerminationState = st.LastTerminationState, corev1.ContainerState{}
		})}, want},
		{"nginx runs again but is not ready yet", []corev1.Pod{crashed("web-1", func(st *corev1.ContainerStatus) {
			st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		})}, want},
		{"the crashed pod is ready now", []corev1.Pod{ready("web-1")}, ""},
		{"the crashed pod is being deleted", func() []corev1.Pod {
			p := crashed("web-1", nil)
			p.DeletionTimestamp = ptr.To(metav1.Now())
			return []corev1.Pod{p}
		}(), ""},
		{"killed without an nginx error", []corev1.Pod{crashed("web-1", func(st *corev1.ContainerStatus) {
			st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
		})}, ""},
		{"a clean exit", []corev1.Pod{crashed("web-1", func(st *corev1.ContainerStatus) {
			st.LastTerminationState.Terminated.ExitCode = 0
		})}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2}}
			n.Status.ConfigHash = "new"
			observe(n, nil, tc.pods, podConfigs{}, nil)
			c := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded)
			switch {
			case tc.want == "" && (c.Status != metav1.ConditionFalse || c.Reason != ReasonAsExpected):
				t.Errorf("Degraded = %s/%s %q, want False/%s", c.Status, c.Reason, c.Message, ReasonAsExpected)
			case tc.want != "" && (c.Status != metav1.ConditionTrue || c.Reason != ReasonConfigRejected || c.Message != tc.want):
				t.Errorf("Degraded = %s/%s %q, want True/%s %q", c.Status, c.Reason, c.Message, ReasonConfigRejected, tc.want)
			}
		})
	}

	// An error of the reconcile itself says more than the pods do.
	n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	n.Status.ConfigHash = "new"
	observe(n, nil, []corev1.Pod{crashed("web-1", nil)}, podConfigs{}, configErrorf("bad"))
	if c := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded); c.Reason != ReasonInvalidConfig {
		t.Errorf("Degraded reason with a reconcile error = %s, want %s", c.Reason, ReasonInvalidConfig)
	}
}

// What the pods' reloaders report decides Progressing (until every replica
// serves the current configuration), Degraded (a pod refused it, named with
// nginx's error) and status.loadedReplicas.
func TestObserveReportsWhatThePodsLoaded(t *testing.T) {
	rolledOut := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}}
	rolledOut.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2}
	for _, tc := range []struct {
		name                  string
		configs               podConfigs
		progressing, degraded string // reasons
		loaded                *int32
	}{
		{"not read", podConfigs{}, ReasonRolloutComplete, ReasonAsExpected, nil},
		{"both loaded", podConfigs{read: true, loaded: 2}, ReasonRolloutComplete, ReasonAsExpected, ptr.To[int32](2)},
		{"one still on the previous configuration", podConfigs{read: true, loaded: 1, behind: []string{"web-1 (old)"}}, ReasonReloading, ReasonAsExpected, ptr.To[int32](1)},
		{"one refused it", podConfigs{read: true, loaded: 1, rejected: []string{"web-1 (serving configuration old): [emerg] bad"}}, ReasonReloading, ReasonConfigRejected, ptr.To[int32](1)},
		{"one does not answer", podConfigs{read: true, loaded: 1, unreachable: []string{"web-1"}}, ReasonReloading, ReasonAsExpected, ptr.To[int32](1)},
		// A pod waiting for the files the configuration names refuses
		// nothing: it is on its way.
		{"one waits for its files", podConfigs{read: true, loaded: 1, waiting: []string{"web-1 (old; tls_new_tls.crt, tls_new_tls.key)"}}, ReasonReloading, ReasonAsExpected, ptr.To[int32](1)},
	} {
		n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}}
		n.Status.ConfigHash = "new"
		observe(n, rolledOut, nil, tc.configs, nil)
		prog := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionProgressing)
		deg := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded)
		if prog.Reason != tc.progressing || deg.Reason != tc.degraded || !equality.Semantic.DeepEqual(n.Status.LoadedReplicas, tc.loaded) {
			t.Errorf("%s: Progressing %s %q, Degraded %s %q, loadedReplicas %v; want %s, %s, %v",
				tc.name, prog.Reason, prog.Message, deg.Reason, deg.Message, ptr.Deref(n.Status.LoadedReplicas, -1), tc.progressing, tc.degraded, ptr.Deref(tc.loaded, -1))
		}
		if tc.configs.behind != nil && prog.Message != "1 of 2 replicas serve configuration new; still on an earlier one: pod web-1 (old)" {
			t.Errorf("%s: Progressing message %q", tc.name, prog.Message)
		}
		if tc.configs.waiting != nil && prog.Message != "1 of 2 replicas serve configuration new; serving an earlier one until the kubelet brings the files the new one names (it does within seconds): pod web-1 (old; tls_new_tls.crt, tls_new_tls.key)" {
			t.Errorf("%s: Progressing message %q", tc.name, prog.Message)
		}
		if tc.degraded == ReasonConfigRejected && deg.Message != "nginx refuses configuration new (or a certificate it reads) and keeps serving what it loaded before, in pod web-1 (serving configuration old): [emerg] bad" {
			t.Errorf("%s: Degraded message %q", tc.name, deg.Message)
		}
	}
}

// A restarted operator has read no pod yet: the status keeps what it said
// of them (loadedReplicas, Progressing) instead of writing "not read yet"
// and then, most often, what it said before.
func TestObserveKeepsWhatItSaidOfThePodsUntilTheyAreRead(t *testing.T) {
	rolledOut := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}}
	rolledOut.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2}
	n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}}
	n.Status.ConfigHash = "new"
	observe(n, rolledOut, nil, podConfigs{read: true, loaded: 1, unreachable: []string{"web-1"}}, nil)
	before := n.Status.DeepCopy()
	observe(n, rolledOut, nil, podConfigs{read: true, pending: []string{"web-0", "web-1"}, keep: true}, nil)
	if diff := cmp.Diff(before, &n.Status); diff != "" {
		t.Errorf("the status changed before the pods were read (-before +after):\n%s", diff)
	}
}

// fakeReloaders answer for pods by name.
type fakeReloaders map[string]reloader.Status

func (f fakeReloaders) Read(_ context.Context, pod prober.PodAddress) (reloader.Status, error) {
	st, ok := f[pod.Name]
	if !ok {
		return st, errors.New("connection refused")
	}
	return st, nil
}

// Push is refused, as by a reloader without a working copy: the pod is read.
func (f fakeReloaders) Push(ctx context.Context, pod prober.PodAddress, _ prober.Want) (reloader.Status, bool, error) {
	st, err := f.Read(ctx, pod)
	return st, false, err
}

// Each running pod is read, by the prober, not the reconcile: a pod not
// running nginx, being deleted or without an IP is not; the first reconcile
// finds the pods not read yet, the prober's reads send the instance to be
// reconciled again, and the next finds the answers sorted into loaded,
// behind, waiting for files, refused and unreachable.
func TestThePodsAreReadByTheProberAndSortedByWhatTheyServe(t *testing.T) {
	pod := func(name string, edit func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}, Status: corev1.PodStatus{PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: layout.NginxContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
		if edit != nil {
			edit(&p)
		}
		return p
	}
	pods := []corev1.Pod{
		pod("web-0", nil), pod("web-1", nil), pod("web-2", nil), pod("web-3", nil), pod("web-4", nil), pod("web-5", nil),
		pod("web-6", func(p *corev1.Pod) { p.Labels = map[string]string{appsv1.ControllerRevisionHashLabelKey: "rev-1"} }),
		pod("starting", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
		}),
		pod("leaving", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) }),
		pod("no-ip", func(p *corev1.Pod) { p.Status.PodIP = "" }),
	}
	answers := fakeReloaders{
		"web-0": {Hash: "new", LastReloadSuccessful: true},
		"web-1": {Hash: "old", LastReloadSuccessful: true},
		"web-2": {Hash: "old", LastReloadSuccessful: false, RejectedHash: "new", Error: "[emerg] unknown directive"},
		"web-3": {Hash: "new", LastReloadSuccessful: false, RejectedHash: "new", Error: "[emerg] cannot load certificate"},
		"web-5": {Hash: "old", LastReloadSuccessful: true, WaitingHash: "new", WaitingFor: []string{"tls_new_tls.crt"}},
		// An earlier pod template's reloader, which the rollout replaces.
		"web-6":    {Hash: "old", LastReloadSuccessful: false, RejectedHash: "new", Error: "[emerg] cannot load certificate"},
		"starting": {Hash: "new", LastReloadSuccessful: true},
		"leaving":  {Hash: "new", LastReloadSuccessful: true},
		"no-ip":    {Hash: "new", LastReloadSuccessful: true},
	}
	web := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}}
	r := &Reconciler{Prober: prober.New(answers)}
	sts := &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{CurrentRevision: "rev-1", UpdateRevision: "rev-2"}}
	first := r.podConfigs(web, sts, pods, Materials{ConfigHash: "new"}, "old")
	if diff := cmp.Diff(podConfigs{read: true, pending: []string{"web-0", "web-1", "web-2", "web-3", "web-4", "web-5", "web-6"}}, first, cmp.AllowUnexported(podConfigs{})); diff != "" {
		t.Errorf("before the prober read (-want +got):\n%s", diff)
	}
	// The status described this configuration before (a restarted
	// operator): it keeps what it said until the pods are read.
	if again := r.podConfigs(web, sts, pods, Materials{ConfigHash: "new"}, "new"); !again.keep {
		t.Errorf("pods not read yet, the configuration unchanged: %+v, want the status kept", again)
	}
	readAll(t, r.Prober, 7)
	got := r.podConfigs(web, sts, pods, Materials{ConfigHash: "new"}, "new")
	want := podConfigs{read: true, loaded: 2, behind: []string{"web-1 (old)", "web-6 (old, of an earlier pod template that the rollout replaces)"},
		rejected:    []string{"web-2 (serving configuration old): [emerg] unknown directive", "web-3 (serving configuration new): [emerg] cannot load certificate"},
		unreachable: []string{"web-4"}, waiting: []string{"web-5 (old; tls_new_tls.crt)"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(podConfigs{})); diff != "" {
		t.Errorf("after the prober read (-want +got):\n%s", diff)
	}
	if got := (&Reconciler{}).podConfigs(web, sts, pods, Materials{ConfigHash: "new"}, "new"); got.read {
		t.Errorf("without a prober: %+v, want nothing read", got)
	}
}

// readAll runs p's loop until it has read the want pods that are due,
// each read sending the instance to be reconciled again.
func readAll(t *testing.T, p *prober.Prober, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	for i := range want {
		select {
		case <-p.Events():
		case <-time.After(10 * time.Second):
			t.Fatalf("%d events after the reads, want %d", i, want)
		}
	}
}

// The status is built in one place from what the reconcile observed: the
// configuration hash and the upstreams come from the plan, the resolved
// model nginx.conf was rendered from; a failed plan leaves them as they
// were, and says why.
func TestSetStatusTakesTheHashAndUpstreamsFromThePlan(t *testing.T) {
	n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Generation: 3}}
	upstreams := []v1beta1.UpstreamStatus{{Service: "api", Port: 80, Endpoints: 2}}
	setStatus(n, observed{plan: &plan{inputs: Materials{ConfigHash: "abc"}, upstreams: upstreams}})
	if n.Status.ConfigHash != "abc" || !cmp.Equal(n.Status.Upstreams, upstreams) || n.Status.ObservedGeneration != 3 {
		t.Fatalf("after a plan: hash %q, upstreams %v, observed generation %d", n.Status.ConfigHash, n.Status.Upstreams, n.Status.ObservedGeneration)
	}
	setStatus(n, observed{err: configErrorf("spec.config: bad")})
	if n.Status.ConfigHash != "abc" || !cmp.Equal(n.Status.Upstreams, upstreams) {
		t.Errorf("a failed plan changed the hash to %q and the upstreams to %v", n.Status.ConfigHash, n.Status.Upstreams)
	}
	if c := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded); c == nil || c.Reason != ReasonInvalidConfig {
		t.Errorf("a failed plan: Degraded %+v, want InvalidConfig", c)
	}
}
