package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// Each node gets a /24 of subnetBase, free on the machine and leased for its
// lifetime: .1/30 is the host's end of the link to the node (the address the
// apiserver listens on), .2 the node's end (its InternalIP), .128/25 the pods'
// bridge (.129 the gateway). The lease is an abstract unix socket of the
// host's network namespace, so two runs on one machine never pick the same
// subnet, and a crashed run's lease ends with its process.
const (
	subnetBase  = "10.201"
	subnet6Base = "fd00:10:201:"
	leasePrefix = "@nginx-operator-node/"
)

// ipv6Enabled tells whether the machine's kernel offers IPv6 (it may be
// built without it, booted with ipv6.disable=1, or have it switched off).
func ipv6Enabled() bool {
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6")
	return err == nil && strings.TrimSpace(string(b)) == "0"
}

type network struct {
	index          int
	lease          net.Listener
	hostIf         string // the host's end of the link; the node's end is eth0
	hostIP, nodeIP string
	podCIDR        string // the pods' subnet, on the bridge
	gateway        string // the bridge's address
	// podCIDR6 and gateway6 are the pods' IPv6 subnet and the bridge's
	// IPv6 address where the machine has IPv6, empty elsewhere: pods are
	// dual-stack then, so a test can reach nginx on a pod's IPv6 address.
	podCIDR6, gateway6 string
	bridge             string
}

// leaseSubnet picks a subnet no route of the host covers and no other node
// holds.
func leaseSubnet(token string) (*network, error) {
	taken, err := hostPrefixes()
	if err != nil {
		return nil, err
	}
	start, err := rand.Int(rand.Reader, big.NewInt(256))
	if err != nil {
		return nil, err
	}
	for k := range 256 {
		i := (int(start.Int64()) + k) % 256
		_, subnet, _ := net.ParseCIDR(fmt.Sprintf("%s.%d.0/24", subnetBase, i))
		if overlapsAny(subnet, taken) {
			continue
		}
		l, err := net.Listen("unix", fmt.Sprintf("%s%s.%d", leasePrefix, subnetBase, i))
		if err != nil {
			continue
		}
		p := fmt.Sprintf("%s.%d.", subnetBase, i)
		nw := &network{
			index: i, lease: l, hostIf: "nok" + token,
			hostIP: p + "1", nodeIP: p + "2", podCIDR: p + "128/25", gateway: p + "129",
			bridge: "nok" + token + "b",
		}
		if ipv6Enabled() {
			// A unique local prefix per lease: the lease keeps it unique too.
			nw.podCIDR6, nw.gateway6 = fmt.Sprintf("%s%x::/64", subnet6Base, i), fmt.Sprintf("%s%x::1", subnet6Base, i)
		}
		return nw, nil
	}
	return nil, fmt.Errorf("no free /24 left in %s.0.0/16", subnetBase)
}

// hostPrefixes are the destinations of every IPv4 route of the host.
func hostPrefixes() ([]*net.IPNet, error) {
	out, err := exec.Command("ip", "-4", "-o", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("listing routes: %w", err)
	}
	var nets []*net.IPNet
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if f == "default" {
				break
			}
			if !strings.Contains(f, ".") {
				continue // a route type such as local or broadcast
			}
			if !strings.Contains(f, "/") {
				f += "/32"
			}
			if _, n, err := net.ParseCIDR(f); err == nil {
				nets = append(nets, n)
			}
			break
		}
	}
	return nets, nil
}

func overlapsAny(n *net.IPNet, others []*net.IPNet) bool {
	for _, o := range others {
		if o.Contains(n.IP) || n.Contains(o.IP) {
			return true
		}
	}
	return false
}

