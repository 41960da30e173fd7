// Package node adds a real node to the local test cluster of package
// framework: containerd, runc and the CNI bridge run the pods for real, a
// kubelet registers the Node, kube-proxy implements ClusterIP Services, and
// kube-network-policies enforces NetworkPolicies.
// The fake kwok nodes stay for scale and fast tests; a test package opts in
// with framework.Options.RealNode:
//
//	var env = framework.NewEnv(framework.Options{RealNode: node.New(node.Options{
//		GoImages: []node.GoImage{{Package: "./test/framework/node/internal/testserver", Name: "nginx-operator.local/testserver:1"}},
//	})})
//
//	func TestMain(m *testing.M) { os.Exit(env.Main(m)) }
//
//	func TestX(t *testing.T) {
//		node.Require(t) // skips (fails in CI) when the node cannot run here, saying what to install
//		c := env.Cluster(t)
//		...
//	}
//
// Isolation. The node lives in namespaces of its own (network, mount, PID,
// UTS) whose first process is an init of this package (see init.go): its
// bridge, pod veths, iptables rules (kube-proxy's, the kubelet's, the CNI
// plugins') and network sysctls are in its network namespace, its mounts
// (overlays, shm, secret and projected volumes, pod netns pins) in its mount
// namespace, and its processes, containerd shims and containers included, in
// its PID namespace. Halt kills that init and the kernel takes every
// process and mount along; Stop then deletes the link to the host and lets
// the network namespace go, and removes the cgroups the kubelet made under
// the node's cgroupRoot and the node's run directory. The host-wide kernel
// tunables the kubelet sets (vm.overcommit_memory, kernel.panic, ...) are
// shadowed inside the node by files holding the values it wants, so the
// host's never change; paths the kubelet, containerd's shim and the CNI
// library hard-code (/var/log/containers, /run/containerd, /var/lib/cni) are
// private overlays. Names are per run (link nok<token>, cgroup /nok<token>,
// state in /run/nok<token>) and each node leases its own /24 of
// 10.201.0.0/16, so runs on one machine do not collide. If the test process
// dies, the kernel kills the node with it; the next node removes the cgroups
// and run directory it left.
//
// The API server. Pods reach the apiserver through the kubernetes Service,
// whose endpoint is the apiserver's advertised address: a cluster with a real
// node binds and advertises the apiserver on the host's end of the link to
// the node (Prepare returns it) instead of 127.0.0.1.
//
// Scheduling. The node is labelled nginx-operator.dev/node=real. In a
// cluster with kwok nodes too (Options.Nodes > 0) it is also tainted
// nginx-operator.dev/node=real:NoSchedule, so pods of kwok-targeted tests
// never land on it; tests of real pods use OnRealNode. Without kwok nodes it
// has no taint and every pod runs on it.
//
// DNS. CoreDNS runs on the node (a process in its namespaces, like
// kube-proxy) at the node's address, which the kubelet gives pods as their
// nameserver: Services and pods resolve in cluster.local; other names do not
// (the node has no way out to the host's resolvers).
//
// NetworkPolicies. kube-network-policies (sigs.k8s.io/kube-network-policies,
// the reference enforcer of SIG Network) runs on the node, a process like
// kube-proxy, with a ServiceAccount of its own (kube-system/
// kube-network-policies) allowed to list and watch pods, namespaces and
// NetworkPolicies, and a token the node mints for it at start; Start
// returns once it gives packets their verdicts. It sees the first packet of
// each new connection to or from a pod and drops what the policies do not
// admit (ingress and egress; not the admin policy APIs). The node's own
// root processes are never filtered, so the kubelet's probes pass a
// default-deny policy, as Kubernetes promises for traffic from the node;
// so do the tests' connections from the node (HTTPClient, DialContext),
// which run as root: test a policy with client pods. Its packets normally
// come from its own nftables rules; a kernel without the nftables queue
// expression (CONFIG_NFT_QUEUE) refuses those, and the node then queues the
// same packets with xtables' NFQUEUE target (NetworkPolicyDataplane says
// which).
//
// Not provided: image pulls (every image is an archive imported at start),
// Detached clusters.
//
// Volumes. The default StorageClass's (the controller-manager's hostPath
// provisioner's) volumes are directories of the host's /tmp/hostpath_pv,
// which the provisioner makes root's with mode 0750 and which fsGroup does
// not apply to: while it runs, the node makes each world-writable as its
// PersistentVolume appears, as kind's and k3s's local-path provisioner
// does, so pods of any user can use them, and removes them at Stop.
package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node/image"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Options configure a node.
type Options struct {
	// Name of the Node object and the node's hostname; "real-node" when empty.
	Name string
	// Images are image archives (as `docker save` writes them, or OCI
	// layouts; package image writes them) imported before the kubelet
	// starts. There is no registry: pods run these with imagePullPolicy
	// IfNotPresent (the default for a tag other than latest) or Never.
	Images []string
	// SandboxImage is the archive of the pod sandbox ("pause") image, and
	// SandboxImageName its name. When SandboxImage is empty the node builds
	// its own (a static build of ./hack/images/pause, the program of
	// hack/images's pause image) named DefaultSandboxImage.
	SandboxImage     string
	SandboxImageName string
	// GoImages are images the node builds when it starts, each holding one
	// static binary (see image.BuildGo), and imports like Images.
	GoImages []GoImage
	// CoreDNSImage, when set, names an image the node imports holding the
	// CoreDNS binary it runs itself (a static build), as /coredns, its
	// entrypoint, run as root: for manifests that run CoreDNS in a pod,
	// such as Gateway API's conformance suite's
	// (registry.k8s.io/coredns/coredns:v1.12.2), which the node cannot pull.
	CoreDNSImage string
}

