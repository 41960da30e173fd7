package framework

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

//go:embed kwok/stages.yaml
var kwokStages []byte

// Options choose what runs.
type Options struct {
	// Dir holds certificates, data, logs and the kubeconfig. It must exist.
	Dir string
	// Nodes > 0 adds kube-controller-manager, kube-scheduler and kwok managing
	// that many fake nodes: pods are scheduled and become Ready, Jobs complete,
	// StatefulSets and garbage collection work. 0 runs only etcd and the apiserver.
	Nodes int
	// Detached leaves the processes running after this process exits (for
	// `make cluster-up`); Stop or StopDetached ends them.
	Detached bool
	// AuditUsers, when set, makes the apiserver write an audit log (AuditLog)
	// of every request these users make, at the Metadata level.
	AuditUsers []string
	// AfterTests, when set, runs after every test of a package passed (see
	// Env.Main), on the still running cluster, if a test started it; an
	// error fails the package.
	AfterTests func(*Cluster) error
	// PodCIDR is where kwok takes its pods' addresses from; default
	// 10.244.0.0/16. Benchmarks choose what the operator meets when it
	// connects to a pod: a loopback range refuses at once, a routed one
	// can be made to drop.
	PodCIDR string
	// ControllerManagerArgs are added to kube-controller-manager's flags
	// (later flags win), such as a higher --kube-api-qps for benchmarks.
	ControllerManagerArgs []string
	// APIServerArgs are added to kube-apiserver's flags (later flags win),
	// such as --profiling=true for a benchmark that profiles it.
	APIServerArgs []string
	// RealNode, when set, adds a node that runs pods for real (kubelet,
	// containerd, runc, CNI bridge, kube-proxy; see package
	// test/framework/node). It is prepared before the control plane, which
	// then binds and advertises the apiserver on the host address the node
	// returns instead of 127.0.0.1 (so Host changes, and pods reach the
	// apiserver through the kubernetes Service), authorizes kubelets with
	// the Node authorizer and reaches them by InternalIP; it is started once
	// the control plane runs; its processes stop before the control plane,
	// its link to the host after. The controller-manager and
	// scheduler run even when Nodes is 0 (kwok only when Nodes > 0). Not
	// with Detached.
	RealNode RealNode
}

// RealNode is a node whose pods really run; package test/framework/node
// implements it.
type RealNode interface {
	// Missing says what the node lacks to run on this machine, or nil.
	Missing() error
	// Prepare sets the node up in dir before the control plane starts and
	// returns the host address the apiserver must listen on and advertise.
	Prepare(ctx context.Context, dir string) (apiserverIP string, err error)
	// Start runs the node against the started control plane and returns
	// once its Node is Ready.
	Start(ctx context.Context, c *Cluster) error
	// Halt ends the node's processes, before the control plane stops, so
	// that none of them holds a connection to the apiserver open while it
	// drains; the address Prepare returned stays until Stop.
	Halt() error
	// Stop ends the node and undoes what it changed on the machine; safe
	// after a failed Prepare or Start, and more than once.
	Stop() error
}

// Cluster is a running local control plane.
type Cluster struct {
	Options
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig string
	// Config is the admin's REST config.
	Config *rest.Config
	// Host is the apiserver's URL.
	Host string
	// PKI paths, for tests that sign credentials or configure webhooks.
	CACertFile string
	// CAKeyFile is the CA's private key, for signing client certificates
	// (a real node's kubelet and kube-proxy).
	CAKeyFile string
	// EtcdURL is etcd's client URL, for tests that check what is stored.
	EtcdURL string

	procs []*process
	// apiserverIP is where the apiserver listens when it is not 127.0.0.1
	// (RealNode); nodePrepared is true once RealNode.Prepare was called.
	apiserverIP  string
	nodePrepared bool
}

// KubeconfigFile is the name of the admin kubeconfig inside Options.Dir.
const KubeconfigFile = "kubeconfig"

