package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// hostState is what a node could change on the machine, read from the host.
type hostState struct {
	iptables map[string]string // "iptables -t nat" and so on -> rules, counters dropped
	sysctls  map[string]string
	links    []string
	routes   []string
	paths    map[string]bool // whether each hard-coded path exists
}

// watchedSysctls are the host's values the kubelet, kube-proxy, containerd
// or the CNI plugins would set if the node ran in the host's namespaces.
var watchedSysctls = []string{
	"net/ipv4/ip_forward",
	"net/ipv4/conf/all/forwarding",
	"net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables",
	"net/bridge/bridge-nf-call-ip6tables",
	"net/ipv4/ip_unprivileged_port_start",
	"net/ipv4/ping_group_range",
	"net/netfilter/nf_conntrack_max",
	"net/netfilter/nf_conntrack_tcp_timeout_established",
	"net/netfilter/nf_conntrack_tcp_timeout_close_wait",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// hardcodedPaths are paths of the host that the kubelet, containerd and the
// CNI library use whatever their configuration says.
var hardcodedPaths = []string{
	"/var/log/containers", "/var/log/pods", "/var/lib/cni", "/var/lib/kubelet", "/var/lib/containerd",
	"/run/containerd", "/var/run/netns", "/etc/cni", "/opt/cni", "/run/xtables.lock",
}

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

func captureHostState(t *testing.T) hostState {
	t.Helper()
	s := hostState{iptables: map[string]string{}, sysctls: map[string]string{}, paths: map[string]bool{}}
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle", "raw"} {
			out, err := exec.Command(cmd+"-save", "-t", table).CombinedOutput()
			if err != nil {
				// A table the kernel does not have.
				out = []byte("unavailable: " + strings.TrimSpace(string(out)))
			}
			var rules []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "#") || l == "" {
					continue
				}
				rules = append(rules, counters.ReplaceAllString(l, ""))
			}
			s.iptables[cmd+" -t "+table] = strings.Join(rules, "\n")
		}
	}
	for _, k := range watchedSysctls {
		v, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			s.sysctls[k] = "absent"
			continue
		}
		s.sysctls[k] = strings.TrimSpace(string(v))
	}
	// Links and routes of nodes (named nok<token>) are left out: other runs
	// on the machine may have nodes up; leftovers checks this node's.
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 1 && !strings.Contains(l, "nok") {
			s.links = append(s.links, strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
		}
	}
	sort.Strings(s.links)
	out, err = exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.Contains(l, "nok") {
			s.routes = append(s.routes, l)
		}
	}
	sort.Strings(s.routes)
	for _, p := range hardcodedPaths {
		_, err := os.Lstat(p)
		s.paths[p] = err == nil
	}
	return s
}

// diff lists how after differs from s.
func (s hostState) diff(after hostState) []string {
	var d []string
	for k, v := range s.iptables {
		if after.iptables[k] != v {
			d = append(d, fmt.Sprintf("%s changed:\n--- before\n%s\n--- after\n%s", k, v, after.iptables[k]))
		}
	}
	for k, v := range s.sysctls {
		if after.sysctls[k] != v {
			d = append(d, fmt.Sprintf("sysctl %s: %s before, %s after", k, v, after.sysctls[k]))
		}
	}
	if a, b := strings.Join(s.links, " "), strings.Join(after.links, " "); a != b {
		d = append(d, fmt.Sprintf("links: %s before, %s after", a, b))
	}
	if a, b := strings.Join(s.routes, "\n"), strings.Join(after.routes, "\n"); a != b {
		d = append(d, fmt.Sprintf("routes changed:\n--- before\n%s\n--- after\n%s", a, b))
	}
	for p, existed := range s.paths {
		if after.paths[p] != existed {
			d = append(d, fmt.Sprintf("%s: existed %t before, %t after", p, existed, after.paths[p]))
		}
	}
	sort.Strings(d)
	return d
}

// leftovers lists what of one node (its token, its directories) is still
// on the host: processes, mounts, links, routes, cgroups, its run directory.
func leftovers(t *testing.T, token string, dirs ...string) []string {
	t.Helper()
	var found []string
	marks := append([]string{"nok" + token}, dirs...)
	mentions := func(s string) bool {
		for _, m := range marks {
			if strings.Contains(s, m) {
				return true
			}
		}
		return false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(data), "\x00", " ")
		if mentions(cmdline) {
			found = append(found, fmt.Sprintf("process %s: %s", filepath.Base(filepath.Dir(p)), cmdline))
		}
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mountinfo), "\n") {
		if mentions(l) {
			found = append(found, "mount: "+l)
		}
	}
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "nok"+token) {
			found = append(found, "link: "+l)
		}
	}
	out, err = exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "nok"+token) {
			found = append(found, "route: "+l)
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, "nok"+token)); err == nil {
			found = append(found, "cgroup: "+filepath.Join(m, "nok"+token))
		}
	}
	if _, err := os.Stat("/run/nok" + token); err == nil {
		found = append(found, "directory: /run/nok"+token)
	}
	return found
}