// GoImage is an image of one Go program: Package is a main package of
// this module ("./cmd/operator", built from the module's root), Name the
// image's name ("nginx-operator.local/operator:test"); its entrypoint is the
// binary.
type GoImage struct {
	Package, Name string
}

// overlays are the host directories the node sees through a private
// overlay (see initConfig.Overlays).
var overlays = []string{"/run", "/var/lib", "/var/log"}

// DefaultSandboxImage names the sandbox image the node builds for itself.
const DefaultSandboxImage = "nginx-operator.local/pause:1"

// pausePackage is the sandbox program the node builds when
// Options.SandboxImage is empty.
const pausePackage = "./hack/images/pause"

// Node is a real node of a local cluster.
type Node struct {
	opts  Options
	token string
	bins  binaries

	dir    string // configuration, logs, containerd's and the kubelet's data
	runDir string // /run/nok<token>: sockets and runtime state
	net    *network
	init   *nsInit
	// netns holds the node's network namespace, and so its link to the
	// host, until Stop: after Halt, when the node's processes are gone.
	netns   *os.File
	cluster *framework.Cluster
	// volumes opens the provisioned volumes' directories, and removes
	// them at Stop.
	volumes *provisionedVolumes

	// Timings, for reports.
	PreparedIn, StartedIn, StoppedIn time.Duration
	// NetworkPolicyDataplane says how packets reach the NetworkPolicy
	// enforcer on this kernel (DataplaneNFTables or DataplaneXtables),
	// once the node started.
	NetworkPolicyDataplane string
}

var _ framework.RealNode = (*Node)(nil)

// New returns a node that the framework prepares and starts with its
// cluster (framework.Options.RealNode).
func New(opts Options) *Node {
	if opts.Name == "" {
		opts.Name = "real-node"
	}
	return &Node{opts: opts}
}

// Name is the name of the Node object.
func (n *Node) Name() string { return n.opts.Name }

// IP is the node's InternalIP (the apiserver reaches the kubelet there).
func (n *Node) IP() string {
	if n.net == nil {
		return ""
	}
	return n.net.nodeIP
}

// HostIP is the host's end of the link to the node, where the apiserver
// listens.
func (n *Node) HostIP() string {
	if n.net == nil {
		return ""
	}
	return n.net.hostIP
}

// PodCIDR is the subnet of the node's pods.
func (n *Node) PodCIDR() string {
	if n.net == nil {
		return ""
	}
	return n.net.podCIDR
}