// ServiceCIDR and ServiceCIDR6 are the ranges of the clusters' Service
// addresses (the apiserver's --service-cluster-ip-range).
const (
	ServiceCIDR  = "10.96.0.0/16"
	ServiceCIDR6 = "fd00:10:96::/112"
)

// pidsFile lists the pids of a detached cluster's processes, one per line.
const pidsFile = "pids"

// Start brings up the control plane and waits until it serves (and, with
// nodes, until every fake node is Ready). On failure everything started is
// stopped again and the error names the log to read.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	c := &Cluster{Options: opts, Kubeconfig: filepath.Join(opts.Dir, KubeconfigFile)}
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	if opts.Detached {
		var pids []string
		for _, p := range c.procs {
			pids = append(pids, strconv.Itoa(p.cmd.Process.Pid))
		}
		if err := os.WriteFile(filepath.Join(opts.Dir, pidsFile), []byte(strings.Join(pids, "\n")+"\n"), 0o600); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	creds, err := writePKI(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return fmt.Errorf("writing certificates: %w", err)
	}
	c.CACertFile = creds.CACert
	c.CAKeyFile = creds.CAKey
	if err := c.prepareRealNode(ctx, creds); err != nil {
		return err
	}

	etcdURL, err := c.startEtcd(ctx)
	if err != nil {
		return err
	}
	c.EtcdURL = etcdURL
	if err := c.startAPIServer(ctx, creds, etcdURL); err != nil {
		return err
	}
	if c.Nodes == 0 && c.RealNode == nil {
		return nil
	}
	starts := []func(context.Context, *pki) error{c.startControllerManager, c.startScheduler}
	if c.Nodes > 0 {
		starts = append(starts, c.startKwok)
	}
	for _, start := range starts {
		if err := start(ctx, creds); err != nil {
			return err
		}
	}
	if err := c.addStorageClass(ctx); err != nil {
		return fmt.Errorf("creating the default StorageClass: %w", err)
	}
	if c.Nodes > 0 {
		if err := c.addNodes(ctx); err != nil {
			return err
		}
	}
	if c.RealNode != nil {
		if err := c.RealNode.Start(ctx, c); err != nil {
			return fmt.Errorf("starting the real node: %w", err)
		}
	}
	return nil
}

// prepareRealNode prepares Options.RealNode, if any, and adds the address
// it returns to the apiserver's serving certificate.
func (c *Cluster) prepareRealNode(ctx context.Context, creds *pki) error {
	if c.RealNode == nil {
		return nil
	}
	if c.Detached {
		return errors.New("a real node cannot outlive the process that started it: RealNode does not work with Detached")
	}
	if err := c.RealNode.Missing(); err != nil {
		return fmt.Errorf("real node: %w", err)
	}
	c.nodePrepared = true
	ip, err := c.RealNode.Prepare(ctx, filepath.Join(c.Dir, "node"))
	if err != nil {
		return fmt.Errorf("preparing the real node: %w", err)
	}
	if err := reissueServingCert(creds, net.ParseIP(ip)); err != nil {
		return fmt.Errorf("adding %s to the apiserver's certificate: %w", ip, err)
	}
	c.apiserverIP = ip
	return nil
}

// reissueServingCert replaces the apiserver's serving certificate with one
// that is also valid for ip, signed by the same CA.
func reissueServingCert(p *pki, ip net.IP) error {
	if ip == nil {
		return errors.New("not an IP address")
	}
	caKeyPEM, err := os.ReadFile(p.CAKey)
	if err != nil {
		return err
	}
	ca, err := tools.LoadCA(p.caPEM, caKeyPEM)
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := ca.Issue(apiserverServing(ip), pkiValidity)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p.ServingCert, certPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.Serving, keyPEM, 0o600)
}

