package node

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// writeClientKubeconfig writes a kubeconfig for user (with groups) holding a
// client certificate signed by the cluster's CA.
func writeClientKubeconfig(path, server, caCertFile, caKeyFile, user string, groups []string) error {
	caPEM, err := os.ReadFile(caCertFile)
	if err != nil {
		return err
	}
	caKeyPEM, err := os.ReadFile(caKeyFile)
	if err != nil {
		return err
	}
	ca, err := tools.LoadCA(caPEM, caKeyPEM)
	if err != nil {
		return fmt.Errorf("the cluster's CA: %w", err)
	}
	certPEM, keyPEM, err := ca.Issue(tools.Client(user, groups...), 30*24*time.Hour)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: certPEM,
		ClientKeyData:         keyPEM,
	}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

// tomlString quotes s for TOML (a basic string is JSON-compatible here).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func tomlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// containerdConfig is containerd's configuration: every path under the
// node's directories, the CRI plugin set up for the kubelet (runc, CNI, the
// sandbox image; registries only as TrustPlainHTTPRegistry allows).
func (n *Node) containerdConfig() string {
	r := n.runDir
	return fmt.Sprintf(`version = 4
root = %s
state = %s
# Not the host's /etc/containerd/conf.d.
imports = [%s]
oom_score = 0
disabled_plugins = [
  "io.containerd.nri.v1.nri",
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.differ.v1.erofs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[plugins]
  [plugins."io.containerd.server.v1.grpc"]
    address = %s
  [plugins."io.containerd.server.v1.ttrpc"]
    address = %s

  [plugins."io.containerd.shim.v1.manager"]
    socket_dir = %s

  [plugins."io.containerd.cri.v1.images"]
    snapshotter = "overlayfs"
    [plugins."io.containerd.cri.v1.images".pinned_images]
      sandbox = %s
    [plugins."io.containerd.cri.v1.images".registry]
      config_path = %s

  [plugins."io.containerd.cri.v1.runtime"]
    # runc cannot lower a container's oom_score_adj without CAP_SYS_RESOURCE
    # (missing in some VMs: "can't get final child's PID from pipe: EOF").
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = []
    [plugins."io.containerd.cri.v1.runtime".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
          BinaryName = %s
          Root = %s
    [plugins."io.containerd.cri.v1.runtime".cni]
      bin_dirs = %s
      conf_dir = %s
      max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri"]
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
`,
		tomlString(filepath.Join(n.dir, "containerd")), tomlString(filepath.Join(r, "containerd")),
		tomlString(filepath.Join(n.dir, "containerd.d", "*.toml")),
		tomlString(n.containerdSocket()), tomlString(n.containerdSocket()+".ttrpc"),
		tomlString(filepath.Join(r, "s")),
		tomlString(n.sandboxImageName()), tomlString(n.registryHostsDir()),
		tomlString(n.bins.runc), tomlString(filepath.Join(r, "runc")),
		tomlList([]string{n.bins.cniDir}), tomlString(filepath.Join(n.dir, "cni")),
	)
}

// registryHostsDir is containerd's hosts directory (one hosts.toml per
// registry host), empty until a test trusts a registry.
func (n *Node) registryHostsDir() string { return filepath.Join(n.dir, "certs.d") }

// TrustPlainHTTPRegistry lets the node pull images from the registry at
// host (host:port) over plain HTTP, such as one a test serves on the host's
// end of the node's link (HostIP). containerd reads the hosts directory at
// every pull, so this takes effect at once.
func (n *Node) TrustPlainHTTPRegistry(host string) error {
	dir := filepath.Join(n.registryHostsDir(), host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf("server = %s\n\n[host.%s]\n  capabilities = [\"pull\", \"resolve\"]\n",
		tomlString("http://"+host), tomlString("http://"+host))
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(conf), 0o644)
}

func (n *Node) containerdSocket() string { return filepath.Join(n.runDir, "containerd.sock") }