// Dir holds the node's configuration and logs (kubelet.log, containerd.log,
// kube-proxy.log, coredns.log, kube-network-policies.log, init.log), and
// containerd's and the kubelet's data.
func (n *Node) Dir() string { return n.dir }

// Token names the node's resources on the host: the link nok<token>, the
// cgroup /nok<token>, the directory /run/nok<token>.
func (n *Node) Token() string { return n.token }

func (n *Node) cgroupName() string { return "nok" + n.token }

func (n *Node) sandboxImageName() string {
	if n.opts.SandboxImage != "" {
		return n.opts.SandboxImageName
	}
	return DefaultSandboxImage
}

// OnRealNode makes spec select the real node and tolerate its taint.
func OnRealNode(spec *corev1.PodSpec) {
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[LabelKey] = LabelValue
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
		Key: LabelKey, Operator: corev1.TolerationOpEqual, Value: LabelValue, Effect: corev1.TaintEffectNoSchedule,
	})
}

// Require skips the test when a cluster with a real node cannot run here
// (binaries missing, not root, not Linux), or fails it when tools are
// required (CI or NGINX_OPERATOR_REQUIRE_TOOLS), with what to install. Call
// it before framework.Env.Cluster, which fails rather than skips when the
// node cannot start.
func Require(t testing.TB) {
	t.Helper()
	tools.Integration(t, "a real node (root, kubelet, containerd)")
	err := New(Options{}).Missing()
	for _, bin := range []string{framework.Etcd, framework.KubeAPIServer, framework.KubeControllerManager, framework.KubeScheduler} {
		if err != nil {
			break
		}
		_, err = framework.BinPath(bin)
	}
	if err != nil {
		msg := fmt.Sprintf("real node: %v", err)
		if tools.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg + " (set CI or NGINX_OPERATOR_REQUIRE_TOOLS to fail instead)")
	}
}

// Missing says what the node lacks to run on this machine, or nil.
func (n *Node) Missing() error {
	if runtime.GOOS != "linux" {
		return errors.New("a real node needs Linux")
	}
	if os.Geteuid() != 0 {
		return errors.New("a real node needs root (namespaces, mounts, cgroups, links)")
	}
	_, err := findBinaries(n.opts.SandboxImage == "" || len(n.opts.GoImages) > 0)
	return err
}

// Prepare creates the node's namespaces and its link to the host, in dir,
// before the control plane starts, and returns the host's address on that
// link: the apiserver listens there, and the node and its pods reach it.
func (n *Node) Prepare(ctx context.Context, dir string) (string, error) {
	began := time.Now()
	if n.opts.SandboxImage != "" && n.opts.SandboxImageName == "" {
		return "", errors.New("Options.SandboxImage needs SandboxImageName, the name of the image in the archive")
	}
	bins, err := findBinaries(n.opts.SandboxImage == "" || len(n.opts.GoImages) > 0)
	if err != nil {
		return "", err
	}
	n.bins = bins
	if n.token, err = randomToken(); err != nil {
		return "", err
	}
	if err := n.makeDirs(dir); err != nil {
		return "", err
	}
	if n.net, err = leaseSubnet(n.token); err != nil {
		return "", err
	}
	if err := createCgroupRoot(n.cgroupName()); err != nil {
		return "", err
	}
	if n.init, err = startInit(n.initConfig(), filepath.Join(n.dir, "init.log")); err != nil {
		return "", err
	}
	if err := n.linkNetwork(); err != nil {
		return "", err
	}
	n.PreparedIn = time.Since(began)
	return n.net.hostIP, ctx.Err()
}