// run starts one binary and remembers it for Stop.
func (c *Cluster) run(name string, args []string, env ...string) (*process, error) {
	bin, err := BinPath(name)
	if err != nil {
		return nil, err
	}
	p, err := startProcess(c.Dir, name, bin, args, env, c.Detached)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// waitHealthy polls url until it answers 200, failing early if p exits.
func waitHealthy(ctx context.Context, p *process, client *http.Client, url string, timeout time.Duration) error {
	err := tools.Poll(ctx, 100*time.Millisecond, timeout, func(ctx context.Context) (bool, error) {
		if !p.running() {
			return false, fmt.Errorf("%s exited", p.name)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not become healthy at %s: %w (log: %s)", p.name, url, err, p.logPath)
	}
	return nil
}

func (c *Cluster) startEtcd(ctx context.Context) (string, error) {
	clientPort, err := tools.FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := tools.FreePort()
	if err != nil {
		return "", err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	p, err := c.run(Etcd, []string{
		"--name=default",
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// Test data is thrown away: skipping fsync makes every write much faster.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	})
	if err != nil {
		return "", err
	}
	return clientURL, waitHealthy(ctx, p, http.DefaultClient, clientURL+"/health", 30*time.Second)
}

func (c *Cluster) startAPIServer(ctx context.Context, pki *pki, etcdURL string) error {
	port, err := tools.FreePort()
	if err != nil {
		return err
	}
	bind, authz := "127.0.0.1", "RBAC"
	var nodeArgs []string
	if c.apiserverIP != "" {
		// Pods reach the advertised address through the kubernetes
		// Service; the real node's kubelet is authorized as a node and
		// reached at its InternalIP with the admin's certificate.
		bind, authz = c.apiserverIP, "Node,RBAC"
		nodeArgs = []string{
			"--kubelet-preferred-address-types=InternalIP,Hostname",
			"--kubelet-client-certificate=" + pki.AdminCert, "--kubelet-client-key=" + pki.AdminKey,
			// Webhooks and aggregated APIs by endpoint: the host routes
			// to pods, not to ClusterIPs.
			"--enable-aggregator-routing=true",
		}
	}
	c.Host = fmt.Sprintf("https://%s:%d", bind, port)
	audit, err := c.auditArgs()
	if err != nil {
		return err
	}
	p, err := c.run(KubeAPIServer, append(append(audit,
		"--etcd-servers="+etcdURL,
		"--cert-dir="+filepath.Join(c.Dir, "apiserver"),
		"--tls-cert-file="+pki.ServingCert, "--tls-private-key-file="+pki.Serving,
		"--client-ca-file="+pki.CACert,
		"--secure-port="+strconv.Itoa(port),
		"--bind-address="+bind, "--advertise-address="+bind,
		// RBAC on, so the operator's own roles are what the tests exercise.
		"--authorization-mode="+authz,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+pki.SAPub,
		"--service-account-signing-key-file="+pki.SAKey,
		// Dual-stack: a Service that asks for IPv6 gets an IPv6 address (the
		// real node's pods have one where the machine has IPv6); the
		// others stay IPv4, the first family.
		"--service-cluster-ip-range="+ServiceCIDR+","+ServiceCIDR6,
		"--allow-privileged=true",
		// Priority and fairness costs CPU and adds nothing on a one-user test cluster.
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--v=1",
	), append(nodeArgs, c.APIServerArgs...)...))
	if err != nil {
		return err
	}
	if err := c.writeKubeconfig(pki); err != nil {
		return err
	}
	tr, err := rest.TransportFor(c.Config)
	if err != nil {
		return err
	}
	return waitHealthy(ctx, p, &http.Client{Transport: tr, Timeout: 5 * time.Second}, c.Host+"/readyz", 90*time.Second)
}

func (c *Cluster) writeKubeconfig(pki *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: pki.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: pki.adminCertPEM, ClientKeyData: pki.adminKeyPEM}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*cfg, c.Kubeconfig); err != nil {
		return err
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 200, 400
	c.Config = rc
	return nil
}

// componentArgs are the flags kube-controller-manager and kube-scheduler share:
// admin credentials for everything, secure serving on a free loopback port.
func (c *Cluster) componentArgs() ([]string, error) {
	port, err := tools.FreePort()
	if err != nil {
		return nil, err
	}
	return []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
		"--v=1",
	}, nil
}

func (c *Cluster) startControllerManager(_ context.Context, pki *pki) error {
	args, err := c.componentArgs()
	if err != nil {
		return err
	}
	_, err = c.run(KubeControllerManager, append(append(args,
		"--service-account-private-key-file="+pki.SAKey,
		"--root-ca-file="+pki.CACert,
		"--use-service-account-credentials=false",
		// Controllers that need a cloud or real networking are of no use here.
		"--controllers=*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle,-persistentvolume-expander,-attachdetach",
		"--concurrent-statefulset-syncs=10",
		// With the default StorageClass of addStorageClass, claims get
		// hostPath volumes (directories under /tmp on this machine): the fake
		// nodes never mount them, but pods with claims schedule and run.
		"--enable-hostpath-provisioner=true",
	), c.ControllerManagerArgs...))
	return err
}

// DefaultStorageClass is the local cluster's default StorageClass.
const DefaultStorageClass = "standard"

// addStorageClass makes the controller-manager's hostPath provisioner the
// default, so a PersistentVolumeClaim binds as it would in a real cluster.
func (c *Cluster) addStorageClass(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultStorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "kubernetes.io/host-path",
	}
	_, err = cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	return err
}

func (c *Cluster) startScheduler(_ context.Context, _ *pki) error {
	args, err := c.componentArgs()
	if err != nil {
		return err
	}
	_, err = c.run(KubeScheduler, args)
	return err
}

func (c *Cluster) startKwok(ctx context.Context, _ *pki) error {
	stages := filepath.Join(c.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return err
	}
	port, err := tools.FreePort()
	if err != nil {
		return err
	}
	workdir := filepath.Join(c.Dir, "kwok")
	if err := os.MkdirAll(workdir, 0o700); err != nil {
		return err
	}
	p, err := c.run(Kwok, []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--config=" + stages,
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--server-address=127.0.0.1:" + strconv.Itoa(port),
		"--cidr=" + cmp.Or(c.PodCIDR, "10.244.0.0/16"),
		"--node-ip=10.255.0.1",
	},
		// An empty work dir keeps a developer's ~/.kwok/kwok.yaml out of the tests.
		"KWOK_WORKDIR="+workdir)
	if err != nil {
		return err
	}
	return waitHealthy(ctx, p, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/healthz", port), 60*time.Second)
}

const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// addNodes registers the fake nodes and waits until kwok reports them Ready.
func (c *Cluster) addNodes(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for i := range c.Nodes {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{kwokNodeAnnotation: "fake"},
				Labels: map[string]string{
					"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"type": "kwok", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3),
				},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	return tools.Poll(ctx, 200*time.Millisecond, 60*time.Second, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && len(n.Spec.Taints) == 0 {
					ready++
				}
			}
		}
		return ready == c.Nodes, nil
	})
}

// Stop ends every process of the cluster, newest first, so no component keeps
// running against an apiserver or etcd that is already gone.
func (c *Cluster) Stop() {
	// The real node's processes go first, as kwok does, but its link to
	// the host last: the apiserver listens on that link's address, and its
	// own shutdown hangs once the address is gone.
	if c.RealNode != nil && c.nodePrepared {
		if err := c.RealNode.Halt(); err != nil {
			fmt.Fprintf(os.Stderr, "halting the real node: %v\n", err)
		}
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.procs = nil
	if c.RealNode != nil && c.nodePrepared {
		if err := c.RealNode.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the real node: %v\n", err)
		}
		c.nodePrepared = false
	}
}

// StopDetached ends a cluster started with Detached by another process, from
// the pids it left in dir.
func StopDetached(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, pidsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.Fields(string(data))
	for i := len(lines) - 1; i >= 0; i-- {
		pid, err := strconv.Atoi(lines[i])
		if err != nil {
			return fmt.Errorf("%s: bad pid %q", pidsFile, lines[i])
		}
		killGroup(pid, 10*time.Second)
	}
	return os.Remove(filepath.Join(dir, pidsFile))
}
