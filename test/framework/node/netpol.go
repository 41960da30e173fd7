package node

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The node enforces NetworkPolicies with kube-network-policies
// (sigs.k8s.io/kube-network-policies), a process of the node like
// kube-proxy: netfilter hands it the first packet of every new connection
// to or from a pod (NFQUEUE), and it accepts or drops it by the policies
// it reads from the apiserver. It reads them with client-go's in-cluster
// configuration, as the DaemonSet it normally runs in would: the
// KUBERNETES_SERVICE_* variables, and a token and CA under
// /var/run/secrets/kubernetes.io/serviceaccount, which the node's init
// mounts there from the node's directory, privately (initConfig.Binds).
const (
	networkPoliciesName = "kube-network-policies"
	// networkPoliciesQueue is the netfilter queue the enforcer reads (its
	// default, named so the node's fallback rules use the same).
	networkPoliciesQueue = 100
	// networkPoliciesMetrics is where it serves its metrics: loopback of
	// the node, out of the pods' and the host's way.
	networkPoliciesMetrics = "127.0.0.1:9080"
	// serviceAccountPath is where client-go's in-cluster configuration
	// reads the token and CA.
	serviceAccountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// networkPoliciesTokenLifetime outlives the longest test run (the
	// benchmarks take hours): the token is minted once, at Start.
	networkPoliciesTokenLifetime = 48 * time.Hour
)

// Dataplanes of the enforcer (Node.NetworkPolicyDataplane).
const (
	// DataplaneNFTables: the enforcer's own nftables rules queue the
	// packets, as it does on any cluster.
	DataplaneNFTables = "nftables (kube-network-policies' own rules)"
	// DataplaneXtables: the kernel refused the enforcer's nftables rules
	// (a kernel built without CONFIG_NFT_QUEUE has no nftables "queue"
	// expression, and no module to load), so the node queues the same
	// packets with the xtables NFQUEUE target, which such kernels often
	// have; the enforcer's verdicts are unchanged.
	DataplaneXtables = "xtables NFQUEUE (the kernel refused kube-network-policies' nftables rules; see its log)"
)

// serviceAccountDir is the host directory the node sees at
// serviceAccountPath.
func (n *Node) serviceAccountDir() string {
	return filepath.Join(n.dir, networkPoliciesName, "serviceaccount")
}

// startNetworkPolicies runs the enforcer with a service account of its own
// and waits until it reads its queue, then makes sure packets reach it.
func (n *Node) startNetworkPolicies(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(n.cluster.Config)
	if err != nil {
		return err
	}
	if err := grantNetworkPolicies(ctx, cs); err != nil {
		return err
	}
	if err := n.writeServiceAccount(ctx, cs); err != nil {
		return err
	}
	apiserver, err := url.Parse(n.cluster.Host)
	if err != nil {
		return err
	}
	env := []string{"KUBERNETES_SERVICE_HOST=" + apiserver.Hostname(), "KUBERNETES_SERVICE_PORT=" + apiserver.Port()}
	if err := n.runWithEnv(networkPoliciesName, n.bins.networkPolicies, env,
		"--hostname-override="+n.opts.Name,
		fmt.Sprintf("--nfqueue-id=%d", networkPoliciesQueue),
		"--metrics-bind-address="+networkPoliciesMetrics,
		// v0.8.0 ignores --disable-nri: it tries the runtime's NRI socket,
		// which the node's containerd does not serve, logs that, and reads
		// pod IPs from the apiserver alone.
		"--v=1",
	); err != nil {
		return err
	}
	if err := n.waitQueueBound(ctx); err != nil {
		return err
	}
	return n.ensureQueueing()
}

// grantNetworkPolicies creates the enforcer's ServiceAccount, in
// kube-system as its DaemonSet's, and lets it read what its informers
// list and watch: pods, namespaces and NetworkPolicies (nodes only with
// the admin policy APIs, which the node leaves off).
func grantNetworkPolicies(ctx context.Context, cs kubernetes.Interface) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: networkPoliciesName, Namespace: metav1.NamespaceSystem}}
	if _, err := cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return grant(ctx, cs, networkPoliciesName, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"list", "watch"}},
	)
}

// writeServiceAccount mints a token for the enforcer's ServiceAccount with
// the TokenRequest API and writes it, with the cluster's CA, where the
// node's init mounts them for the enforcer (serviceAccountPath).
func (n *Node) writeServiceAccount(ctx context.Context, cs kubernetes.Interface) error {
	tr, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, networkPoliciesName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(networkPoliciesTokenLifetime.Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token for %s: %w", networkPoliciesName, err)
	}
	ca, err := os.ReadFile(n.cluster.CACertFile)
	if err != nil {
		return err
	}
	dir := n.serviceAccountDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(tr.Status.Token), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "namespace"), []byte(metav1.NamespaceSystem), 0o644)
}

// waitQueueBound waits until the enforcer reads its queue, which it does
// once its informers have synced and it has written its rules: from then
// on it gives every queued packet a verdict.
func (n *Node) waitQueueBound(ctx context.Context) error {
	queues := fmt.Sprintf("/proc/%d/net/netfilter/nfnetlink_queue", n.init.pid())
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := n.failed(); err != nil {
			return false, err
		}
		return queueBound(queues, networkPoliciesQueue), nil
	})
	if err != nil {
		return fmt.Errorf("kube-network-policies did not bind netfilter queue %d: %w (log: %s)", networkPoliciesQueue, err, n.logPath(networkPoliciesName))
	}
	return nil
}