// makeDirs creates the node's directory (dir, which must not be under a
// path the node overlays, or the node would hide it from itself), its run
// directory, which records its owner for a later sweep of stale nodes, and
// the directories filled later.
func (n *Node) makeDirs(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, o := range overlays {
		if dir == o || strings.HasPrefix(dir, o+"/") {
			return fmt.Errorf("the node's directory %s must not be under %s, which the node overlays", dir, o)
		}
	}
	n.dir = dir
	n.runDir = "/run/nok" + n.token
	sweepStale()
	for _, d := range []string{n.dir, n.runDir, filepath.Join(n.dir, "cni")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// Filled at Start, when the apiserver can mint the token.
	if err := os.MkdirAll(n.serviceAccountDir(), 0o700); err != nil {
		return err
	}
	return writeOwner(n.runDir)
}

// initConfig is what the node's init sets up in its namespaces.
func (n *Node) initConfig() initConfig {
	return initConfig{
		Hostname: n.opts.Name,
		// What the kubelet's container manager wants of these host-wide
		// tunables (it sets them unless protectKernelDefaults): it reads
		// them here, as it wants them, and changes nothing.
		Sysctls: map[string]string{
			"/proc/sys/vm/overcommit_memory":      "1",
			"/proc/sys/vm/panic_on_oom":           "0",
			"/proc/sys/kernel/panic":              "10",
			"/proc/sys/kernel/panic_on_oops":      "1",
			"/proc/sys/kernel/keys/root_maxkeys":  "1000000",
			"/proc/sys/kernel/keys/root_maxbytes": "25000000",
		},
		// Paths containerd's shim (/run/containerd/runc, /run/containerd/s),
		// the kubelet (/var/log/containers) and the CNI library
		// (/var/lib/cni) hard-code stay private to the node.
		Overlays:  overlays,
		Keep:      []string{n.runDir},
		Binds:     map[string]string{serviceAccountPath: n.serviceAccountDir()},
		ShadowDir: filepath.Join(n.dir, "shadow"),
	}
}

// linkNetwork links the init's network namespace to the host and writes
// the CNI configuration its pods get their addresses from.
func (n *Node) linkNetwork() error {
	var err error
	if n.netns, err = os.Open(fmt.Sprintf("/proc/%d/ns/net", n.init.pid())); err != nil {
		return err
	}
	if err := n.net.setup(n.init.pid()); err != nil {
		return err
	}
	cni, err := n.cniConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.dir, "cni", "10-nok.conflist"), cni, 0o644)
}

// Start runs containerd (and imports the images), CoreDNS, the kubelet,
// kube-proxy and the NetworkPolicy enforcer against the cluster's
// apiserver, and returns once the enforcer gives packets their verdicts and
// the Node is Ready and schedulable.
func (n *Node) Start(ctx context.Context, c *framework.Cluster) error {
	if n.init == nil {
		return errors.New("the node was not prepared")
	}
	began := time.Now()
	n.cluster = c
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.importImages(ctx); err != nil {
		return err
	}
	kubeletKubeconfig := filepath.Join(n.dir, "kubelet.kubeconfig")
	if err := writeClientKubeconfig(kubeletKubeconfig, c.Host, c.CACertFile, c.CAKeyFile,
		"system:node:"+n.opts.Name, []string{"system:nodes"}); err != nil {
		return err
	}
	proxyKubeconfig := filepath.Join(n.dir, "kube-proxy.kubeconfig")
	if err := writeClientKubeconfig(proxyKubeconfig, c.Host, c.CACertFile, c.CAKeyFile,
		"system:kube-proxy", nil); err != nil {
		return err
	}
	if err := n.startDNS(ctx); err != nil {
		return err
	}
	kcfg, err := n.kubeletConfig(c.Nodes > 0)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.dir, "kubelet.yaml"), kcfg, 0o644); err != nil {
		return err
	}
	if err := n.run("kubelet", n.bins.kubelet,
		"--config="+filepath.Join(n.dir, "kubelet.yaml"),
		"--kubeconfig="+kubeletKubeconfig,
		"--root-dir="+filepath.Join(n.dir, "kubelet"),
		"--hostname-override="+n.opts.Name,
		"--node-ip="+n.net.nodeIP,
		"--node-labels="+LabelKey+"="+LabelValue,
		"--v=1",
	); err != nil {
		return err
	}
	if err := n.startKubeProxy(proxyKubeconfig); err != nil {
		return err
	}
	// Before the Node is Ready, so that no pod runs unprotected.
	if err := n.startNetworkPolicies(ctx); err != nil {
		return err
	}
	if err := n.waitReady(ctx); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	n.volumes = watchProvisionedVolumes(cs)
	n.StartedIn = time.Since(began)
	return nil
}

