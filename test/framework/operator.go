package framework

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/nginx-operator/nginx-operator/internal/gobuild"
	"github.com/nginx-operator/nginx-operator/test/tools"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// builtBinary is one command of the module, built once per test binary.
type builtBinary struct {
	once sync.Once
	path string
	err  error
}

var (
	operatorBuild builtBinary
	reloaderBuild builtBinary
)

// OperatorBinary builds cmd/operator once per test binary and returns its path.
func OperatorBinary(t testing.TB) string {
	t.Helper()
	return operatorBuild.get(t, "./cmd/operator", "operator")
}

// ReloaderBinary builds cmd/nginx-reloader once per test binary and returns
// its path: the program that runs nginx in every nginx pod and serves the
// reloader_* metrics.
func ReloaderBinary(t testing.TB) string {
	t.Helper()
	return reloaderBuild.get(t, "./cmd/nginx-reloader", "nginx-reloader")
}

func (b *builtBinary) get(t testing.TB, pkg, name string) string {
	t.Helper()
	b.once.Do(func() {
		root, err := tools.RepoRoot()
		if err != nil {
			b.err = err
			return
		}
		// Kept in the user's cache: the next test binary that asks for
		// it, in this run or the next, does not link it again.
		b.path, b.err = gobuild.Build(context.Background(), root, pkg, name, nil, nil)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// BuildOperatorWith builds cmd/operator with files added to its package
// main, as `go build -overlay` does: each key is a file name in
// cmd/operator (which must not exist), each value the path of its source.
// It is how a test builds a fault into the operator that no production
// build can contain; the binary is built for each call, not cached.
func BuildOperatorWith(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]map[string]string{"Replace": {}}
	for name, src := range files {
		if filepath.Base(name) != name {
			t.Fatalf("BuildOperatorWith: %q is not a file name", name)
		}
		target := filepath.Join(root, "cmd", "operator", name)
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("BuildOperatorWith: %s exists; an overlay adds files, it does not replace the operator's", target)
		}
		abs, err := filepath.Abs(src)
		if err != nil {
			t.Fatal(err)
		}
		overlay["Replace"][target] = abs
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(spec, data, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "operator")
	if err := goBuild("./cmd/operator", path, "-overlay="+spec); err != nil {
		t.Fatal(err)
	}
	return path
}

// goBuild builds package pkg of the module into the file path.
func goBuild(pkg, path string, flags ...string) error {
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", append(append([]string{"build", "-o", path}, flags...), pkg)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return nil
}

// ServiceAccountKubeconfig creates the ServiceAccount namespace/name if needed,
// requests a token for it and writes a kubeconfig that authenticates with it,
// so a process run with it has exactly the permissions RBAC grants that account.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, t testing.TB, namespace, name string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("creating service account %s/%s: %v", namespace, name, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	ca, err := os.ReadFile(c.CACertFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Token requests a short-lived token for an existing ServiceAccount.
func (c *Cluster) Token(ctx context.Context, t testing.TB, namespace, name string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// BindClusterRole grants ClusterRole role to the ServiceAccount namespace/sa,
// with a binding named after both (removed when the test ends).
func (c *Cluster) BindClusterRole(ctx context.Context, t testing.TB, role, namespace, sa string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + sa + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding %s to %s/%s: %v", role, namespace, sa, err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
}

// Operator is an operator process started by a test.
type Operator struct {
	proc *process
	// HealthAddr and MetricsAddr are host:port of its endpoints.
	HealthAddr, MetricsAddr string
	// WebhookURL is where its conversion webhook listens when enabled.
	WebhookURL string
	// Log is the path of its combined output.
	Log string
}

// StartOperator runs the operator binary with kubeconfig and args (later
// flags win), on free loopback ports for health, metrics and webhooks. It is stopped when the test
// ends; its log is printed if the test failed.
func StartOperator(t testing.TB, kubeconfig string, args ...string) *Operator {
	t.Helper()
	// kwok's pods run no reloader to read (test/realpods runs the operator
	// in the cluster, where it reads them).
	return StartOperatorBinary(t, OperatorBinary(t), kubeconfig, append([]string{"--read-pod-status=false"}, args...)...)
}

// StartOperatorBinary is StartOperator with another build of the operator,
// such as a previous release.
func StartOperatorBinary(t testing.TB, bin, kubeconfig string, args ...string) *Operator {
	t.Helper()
	return StartOperatorWith(t, OperatorProcess{Binary: bin}, kubeconfig, args...)
}

// OperatorProcess says which operator binary StartOperatorWith runs and
// with what environment beside the test's own.
type OperatorProcess struct {
	Binary string   // path of the operator binary; OperatorBinary's when empty
	Env    []string // KEY=value pairs added to the test process's environment
}

// StartOperatorWith is StartOperatorBinary with the process described by p
// (no flag is added beside the listeners' and the logging's: pass
// --read-pod-status=false where no reloader answers).
func StartOperatorWith(t testing.TB, p OperatorProcess, kubeconfig string, args ...string) *Operator {
	t.Helper()
	bin := p.Binary
	if bin == "" {
		bin = OperatorBinary(t)
	}
	ports := make([]int, 3)
	for i := range ports {
		port, err := tools.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = port
	}
	o := &Operator{
		HealthAddr:  fmt.Sprintf("127.0.0.1:%d", ports[0]),
		MetricsAddr: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		WebhookURL:  fmt.Sprintf("https://127.0.0.1:%d/convert", ports[2]),
	}
	all := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--health-probe-bind-address=" + o.HealthAddr,
		"--metrics-bind-address=" + o.MetricsAddr,
		fmt.Sprintf("--webhook-port=%d", ports[2]),
		"--webhook-cert-dir=" + t.TempDir(),
		"--log-level=debug",
		// The CRD is cluster-wide and tests share it: only a test about
		// conversion passes --conversion-webhook=true (and --namespace) to let
		// its operator take over the CRD's webhook settings.
		"--conversion-webhook=false",
		"--webhook-url=" + o.WebhookURL,
	}, args...)
	dir := t.TempDir()
	proc, err := startProcess(dir, "operator", bin, all, p.Env, false)
	if err != nil {
		t.Fatal(err)
	}
	o.proc, o.Log = proc, proc.logPath
	t.Cleanup(func() {
		o.Stop()
		if t.Failed() {
			data, _ := os.ReadFile(o.Log)
			t.Logf("operator log (%s):\n%s", strings.Join(all, " "), data)
		}
	})
	return o
}

// Stop sends SIGTERM and waits for a graceful exit (SIGKILL after 30s).
func (o *Operator) Stop() { o.proc.stop(30 * time.Second) }

// Kill ends the process at once with SIGKILL, as a crash or node loss would.
func (o *Operator) Kill() {
	_ = o.proc.cmd.Process.Kill()
	<-o.proc.exited
}

// Running is false once the process has exited.
func (o *Operator) Running() bool { return o.proc.running() }

// ExitCode is the process's exit status once it has exited (-1 when a
// signal ended it), and false while it runs.
func (o *Operator) ExitCode() (int, bool) {
	if o.proc.running() {
		return 0, false
	}
	if o.proc.cmd.ProcessState == nil {
		return -1, true
	}
	return o.proc.cmd.ProcessState.ExitCode(), true
}

// LogContains reports whether the operator's output has a line containing s.
func (o *Operator) LogContains(s string) bool {
	f, err := os.Open(o.Log)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return true
		}
	}
	return false
}