// queueBound tells whether a process listens on queue in path, the
// kernel's list of a network namespace's queues (one line per queue, its
// number first).
func queueBound(path string, queue int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 0 && fields[0] == fmt.Sprint(queue) {
			return true
		}
	}
	return false
}

// ensureQueueing checks that the enforcer's nftables table is in place (the
// kernel takes its rules in one batch, or none of them) and, if the kernel
// refused it, sends the same packets to the enforcer's queue with xtables
// rules instead (DataplaneXtables).
func (n *Node) ensureQueueing() error {
	var found bool
	var queryErr error
	if err := inNetns(n.netns, func() { found, queryErr = nftTableExists(nfprotoInet, networkPoliciesName) }); err != nil {
		return err
	}
	if queryErr != nil {
		return fmt.Errorf("looking for kube-network-policies' nftables table: %w", queryErr)
	}
	if found {
		n.NetworkPolicyDataplane = DataplaneNFTables
		return nil
	}
	if err := n.addQueueRules(); err != nil {
		return fmt.Errorf("the kernel refused kube-network-policies' nftables rules (log: %s), and queueing with xtables failed: %w",
			n.logPath(networkPoliciesName), err)
	}
	n.NetworkPolicyDataplane = DataplaneXtables
	return nil
}

// queueChain is the node's chain, in the mangle table's POSTROUTING (before
// kube-proxy's source NAT, as the enforcer's own chain), that queues what
// the enforcer's nftables rules would.
const queueChain = "NOK-NETWORK-POLICIES"

// addQueueRules sends the enforcer the packets its own rules would: the
// first packet of each connection to or from a pod, except the node's own
// root processes' (the kubelet's probes) and DNS, which the enforcer
// accepts without a look; and, for IPv6, neighbour discovery.
func (n *Node) addQueueRules() error {
	type family struct{ cmd, podCIDR string }
	families := []family{{"iptables", n.net.podCIDR}}
	if n.net.podCIDR6 != "" {
		families = append(families, family{"ip6tables", n.net.podCIDR6})
	}
	queue := []string{"-j", "NFQUEUE", "--queue-num", fmt.Sprint(networkPoliciesQueue)}
	for _, f := range families {
		rules := [][]string{
			{"-N", queueChain},
			{"-A", queueChain, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"},
			{"-A", queueChain, "-m", "owner", "--uid-owner", "0", "-j", "RETURN"},
			{"-A", queueChain, "-p", "udp", "--dport", "53", "-j", "RETURN"},
		}
		if f.cmd == "ip6tables" {
			rules = append(rules, []string{"-A", queueChain, "-p", "ipv6-icmp", "-j", "RETURN"})
		}
		rules = append(rules,
			append([]string{"-A", queueChain, "-s", f.podCIDR}, queue...),
			append([]string{"-A", queueChain, "-d", f.podCIDR}, queue...),
			[]string{"-A", "POSTROUTING", "-j", queueChain},
		)
		for _, r := range rules {
			if err := n.inNode(append([]string{f.cmd, "-w", "-t", "mangle"}, r...)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// inNode runs a command in the node's network namespace.
func (n *Node) inNode(args ...string) error {
	cmd := exec.Command("nsenter", append([]string{fmt.Sprintf("--net=/proc/%d/ns/net", n.init.pid()), "--"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Netlink's nftables messages (linux/netfilter/nf_tables.h), for
// nftTableExists: the node has no nft command.
const (
	nfnlSubsysNFTables = 10
	nftMsgNewTable     = 0
	nftMsgGetTable     = 1
	nftaTableName      = 1
	nfprotoInet        = 1
)

// nftTableExists asks the kernel, over netlink in the calling thread's
// network namespace, whether the nftables table name of family exists.
func nftTableExists(family byte, name string) (bool, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_NETFILTER)
	if err != nil {
		return false, err
	}
	defer syscall.Close(fd)
	timeout := syscall.Timeval{Sec: 5}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &timeout); err != nil {
		return false, err
	}
	kernel := &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}
	if err := syscall.Sendto(fd, getTableRequest(family, name), 0, kernel); err != nil {
		return false, err
	}
	found := false
	buf := make([]byte, 1<<16)
	for {
		nr, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			return false, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:nr])
		if err != nil {
			return false, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case nfnlSubsysNFTables<<8 | nftMsgNewTable:
				found = true
			case syscall.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return false, errors.New("short netlink error message")
				}
				// The acknowledgement (0) follows the table; a table that
				// does not exist is ENOENT.
				switch errno := syscall.Errno(-int32(binary.NativeEndian.Uint32(m.Data))); errno {
				case 0:
					return found, nil
				case syscall.ENOENT:
					return false, nil
				default:
					return false, errno
				}
			}
		}
	}
}

// getTableRequest is an NFT_MSG_GETTABLE request for the table name of
// family, asking for an acknowledgement.
func getTableRequest(family byte, name string) []byte {
	value := append([]byte(name), 0)
	attr := make([]byte, (4+len(value)+3)&^3)
	binary.NativeEndian.PutUint16(attr[0:], uint16(4+len(value)))
	binary.NativeEndian.PutUint16(attr[2:], nftaTableName)
	copy(attr[4:], value)
	// nfgenmsg: the family, version 0, resource id 0.
	body := append([]byte{family, 0, 0, 0}, attr...)
	msg := make([]byte, syscall.NLMSG_HDRLEN, syscall.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(syscall.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], nfnlSubsysNFTables<<8|nftMsgGetTable)
	binary.NativeEndian.PutUint16(msg[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], 1) // sequence number
	return append(msg, body...)
}