// run starts a process in the node's namespaces, its output in <dir>/<name>.log.
func (n *Node) run(name, bin string, args ...string) error {
	return n.runWithEnv(name, bin, nil, args...)
}

// runWithEnv is run with more environment variables.
func (n *Node) runWithEnv(name, bin string, env []string, args ...string) error {
	env = append([]string{
		"PATH=" + n.bins.dir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + os.Getenv("HOME"),
	}, env...)
	return n.init.start(name, bin, args, env, n.logPath(name))
}

func (n *Node) logPath(name string) string { return filepath.Join(n.dir, name+".log") }

// dnsUser is the identity of the node's CoreDNS, and the name of its
// ClusterRole and ClusterRoleBinding.
const dnsUser = "real-node:coredns"

// startDNS runs CoreDNS on the node, as a process of the node (a pod on the
// host network would do the same, with an image to build), and waits until
// it has read the Services.
// startKubeProxy runs kube-proxy with the client identity in kubeconfig,
// and rejects what it has yet to translate (see
// rejectUntranslatedServiceAddresses).
func (n *Node) startKubeProxy(kubeconfig string) error {
	cfg, err := n.kubeProxyConfig(kubeconfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.dir, "kube-proxy.yaml"), cfg, 0o644); err != nil {
		return err
	}
	if err := n.run("kube-proxy", n.bins.kubeProxy, "--config="+filepath.Join(n.dir, "kube-proxy.yaml"), "--v=1"); err != nil {
		return err
	}
	return n.rejectUntranslatedServiceAddresses()
}

func (n *Node) startDNS(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(n.cluster.Config)
	if err != nil {
		return err
	}
	if err := grant(ctx, cs, dnsUser, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: dnsUser},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	); err != nil {
		return err
	}
	kubeconfig := filepath.Join(n.dir, "coredns.kubeconfig")
	if err := writeClientKubeconfig(kubeconfig, n.cluster.Host, n.cluster.CACertFile, n.cluster.CAKeyFile, dnsUser, nil); err != nil {
		return err
	}
	corefile := filepath.Join(n.dir, "Corefile")
	if err := os.WriteFile(corefile, []byte(n.corefile(kubeconfig)), 0o644); err != nil {
		return err
	}
	if err := n.run("coredns", n.bins.coredns, "-conf", corefile); err != nil {
		return err
	}
	client := n.HTTPClient()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := n.failed(); err != nil {
			return false, err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:8181/ready", nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("CoreDNS did not become ready: %w (log: %s)", err, n.logPath("coredns"))
	}
	return nil
}

// grant gives subject the ClusterRole name with rules, bound by a
// ClusterRoleBinding of the same name (left as they are if they exist).
func grant(ctx context.Context, cs kubernetes.Interface, name string, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// failed says which of the node's processes exited, if one did.
func (n *Node) failed() error {
	for _, name := range []string{"containerd", "coredns", "kubelet", "kube-proxy", networkPoliciesName} {
		if st := n.init.death(name); st != "" {
			return fmt.Errorf("%s exited (%s); log: %s", name, st, n.logPath(name))
		}
	}
	select {
	case <-n.init.exited:
		return fmt.Errorf("the node's init exited; log: %s", filepath.Join(n.dir, "init.log"))
	default:
	}
	return nil
}

func (n *Node) startContainerd(ctx context.Context) error {
	cfg := filepath.Join(n.dir, "containerd.toml")
	if err := os.MkdirAll(n.registryHostsDir(), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(cfg, []byte(n.containerdConfig()), 0o644); err != nil {
		return err
	}
	if err := n.run("containerd", n.bins.containerd, "--config="+cfg, "--log-level=warn"); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := n.failed(); err != nil {
			return false, err
		}
		return n.ctr(ctx, "version") == nil, nil
	})
	if err != nil {
		return fmt.Errorf("containerd did not start: %w (log: %s)", err, n.logPath("containerd"))
	}
	return nil
}

