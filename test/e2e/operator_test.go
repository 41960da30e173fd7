package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// httpStatus GETs url with an optional bearer token and returns the status code
// and body; 0 when nothing answered.
func httpStatus(ctx context.Context, url, token string) (int, string) {
	client := &http.Client{
		Timeout: 5 * time.Second,
		// The operator serves metrics with a self-signed certificate by default.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestReadyzTurnsReadyOnlyAfterInformersSync(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, cs := newNamespace(t)

	// The operator's account may list NginxOperator and NginxMonitor but not
	// NginxBackup: that informer cannot sync, so the operator must not be ready.
	partial := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-partial"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"nginx.operator.dev"}, Resources: []string{"nginxoperators", "nginxmonitors"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, partial, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), partial.Name, metav1.DeleteOptions{})
	})
	kc := cluster.ServiceAccountKubeconfig(ctx, t, ns, "nginx-operator")
	cluster.BindClusterRole(ctx, t, partial.Name, ns, "nginx-operator")

	op := framework.StartOperator(t, kc, "--metrics-bind-address=0")
	readyz := "http://" + op.HealthAddr + "/readyz"
	healthz := "http://" + op.HealthAddr + "/healthz"
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { code, _ := httpStatus(ctx, healthz, ""); return code == http.StatusOK }) {
		t.Fatal("/healthz never answered 200")
	}
	// Not ready, and it stays so while NginxBackup cannot be listed: a
	// window of five seconds in which nothing may change.
	for range 5 {
		if code, body := httpStatus(ctx, readyz, ""); code != http.StatusInternalServerError {
			t.Fatalf("/readyz = %d %q while an informer cannot sync; want 500", code, body)
		}
		time.Sleep(time.Second)
	}

	cluster.BindClusterRole(ctx, t, "nginx-operator", ns, "nginx-operator")
	start := time.Now()
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool { code, _ := httpStatus(ctx, readyz, ""); return code == http.StatusOK }) {
		t.Fatal("/readyz did not turn ready after the missing permission was granted")
	}
	t.Logf("ready %.1fs after the informer could list (client-go retries with backoff)", time.Since(start).Seconds())
	if !op.LogContains(`kind=NginxBackup`) {
		t.Error("the operator did not log the NginxBackup informer's sync")
	}
}

func TestMetricsEndpointRefusesUnauthenticatedAndUnauthorizedScrapes(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)
	op := framework.StartOperator(t, operatorKubeconfig(ctx, t))
	url := "https://" + op.MetricsAddr + "/metrics"

	// A scraper allowed by the shipped metrics-reader role, and an account without it.
	cluster.ServiceAccountKubeconfig(ctx, t, ns, "prometheus")
	cluster.BindClusterRole(ctx, t, "nginx-operator-metrics-reader", ns, "prometheus")
	cluster.ServiceAccountKubeconfig(ctx, t, ns, "nobody")
	allowed := cluster.Token(ctx, t, ns, "prometheus")
	denied := cluster.Token(ctx, t, ns, "nobody")

	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { code, _ := httpStatus(ctx, url, ""); return code != 0 }) {
		t.Fatal("the metrics endpoint never answered")
	}
	if code, body := httpStatus(ctx, url, ""); code != http.StatusUnauthorized {
		t.Errorf("anonymous scrape = %d %q, want 401", code, body)
	}
	// A token the apiserver rejects: controller-runtime's filter answers 500
	// when the TokenReview itself errors, 401 when it says "not authenticated".
	if code, body := httpStatus(ctx, url, "not-a-token"); code != http.StatusUnauthorized && code != http.StatusInternalServerError {
		t.Errorf("scrape with a forged token = %d %q, want it refused (401 or 500)", code, body)
	}
	if code, body := httpStatus(ctx, url, denied); code != http.StatusForbidden {
		t.Errorf("scrape by an account without the metrics-reader role = %d %q, want 403", code, body)
	}
	code, body := httpStatus(ctx, url, allowed)
	if code != http.StatusOK {
		t.Fatalf("authorized scrape = %d %q, want 200", code, body)
	}
	mustContain(t, "authorized scrape", body, "nginx_operator_build_info{", "controller_runtime_", "rest_client_requests_total")
}