// randomToken names one node's resources: links, cgroups, the run directory.
func randomToken() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// setup links the node's network namespace (of the init with host pid pid)
// to the host.
func (nw *network) setup(pid int) error {
	nsenter := []string{"nsenter", fmt.Sprintf("--net=/proc/%d/ns/net", pid), "--"}
	steps := [][]string{
		{"ip", "link", "add", nw.hostIf, "type", "veth", "peer", "name", "eth0", "netns", fmt.Sprint(pid)},
		{"ip", "addr", "add", nw.hostIP + "/30", "dev", nw.hostIf},
		{"ip", "link", "set", nw.hostIf, "up"},
		append(nsenter, "ip", "link", "set", "lo", "up"),
		append(nsenter, "ip", "addr", "add", nw.nodeIP+"/30", "dev", "eth0"),
		append(nsenter, "ip", "link", "set", "eth0", "up"),
		append(nsenter, "ip", "route", "add", "default", "via", nw.hostIP),
		// The pods' bridge, made before the CNI plugin would make it, with
		// an address of its own: a bridge without one takes the lowest
		// address of its ports, so a pod's veth coming or going changes
		// the pods' gateway's MAC, and the pods' SYN-ACKs go to the old
		// one until their neighbour entry expires (seconds of blackholed
		// connections, which a client pinned by conntrack to a pod that
		// then stops never recovers from). The plugin adopts it.
		append(nsenter, "ip", "link", "add", nw.bridge, "address", nw.bridgeMAC(), "type", "bridge"),
		append(nsenter, "ip", "link", "set", nw.bridge, "up"),
		// The host reaches the pods (the apiserver calls webhooks and
		// proxies to them) through the node.
		{"ip", "route", "add", nw.podCIDR, "via", nw.nodeIP, "dev", nw.hostIf},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// RouteServicesFromHost routes the clusters' Service addresses
// (framework.ServiceCIDR) from the host through the node, where
// kube-proxy's rules translate them: a process on the host then reaches a
// ClusterIP with a plain dialer, as a client outside the cluster reaches a
// load balancer in front of it. Gateway API's conformance suite dials the
// Gateway addresses of its TCP, UDP and TLS tests so, with no way to give
// it a dialer (DialContext). One node of the machine at a time can have
// the route (every cluster uses the same Service range); it goes with the
// node's link when the node stops.
func (n *Node) RouteServicesFromHost() error {
	if n.net == nil {
		return errors.New("the node is not running")
	}
	route := []string{"ip", "route", "add", framework.ServiceCIDR, "via", n.net.nodeIP, "dev", n.net.hostIf}
	if out, err := exec.Command(route[0], route[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s (another node of this machine may have the route)", strings.Join(route, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// bridgeMAC is the bridge's address: locally administered (0a:58, as the
// CNI bridge plugin once derived it) followed by the gateway's IPv4
// address, so two nodes' bridges never share one.
func (nw *network) bridgeMAC() string {
	ip := net.ParseIP(nw.gateway).To4()
	return fmt.Sprintf("0a:58:%02x:%02x:%02x:%02x", ip[0], ip[1], ip[2], ip[3])
}

// teardown removes the host's end of the link (which takes the node's end,
// and the route through it, along) and ends the lease.
func (nw *network) teardown() error {
	var errs []error
	if _, err := net.InterfaceByName(nw.hostIf); err == nil {
		if out, err := exec.Command("ip", "link", "del", nw.hostIf).CombinedOutput(); err != nil {
			if _, still := net.InterfaceByName(nw.hostIf); still == nil {
				errs = append(errs, fmt.Errorf("deleting link %s: %w: %s", nw.hostIf, err, out))
			}
		}
	}
	if nw.lease != nil {
		_ = nw.lease.Close()
		nw.lease = nil
	}
	return errors.Join(errs...)
}

// inNetns runs f on an OS thread that has joined the network namespace ns
// (a handle on /proc/<pid>/ns/net), so that sockets f creates belong to it.
func inNetns(ns *os.File, f func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer own.Close()
		if err := setns(ns, syscall.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns: %w", err)
			return
		}
		f()
		// A thread that cannot go back stays locked: the runtime then ends
		// it with this goroutine rather than reuse it.
		if setns(own, syscall.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- nil
	}()
	return <-errc
}

// setnsTrap is the setns system call's number, which package syscall does
// not name (golang.org/x/sys/unix does, but is only an indirect dependency).
var setnsTrap = map[string]uintptr{"amd64": 308, "arm64": 268, "386": 346, "arm": 375, "ppc64le": 350, "s390x": 339, "riscv64": 268}

func setns(f *os.File, nstype int) error {
	trap, ok := setnsTrap[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("setns: unknown on %s", runtime.GOARCH)
	}
	if _, _, errno := syscall.Syscall(trap, f.Fd(), uintptr(nstype), 0); errno != 0 {
		return errno
	}
	return nil
}

// DialContext connects from inside the node's network namespace, as a
// process on the node would: Service ClusterIPs (through kube-proxy's rules)
// and pod IPs are reachable. addr must be an IP address and a port.
func (n *Node) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if net.ParseIP(host) == nil {
		return nil, fmt.Errorf("dialing %s from the node: only IP addresses resolve there", addr)
	}
	if n.netns == nil {
		return nil, errors.New("the node is not running")
	}
	var conn net.Conn
	var dialErr error
	err = inNetns(n.netns, func() {
		// A literal address and no fallback: the socket is created on
		// this goroutine, hence in the node's namespace.
		// The caller's deadline, such as an HTTP client's Timeout, bounds
		// the dial, as it would a real client's, which keeps resending an
		// unanswered SYN (after 1, 3, 7, 15 s); without one, 10 seconds.
		d := net.Dialer{FallbackDelay: -1}
		if _, ok := ctx.Deadline(); !ok {
			d.Timeout = 10 * time.Second
		}
		conn, dialErr = d.DialContext(ctx, network, addr)
	})
	if err != nil {
		return nil, err
	}
	return conn, dialErr
}

// HTTPClient is an HTTP client whose connections start on the node (see
// DialContext), such as curl run on the node.
func (n *Node) HTTPClient() *http.Client {
	return &http.Client{
		Timeout:   15 * time.Second,
		Transport: &http.Transport{DialContext: n.DialContext, DisableKeepAlives: true},
	}
}

// rejectUntranslatedServiceAddresses refuses a connection to a Service
// address that kube-proxy did not translate to an endpoint: one to a
// Service that kube-proxy has yet to program. Without it the first packet
// would leave the node as it is, and conntrack would keep the connection,
// untranslated, for two minutes (nf_conntrack_tcp_timeout_syn_sent): a
// later connection from the same source port to the same Service address
// (ports come round within seconds under a test's load) would match it,
// go out untranslated as well and time out, although kube-proxy had
// programmed the Service long before (kubernetes/kubernetes#48719). A
// refused packet leaves no conntrack entry, and the client learns at once.
// kube-proxy's nftables mode rejects such packets itself; its iptables
// mode, which the node runs, does not. The rules are in the filter table,
// which sees a packet after kube-proxy's translation (nat OUTPUT and
// PREROUTING): only an untranslated one still has a Service address.
func (n *Node) rejectUntranslatedServiceAddresses() error {
	type family struct{ cmd, cidr string }
	families := []family{{"iptables", framework.ServiceCIDR}}
	if n.net.podCIDR6 != "" {
		families = append(families, family{"ip6tables", framework.ServiceCIDR6})
	}
	const comment = "a Service address kube-proxy has not programmed"
	for _, f := range families {
		for _, chain := range []string{"OUTPUT", "FORWARD"} {
			match := []string{f.cmd, "-w", "-t", "filter", "-A", chain, "-d", f.cidr, "-m", "comment", "--comment", comment}
			// A TCP client gets a reset, others an ICMP port unreachable.
			for _, reject := range [][]string{{"-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"}, {"-j", "REJECT"}} {
				if err := n.inNode(append(slices.Clone(match), reject...)...); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