// ctr runs containerd's client against the node's containerd, in the
// namespace of the CRI plugin.
func (n *Node) ctr(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, n.bins.ctr, append([]string{"--address", n.containerdSocket(), "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (n *Node) importImages(ctx context.Context) error {
	archives := append([]string(nil), n.opts.Images...)
	type build struct {
		GoImage
		cfg image.Config
	}
	var builds []build
	for _, b := range n.opts.GoImages {
		builds = append(builds, build{GoImage: b})
	}
	if n.opts.SandboxImage == "" {
		// The project's pause program, which hack/images builds into its
		// pause image too, as the upstream image's user.
		builds = append(builds, build{GoImage: GoImage{Package: pausePackage, Name: DefaultSandboxImage}, cfg: image.Config{User: "65535:65535"}})
	} else {
		archives = append(archives, n.opts.SandboxImage)
	}
	if len(builds) > 0 {
		root, err := tools.RepoRoot()
		if err != nil {
			return err
		}
		for i, b := range builds {
			archive := filepath.Join(n.dir, fmt.Sprintf("image-%d.tar", i))
			if err := image.BuildGo(ctx, root, b.Package, b.Name, archive, b.cfg); err != nil {
				return fmt.Errorf("building image %s: %w", b.Name, err)
			}
			archives = append(archives, archive)
		}
	}
	if n.opts.CoreDNSImage != "" {
		archive, err := n.coreDNSImage()
		if err != nil {
			return fmt.Errorf("image %s: %w", n.opts.CoreDNSImage, err)
		}
		archives = append(archives, archive)
	}
	for _, a := range archives {
		if err := n.ctr(ctx, "images", "import", "--platform", "linux/"+runtime.GOARCH, a); err != nil {
			return fmt.Errorf("importing %s: %w", a, err)
		}
	}
	return nil
}

// coreDNSImage writes the archive of Options.CoreDNSImage, the node's own
// CoreDNS binary as /coredns, into the node's directory.
func (n *Node) coreDNSImage() (string, error) {
	data, err := os.ReadFile(n.bins.coredns)
	if err != nil {
		return "", err
	}
	archive := filepath.Join(n.dir, "coredns-image.tar")
	files := []image.File{{Path: "coredns", Mode: 0o755, Data: data}}
	return archive, image.WriteArchive(archive, n.opts.CoreDNSImage, files, image.Config{Entrypoint: []string{"/coredns"}})
}

// waitReady waits until the Node is Ready with no taint but its own.
func (n *Node) waitReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(n.cluster.Config)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := n.failed(); err != nil {
			return false, err
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, t := range node.Spec.Taints {
			if t.Key != LabelKey {
				last = "taint " + t.Key
				return false, nil
			}
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				last = fmt.Sprintf("Ready=%s: %s", c.Status, c.Message)
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		last = "no Ready condition"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s did not become Ready: %w (last: %s; logs: %s)", n.opts.Name, err, last, n.dir)
	}
	return nil
}

// Halt ends every process of the node (containers and shims included),
// which takes its mount and PID namespaces along. Its network namespace, and
// with it the link to the host and the address the apiserver listens on,
// stays until Stop: the node's connections to the apiserver end cleanly
// (the kernel closes them as the processes die), so the apiserver does not
// wait for them when it stops.
func (n *Node) Halt() error {
	if n.volumes != nil {
		n.volumes.halt()
	}
	if n.init != nil {
		n.init.kill()
	}
	return nil
}

// Stop ends every process of the node (containers and shims included),
// which takes its namespaces, mounts, bridge, iptables rules and network
// sysctls along, then deletes the link to the host, the node's cgroups,
// /run/nok<token> and the directories of the volumes provisioned while it
// ran. It is safe to call more than once, and after a failed Prepare or
// Start.
func (n *Node) Stop() error {
	began := time.Now()
	defer func() { n.StoppedIn = time.Since(began) }()
	var errs []error
	if err := n.Halt(); err != nil {
		errs = append(errs, err)
	}
	if n.net != nil {
		if err := n.net.teardown(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.netns != nil {
		// The last reference: the namespace, its bridge, iptables rules
		// and sysctls go.
		n.netns.Close()
		n.netns = nil
	}
	if n.token != "" {
		if err := removeCgroupRoot(n.cgroupName(), 15*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if n.volumes != nil {
		if err := n.volumes.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.runDir != "" {
		if err := os.RemoveAll(n.runDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
