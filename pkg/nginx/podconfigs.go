package nginx

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What an instance's pods report of the configuration they serve, as the
// prober (pkg/nginx/prober) last read it.

// podConfigs is what an instance's pods' reloaders report about the
// configuration hash.
type podConfigs struct {
	// read is false when the operator does not read the pods.
	read bool
	// loaded counts the pods whose nginx serves hash.
	loaded int32
	// behind are the pods that answered with another configuration and
	// have not refused hash (the kubelet has yet to update their volume),
	// each as "<pod> (<the hash it serves>)".
	behind []string
	// waiting are the pods that hold hash back until the kubelet brings
	// the files it names, each as "<pod> (<the hash it serves>; <files>)".
	waiting []string
	// rejected say, for each pod that refused hash by name, what it serves
	// instead and nginx's error.
	rejected []string
	// unreachable are the pods whose reloader did not answer.
	unreachable []string
	// pending are the pods not read yet.
	pending []string
	// keep: some pods are not read yet, and the configuration is the one
	// the status already describes (a restarted operator, a restarted
	// pod): the status keeps what it said of the pods until they are read,
	// rather than saying "not read yet" and then, most often, what it said
	// before.
	keep bool
}

// podConfigs is what the prober last read of the instance's running pods,
// which it is told to read (Track) against the configuration of in, and to
// push it to those behind; the pods no longer running are forgotten.
// describedHash is the configuration the status described before this
// reconcile, and sts the instance's StatefulSet.
func (r *Reconciler) podConfigs(nginx *v1beta1.NginxOperator, sts *appsv1.StatefulSet, pods []corev1.Pod, in Materials, describedHash string) podConfigs {
	if r.Prober == nil {
		return podConfigs{}
	}
	instance := types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}
	hash := in.ConfigHash
	want := prober.Want{Hash: hash, Config: in.Config, Key: in.PushKey, Revision: in.Revision}
	var running []corev1.Pod
	answers := map[string]prober.Answer{}
	replaced := map[string]bool{}
	for i := range pods {
		if prober.NginxRunning(&pods[i]) {
			running = append(running, pods[i])
			answers[pods[i].Name] = r.Prober.Track(instance, &pods[i], want)
			replaced[pods[i].Name] = earlierRevision(sts, &pods[i])
		}
	}
	r.Prober.Keep(instance, running)
	configs := classify(answers, hash, replaced)
	configs.keep = len(configs.pending) > 0 && hash == describedHash
	return configs
}

// earlierRevision tells whether pod runs a pod template earlier than
// sts's, which its rolling update replaces.
func earlierRevision(sts *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if sts == nil || sts.Status.UpdateRevision == "" {
		return false
	}
	revision, ok := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	return ok && revision != sts.Status.UpdateRevision
}

// classify sorts the pods' answers (by pod name) by what they say of the
// configuration hash. A pod of an earlier pod template (replaced) that
// refused it is behind rather than refusing: its template is what the
// configuration was not made for (an operator upgrade changes both), and
// the rollout replaces it.
func classify(answers map[string]prober.Answer, hash string, replaced map[string]bool) podConfigs {
	out := podConfigs{read: true}
	for _, name := range slices.Sorted(maps.Keys(answers)) {
		a := answers[name]
		st := a.Status
		switch {
		case !a.Read:
			out.pending = append(out.pending, name)
		case a.Err != nil:
			out.unreachable = append(out.unreachable, name)
		case st.Hash == hash:
			out.loaded++
			if !st.LastReloadSuccessful {
				// It refused a TLS or CA file since it loaded hash.
				out.rejected = append(out.rejected, rejection(name, st))
			}
		case !st.LastReloadSuccessful && st.RejectedHash == hash && replaced[name]:
			out.behind = append(out.behind, fmt.Sprintf("%s (%s, of an earlier pod template that the rollout replaces)", name, st.Hash))
		case !st.LastReloadSuccessful && st.RejectedHash == hash:
			out.rejected = append(out.rejected, rejection(name, st))
		case st.WaitingHash == hash:
			out.waiting = append(out.waiting, fmt.Sprintf("%s (%s; %s)", name, st.Hash, strings.Join(st.WaitingFor, ", ")))
		default:
			out.behind = append(out.behind, fmt.Sprintf("%s (%s)", name, st.Hash))
		}
	}
	return out
}