// cniConfig is the pods' network: a bridge in the node's namespace with
// addresses from the node's pod subnets (IPv4, and IPv6 where the machine
// has it), and hostPort support.
func (n *Node) cniConfig() ([]byte, error) {
	ranges := [][]map[string]string{{{"subnet": n.net.podCIDR, "gateway": n.net.gateway}}}
	routes := []map[string]string{{"dst": "0.0.0.0/0"}}
	if n.net.podCIDR6 != "" {
		ranges = append(ranges, []map[string]string{{"subnet": n.net.podCIDR6, "gateway": n.net.gateway6}})
		routes = append(routes, map[string]string{"dst": "::/0"})
	}
	return json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       "nok" + n.token,
		"plugins": []any{
			map[string]any{
				"type":      "bridge",
				"bridge":    n.net.bridge,
				"isGateway": true,
				// Pods keep their addresses on the way to the host: it
				// routes the pod subnet back through the node.
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  ranges,
					"routes":  routes,
					"dataDir": filepath.Join(n.runDir, "ipam"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
}

// Label is the label of the real node (kwok's nodes have type=kwok); Taint
// its taint when the cluster has kwok nodes too.
const (
	LabelKey   = "nginx-operator.dev/node"
	LabelValue = "real"
)

func (n *Node) kubeletConfig(tainted bool) ([]byte, error) {
	cfg := map[string]any{
		"apiVersion":         "kubelet.config.k8s.io/v1beta1",
		"kind":               "KubeletConfiguration",
		"address":            n.net.nodeIP,
		"port":               10250,
		"readOnlyPort":       0,
		"healthzBindAddress": "127.0.0.1",
		"healthzPort":        10248,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": n.cluster.CACertFile},
		},
		"authorization":            map[string]any{"mode": "Webhook"},
		"containerRuntimeEndpoint": "unix://" + n.containerdSocket(),
		// Machines with the cgroup v1 (hybrid) layout still work.
		"cgroupDriver": "cgroupfs",
		"failCgroupV1": false,
		"cgroupRoot":   "/" + n.cgroupName(),
		"failSwapOn":   false,
		"podLogsDir":   filepath.Join(n.dir, "pod-logs"),
		"resolvConf":   n.resolvConf(),
		// A test machine's disk and memory are shared: evict nothing, and
		// never remove the images the tests imported (there is no
		// registry to pull them again from).
		"evictionHard": map[string]string{
			"memory.available": "1Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"serializeImagePulls":         false,
		"rotateCertificates":          false,
		"serverTLSBootstrap":          false,
		"oomScoreAdj":                 0,
		"nodeStatusReportFrequency":   "10s",
		"syncFrequency":               "10s",
		"fileCheckFrequency":          "10s",
		"shutdownGracePeriod":         "0s",
		"protectKernelDefaults":       false,
		// The controller-manager runs no attach/detach controller.
		"enableControllerAttachDetach": false,
		// The node's CoreDNS (see corefile).
		"clusterDNS":    []string{n.net.nodeIP},
		"clusterDomain": ClusterDomain,
	}
	if tainted {
		cfg["registerWithTaints"] = []map[string]string{{"key": LabelKey, "value": LabelValue, "effect": "NoSchedule"}}
	}
	return yaml.Marshal(cfg)
}

// resolvConf is the resolv.conf the kubelet gives pods: the host's.
func (n *Node) resolvConf() string { return "/etc/resolv.conf" }

func (n *Node) kubeProxyConfig(kubeconfig string) ([]byte, error) {
	zero := "0s"
	return yaml.Marshal(map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": kubeconfig},
		"hostnameOverride":   n.opts.Name,
		"mode":               "iptables",
		"clusterCIDR":        n.net.podCIDR,
		"bindAddress":        "0.0.0.0",
		"healthzBindAddress": "127.0.0.1:10256",
		"metricsBindAddress": "127.0.0.1:10249",
		"nodePortAddresses":  []string{"primary"},
		"oomScoreAdj":        0,
		"iptables": map[string]any{
			"localhostNodePorts": false,
			"syncPeriod":         "10s",
			"minSyncPeriod":      "0s",
		},
		// Conntrack sysctls are the host's (or read-only outside its
		// network namespace): leave them alone.
		"conntrack": map[string]any{
			"maxPerCore":            0,
			"min":                   0,
			"tcpEstablishedTimeout": zero,
			"tcpCloseWaitTimeout":   zero,
			"udpTimeout":            zero,
			"udpStreamTimeout":      zero,
		},
	})
}

// ClusterDomain is the DNS domain of the cluster's Services and pods.
const ClusterDomain = "cluster.local"

// corefile configures the cluster's DNS: CoreDNS on the node's address
// (pods use it as their nameserver), answering for Services and pods from
// the apiserver. Other names do not resolve: the node has no way out.
func (n *Node) corefile(kubeconfig string) string {
	return fmt.Sprintf(`.:53 {
    bind %s
    errors
    ready 127.0.0.1:8181
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    cache 5
}
`, n.net.nodeIP, ClusterDomain, kubeconfig)
}
