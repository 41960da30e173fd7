package nginx

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
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
// reconcile.
func (r *Reconciler) podConfigs(nginx *v1beta1.NginxOperator, pods []corev1.Pod, in Inputs, describedHash string) podConfigs {
	if r.Prober == nil {
		return podConfigs{}
	}
	instance := types.NamespacedName{Namespace: nginx.Namespace, Name: nginx.Name}
	hash := in.ConfigHash
	want := prober.Want{Hash: hash, Config: in.Config, Key: in.PushKey}
	var running []corev1.Pod
	answers := map[string]prober.Answer{}
	for i := range pods {
		if prober.NginxRunning(&pods[i]) {
			running = append(running, pods[i])
			answers[pods[i].Name] = r.Prober.Track(instance, &pods[i], want)
		}
	}
	r.Prober.Keep(instance, running)
	configs := classify(answers, hash)
	configs.keep = len(configs.pending) > 0 && hash == describedHash
	return configs
}

// classify sorts the pods' answers (by pod name) by what they say of the
// configuration hash.
func classify(answers map[string]prober.Answer, hash string) podConfigs {
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
		case !st.LastReloadSuccessful && st.RejectedHash == hash:
			out.rejected = append(out.rejected, rejection(name, st))
		default:
			out.behind = append(out.behind, fmt.Sprintf("%s (%s)", name, st.Hash))
		}
	}
	return out
}
