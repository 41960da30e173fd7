package render

import (
	"math"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// maxWeightScale bounds the factor that turns backend weights into
// per-endpoint weights (see upstreamServers): beyond it, weights are
// rounded.
const maxWeightScale = 10000

// upstreamServers are the server lines of a proxy location's upstream
// (weightedServers).
func (r *renderer) upstreamServers(p *v1beta1.ProxyLocation) []conf.Directive {
	return r.weightedServers(backendsOf(p), backupsAllowed(p.LoadBalancingMethod) && p.SessionAffinity == nil)
}

// weightedServers are the server lines of an upstream of backends: each
// backend's endpoints (Service.Upstream), or its Service's own address
// where it asks for that (useClusterIP) or is not reached at its pods. A
// backend with no ready endpoint has no server, so its share goes to the
// others; with none at all there is no server (a location answers 503, a
// stream closes the connection). Across several weighted backends each
// endpoint carries its backend's weight divided among its endpoints, so a
// Service with more pods does not draw more than its weight. With backups,
// the Services' own addresses follow as backup servers (clusterBackups).
func (r *renderer) weightedServers(backends []backend, backups bool) []conf.Directive {
	addrs := make([][]string, len(backends))
	pods := make([]bool, len(backends))
	counts := make([]int64, 0, len(backends))
	for i, b := range backends {
		addrs[i], pods[i] = r.opts.service(b).Upstream(b.port, b.udp, b.clusterIP)
		if len(addrs[i]) > 0 {
			counts = append(counts, int64(len(addrs[i])))
		}
	}
	scale := weightScale(counts)
	var servers []conf.Directive
	for i, b := range backends {
		for _, addr := range addrs[i] {
			args := []string{addr}
			if pods[i] {
				// Readiness is what takes a pod out. nginx's own marking
				// (one failure disables a server for 10 s, per worker) turns
				// the refused connections of a rollout into "no live
				// upstreams" 502s once every pod had one; a failed request
				// goes on to the next pod instead (proxy_next_upstream).
				args = append(args, "max_fails=0")
			}
			if b.weight > 0 {
				w := int64(math.Round(float64(int64(b.weight)*scale) / float64(len(addrs[i]))))
				args = append(args, "weight="+itoa(int32(max(w, 1))))
			}
			servers = append(servers, conf.D("server", args...))
		}
	}
	if len(servers) == 0 || !backups {
		return servers
	}
	return append(servers, r.clusterBackups(backends, addrs, pods)...)
}

// backupsAllowed tells whether an upstream balanced by method may have
// backup servers: nginx refuses them beside the hash, ip_hash and random
// methods (and cookie affinity hashes).
func backupsAllowed(method string) bool {
	switch method {
	case "", "round_robin", "least_conn":
		return true
	}
	return false
}

// clusterBackups are the Services' own addresses as backup servers of an
// upstream of pods: nginx tries them only after every pod it knows failed
// a request (or a connection), which happens while a backend rolls faster
// than a changed nginx.conf reaches the pods (a second or two), its old
// pods gone and its new ones not yet listed; kube-proxy knows the new ones
// by then.
//
// A backup is never marked failed (max_fails=0, as the pods): behind the
// Service's address kube-proxy picks a pod per connection, and while it
// too still lists a pod that is gone, one connection that meets it said
// nothing of the next. With nginx's default (max_fails=1, fail_timeout
// 10s) that one failure took the backup out for 10 s, and every request
// that found the listed pods gone in that time got 502 (3 GETs of 24,601
// in a rollout under load, TestProxyLosesNoRequestWhileTheBackendRolls).
func (r *renderer) clusterBackups(backends []backend, addrs [][]string, pods []bool) []conf.Directive {
	var out []conf.Directive
	for i, b := range backends {
		if pods[i] && len(addrs[i]) > 0 {
			out = append(out, conf.D("server", r.opts.service(b).Address+":"+itoa(b.port), "backup", "max_fails=0"))
		}
	}
	return out
}

// weightScale is the least common multiple of the backends' server counts
// (so that every per-endpoint weight is a whole number), or maxWeightScale
// when that is larger.
func weightScale(counts []int64) int64 {
	scale := int64(1)
	for _, n := range counts {
		scale = scale / gcd(scale, n) * n
		if scale > maxWeightScale {
			return maxWeightScale
		}
	}
	return scale
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