// WaitFor polls cond every 100ms until it is true or timeout passes: the
// tests' one wait, tools.WaitFor (tools.Poll, tools.Eventually), under the
// name the framework's users know.
func WaitFor(ctx context.Context, timeout time.Duration, cond func(context.Context) bool) bool {
	return tools.WaitFor(ctx, timeout, cond)
}

// WaitForEvery is WaitFor checking cond every interval.
func WaitForEvery(ctx context.Context, interval, timeout time.Duration, cond func(context.Context) bool) bool {
	return tools.WaitForEvery(ctx, interval, timeout, cond)
}

// Metric sums the samples of the operator's metric name whose labels include
// every pair of match. The operator must serve plain HTTP metrics
// (--metrics-secure=false).
func (o *Operator) Metric(ctx context.Context, name string, match map[string]string) (float64, error) {
	families, err := ScrapeMetrics(ctx, o.MetricsAddr)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, m := range families[name].GetMetric() {
		matches := true
		for k, v := range match {
			matches = matches && MetricLabel(m, k) == v
		}
		if matches {
			sum += MetricValue(m)
		}
	}
	return sum, nil
}

// ScrapeMetrics reads the Prometheus text exposition at http://addr/metrics.
func ScrapeMetrics(ctx context.Context, addr string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics of %s: %w", addr, err)
	}
	return families, nil
}

// MetricValue is a counter's, gauge's or untyped sample's value.
func MetricValue(m *dto.Metric) float64 {
	return m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
}

// MetricLabel is the value of m's label name, or "".
func MetricLabel(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
