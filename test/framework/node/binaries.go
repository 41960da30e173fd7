package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// BinDirEnv points at a directory holding kubelet, kube-proxy, containerd,
// containerd-shim-runc-v2, ctr, coredns and kube-network-policies, bypassing
// the caches of hack/install-node-binaries.sh.
const BinDirEnv = "NGINX_OPERATOR_NODE_BIN"

// Installer builds the node's binaries and installs its system packages.
const Installer = "hack/install-node-binaries.sh"

const installHint = "run `bash " + Installer + "` (or `make test-deps`)"

type binaries struct {
	dir                                 string
	kubelet, kubeProxy, containerd, ctr string
	coredns                             string
	networkPolicies                     string // kube-network-policies
	runc                                string
	cniDir                              string
}

// binDir is the directory of the node's binaries: the environment override
// or the installer's version-keyed cache directory. which names another of
// the installer's directories ("kube-network-policies"); the override holds
// them all.
func binDir(which ...string) (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir, nil
	}
	dir, err := tools.InstallerDir(Installer, which...)
	if err != nil {
		return "", fmt.Errorf("locating the node binaries: %w", err)
	}
	return dir, nil
}

// networkPoliciesBinary is the enforcer's binary in its own directory of
// the installer's, which is keyed by the enforcer's version alone.
const networkPoliciesBinary = "kube-network-policies"

// findBinaries locates everything the node runs, or says what is missing
// and how to install it. needGo: the node builds its sandbox image.
func findBinaries(needGo bool) (binaries, error) {
	var b binaries
	dir, err := binDir()
	if err != nil {
		return b, err
	}
	b.dir = dir
	netpolDir, err := binDir(networkPoliciesBinary)
	if err != nil {
		return b, err
	}
	var missing []string
	for p, dst := range map[string]*string{
		filepath.Join(dir, "kubelet"): &b.kubelet, filepath.Join(dir, "kube-proxy"): &b.kubeProxy,
		filepath.Join(dir, "containerd"): &b.containerd, filepath.Join(dir, "ctr"): &b.ctr,
		filepath.Join(dir, "containerd-shim-runc-v2"): new(string), filepath.Join(dir, "coredns"): &b.coredns,
		filepath.Join(netpolDir, networkPoliciesBinary): &b.networkPolicies,
	} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
			continue
		}
		*dst = p
	}
	tools := []string{"runc", "iptables", "ip", "nsenter"}
	if needGo {
		tools = append(tools, "go")
	}
	for _, name := range tools {
		p, ok := lookSbin(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		if name == "runc" {
			b.runc = p
		}
	}
	for _, d := range []string{"/usr/lib/cni", "/opt/cni/bin"} {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			b.cniDir = d
			break
		}
	}
	if b.cniDir == "" {
		missing = append(missing, "the CNI plugins (/usr/lib/cni/bridge)")
	} else {
		for _, p := range []string{"host-local", "loopback", "portmap"} {
			if _, err := os.Stat(filepath.Join(b.cniDir, p)); err != nil {
				missing = append(missing, filepath.Join(b.cniDir, p))
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return b, fmt.Errorf("missing %s: %s", strings.Join(missing, ", "), installHint)
	}
	return b, nil
}

// lookSbin finds a program on PATH or in the sbin directories, which a
// non-login root shell may lack on its PATH.
func lookSbin(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/go/bin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