// leaders returns the indexes of the running operators that logged that they
// acquired the lease.
func leaders(ops []*framework.Operator) []int {
	var out []int
	for i, op := range ops {
		if op.Running() && op.LogContains("acquired lease") {
			out = append(out, i)
		}
	}
	return out
}

func TestLeaderElectionHandsOverWhenTheLeaderDiesOrStops(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)
	kc := operatorKubeconfig(ctx, t)
	// Short lease timings keep the test quick; the failover time scales with them.
	const lease = 4 * time.Second
	args := []string{
		"--leader-elect", "--leader-election-namespace=" + ns, "--metrics-bind-address=0",
		fmt.Sprintf("--leader-elect-lease-duration=%s", lease), "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms",
	}
	ops := []*framework.Operator{framework.StartOperator(t, kc, args...), framework.StartOperator(t, kc, args...)}

	if !framework.WaitFor(ctx, 60*time.Second, func(context.Context) bool { return len(leaders(ops)) > 0 }) {
		t.Fatal("no operator became leader")
	}
	// A window in which nothing may happen: several retry periods in which
	// the other candidate could (wrongly) lead as well.
	time.Sleep(3 * time.Second)
	if l := leaders(ops); len(l) != 1 {
		t.Fatalf("leaders = %v, want exactly one", l)
	}
	first := leaders(ops)[0]
	standby := 1 - first

	// Crash: SIGKILL leaves the lease held until it expires.
	killed := time.Now()
	ops[first].Kill()
	if !framework.WaitFor(ctx, 60*time.Second, func(context.Context) bool { return ops[standby].LogContains("acquired lease") }) {
		t.Fatal("the standby did not take over after the leader was killed")
	}
	crashFailover := time.Since(killed)

	// Graceful stop: the leader releases the lease on SIGTERM, so a new
	// candidate takes over within about one retry period.
	ops = append(ops, framework.StartOperator(t, kc, args...))
	third := len(ops) - 1
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool { return ops[third].LogContains("Attempting to acquire leader lease") }) {
		t.Fatal("the new candidate never tried to acquire the lease")
	}
	stopped := time.Now()
	ops[standby].Stop()
	if !framework.WaitFor(ctx, 60*time.Second, func(context.Context) bool { return ops[third].LogContains("acquired lease") }) {
		t.Fatal("the new candidate did not take over after the leader stopped gracefully")
	}
	gracefulFailover := time.Since(stopped)
	if l := leaders(ops); len(l) != 1 || l[0] != third {
		t.Errorf("leaders after handover = %v, want only %d", l, third)
	}
	fmt.Printf("leader election failover (lease %s, renew 3s, retry 500ms): after SIGKILL %.2fs, after SIGTERM %.2fs\n",
		lease, crashFailover.Seconds(), gracefulFailover.Seconds())
}

func TestNamespacesFlagLimitsWatchesToThoseNamespaces(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, cs := newNamespace(t)

	// The operator's account holds the operator role in ns only (a RoleBinding,
	// not a ClusterRoleBinding): a cluster-wide watch would be forbidden and the
	// operator would never become ready.
	kc := cluster.ServiceAccountKubeconfig(ctx, t, ns, "nginx-operator")
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-operator", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "nginx-operator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "nginx-operator"}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scoped := framework.StartOperator(t, kc, "--namespaces="+ns, "--metrics-bind-address=0")
	unscoped := framework.StartOperator(t, kc, "--metrics-bind-address=0")

	ready := func(op *framework.Operator) func(context.Context) bool {
		return func(ctx context.Context) bool {
			code, _ := httpStatus(ctx, "http://"+op.HealthAddr+"/readyz", "")
			return code == http.StatusOK
		}
	}
	if !framework.WaitFor(ctx, 60*time.Second, ready(scoped)) {
		t.Fatal("the operator restricted to its namespace did not become ready with namespace-scoped RBAC")
	}
	// The control: without --namespaces the same account cannot watch cluster-wide.
	if framework.WaitFor(ctx, 5*time.Second, ready(unscoped)) {
		t.Fatal("an operator watching all namespaces became ready with namespace-scoped RBAC; the test proves nothing")
	}
}
