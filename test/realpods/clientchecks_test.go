package realpods

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/clientchecks"
	"github.com/nginx-operator/nginx-operator/test/echo"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// An NginxOperator routes, speaks the protocols and guards the door as a
// client expects (every check of test/clientchecks, which the renderer's
// tests run on loopback too), seen through its Service from the node. The
// node reaches the pods from its own subnet, inside 10.0.0.0/8: the
// checks' trusted hop goes through "edge", which trusts that, and any other
// client through "strict", the same spec trusting 192.0.2.0/24 only. Beside
// them, what only pods show: nginx on the pod's IPv6 address where the
// Service is dual-stack ("dual"), and not where it is IPv4 only (strict).
func TestNginxOperatorRoutesSpeaksAndGuardsTheDoorAsClientsExpect(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	rn := realcluster.NodeOf(c)
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()

	opts := clientchecks.Options{
		HTTPPort: 8080, HTTPSPort: 8443, APIPort: 80, CanaryPort: 80, SecurePort: 443,
		SecureCAKind: "ConfigMap", TrustedProxies: []string{"10.0.0.0/8"}, ClientCIDR: "10.0.0.0/8",
		ShortReadTimeout: 5 * time.Second, LongReadTimeout: 60 * time.Second,
	}
	fixtures := clientchecks.NewFixtures(t)
	pool := createFixtures(ctx, t, cs, ns, fixtures)
	realcluster.RunTestServer(ctx, t, cs, ns, clientchecks.API, "")
	realcluster.RunTestServer(ctx, t, cs, ns, clientchecks.Canary, "")
	realcluster.RunTestServer(ctx, t, cs, ns, clientchecks.Secure, "secure-tls")

	strict := opts
	strict.TrustedProxies = []string{"192.0.2.0/24"}
	objs := applyObjects(ctx, t, c, ns, nginxOperator(t, "edge", clientchecks.Spec(opts)), nginxOperator(t, "strict", clientchecks.Spec(strict)))
	objs = append(objs, apply(ctx, t, c, ns, `
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: dual
spec:
  replicas: 1
  service:
    ipFamilyPolicy: RequireDualStack
  config:
    servers:
    - port: http
      locations:
      - {path: /api/, proxy: {service: api, port: 80}}
`)...)
	began := time.Now()
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	t.Logf("edge, strict and dual Available %s after they were applied", time.Since(began).Round(time.Millisecond))

	ips := map[clientchecks.Source]string{clientchecks.Trusted: clusterIP(ctx, t, cs, ns, "edge"), clientchecks.Untrusted: clusterIP(ctx, t, cs, ns, "strict")}
	hc := rn.HTTPClient()
	for _, ip := range ips {
		// Every backend answers through nginx before the checks begin.
		get(ctx, t, hc, "http://"+net.JoinHostPort(ip, "8080")+"/api/", want(http.StatusOK, "hello from "+clientchecks.API))
		get(ctx, t, hc, "http://"+net.JoinHostPort(ip, "8080")+"/secure/", want(http.StatusOK, "hello from "+clientchecks.Secure))
	}
	nodeAddress := nodeAddressSeenByPods(ctx, t, cs, ns, hc)
	clientchecks.Run(t, &clientchecks.Target{
		Options: opts, Fixtures: fixtures,
		Dial: func(ctx context.Context, from clientchecks.Source, port int32) (net.Conn, error) {
			return rn.DialContext(ctx, "tcp", net.JoinHostPort(ips[from], strconv.Itoa(int(port))))
		},
		Address:   map[clientchecks.Source]string{clientchecks.Trusted: nodeAddress, clientchecks.Untrusted: nodeAddress},
		TLS:       &tls.Config{RootCAs: pool},
		AccessLog: func(t *testing.T) []string { return nginxLogLines(ctx, t, cs, ns, "edge", "strict") },
		Workers: func(t *testing.T) int {
			pod, err := cs.CoreV1().Pods(ns).Get(ctx, "edge-0", metav1.GetOptions{})
			tools.Must(t, err)
			return nginxWorkers(t, string(pod.UID))
		},
	})

	// Loopback has no pod addresses: the renderer's tests check IPv6
	// listeners on ::1 instead.
	t.Run("IPv6 where the Service has it, and only there", func(t *testing.T) {
		ipv6WhereTheServiceHasIt(ctx, t, cs, ns, rn)
	})
}

// createFixtures creates what clientchecks.Spec references and the secure
// test server's certificate, and returns the pool that verifies
// clientchecks.ServingSecret's certificate.
func createFixtures(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, f *clientchecks.Fixtures) *x509.CertPool {
	t.Helper()
	pool, certPEM, keyPEM := framework.ServingCert(t, clientchecks.AppHost)
	tlsSecret(ctx, t, cs, ns, clientchecks.ServingSecret, certPEM, keyPEM)
	secureCA, err := tools.NewCA("secure Service CA", time.Hour)
	tools.Must(t, err)
	secureCert, secureKey, err := secureCA.Issue(tools.Server(clientchecks.Secure+"."+ns+".svc"), time.Hour)
	tools.Must(t, err)
	tlsSecret(ctx, t, cs, ns, "secure-tls", secureCert, secureKey)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: clientchecks.UsersSecret}, StringData: map[string]string{"auth": f.Htpasswd}},
		{ObjectMeta: metav1.ObjectMeta{Name: clientchecks.PartnersCA}, Data: map[string][]byte{"ca.crt": f.PartnersCA.CertPEM}},
	} {
		_, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
		tools.Must(t, err)
	}
	// A Service whose selector no pod has: nothing answers behind it.
	down := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: clientchecks.AuthDown},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": clientchecks.AuthDown}, Ports: []corev1.ServicePort{{Port: 81}}},
	}
	_, err = cs.CoreV1().Services(ns).Create(ctx, down, metav1.CreateOptions{})
	tools.Must(t, err)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: clientchecks.SiteConfigMap}, Data: f.Content},
		{ObjectMeta: metav1.ObjectMeta{Name: clientchecks.SecureCA}, Data: map[string]string{"ca.crt": string(secureCA.CertPEM)}},
	} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		tools.Must(t, err)
	}
	return pool
}

// nodeAddressSeenByPods is the address a pod sees the node's connections
// through a Service come from (kube-proxy masquerades them), as the API
// test server reports it.
func nodeAddressSeenByPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, hc *http.Client) string {
	t.Helper()
	_, body := get(ctx, t, hc, "http://"+net.JoinHostPort(clusterIP(ctx, t, cs, ns, clientchecks.API), "80")+"/", want(http.StatusOK))
	s, err := echo.Decode(body)
	if err != nil || s.Remote == "" {
		t.Fatalf("the test server's answer %q: %v", body, err)
	}
	t.Logf("pods see the node's connections come from %s", s.Remote)
	return s.Remote
}

// nginxLogLines are the lines the pods of instances logged.
func nginxLogLines(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, instances ...string) []string {
	var lines []string
	for _, instance := range instances {
		for _, logs := range containerLogs(ctx, t, cs, ns, labels.SelectorFromSet(layout.Selector(instance)).String()) {
			lines = append(lines, strings.Split(logs, "\n")...)
		}
	}
	return lines
}

// ipv6WhereTheServiceHasIt checks that dual's nginx serves on its pod's IPv6
// address and strict's (IPv4 only) does not listen there.
func ipv6WhereTheServiceHasIt(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, rn *node.Node) {
	for name, families := range map[string]string{"dual": "[IPv4 IPv6]", "strict": "[IPv4]"} {
		svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		tools.Must(t, err)
		if got := fmt.Sprint(svc.Spec.IPFamilies); got != families {
			t.Fatalf("Service %s has families %s, want %s", name, got, families)
		}
	}
	if podIPv6(ctx, t, cs, ns, "strict-0") == "" {
		tools.Missing(t, "the node's pods have no IPv6 address: this machine has no IPv6 (enable it: sysctl net.ipv6.conf.all.disable_ipv6=0)")
	}
	// The pod may still be starting: wait until it answers.
	v6 := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: rn.DialContext, DisableKeepAlives: true}}
	var dual string
	tools.Eventually(t, 90*time.Second, "dual serving on its pod's IPv6 address", func() error {
		dual = podIPv6(ctx, t, cs, ns, "dual-0")
		for _, url := range []string{"http://" + net.JoinHostPort(dual, "8080") + "/api/", "http://" + net.JoinHostPort(dual, "18080") + "/healthz"} {
			resp, err := v6.Get(url)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %s", url, resp.Status)
			}
		}
		return nil
	})
	// strict's Service is IPv4 only, so its nginx does not listen on IPv6
	// (it would not start in a pod without IPv6 otherwise): its pod's IPv6
	// address refuses the connection its IPv4 address takes.
	strict := podIPv6(ctx, t, cs, ns, "strict-0")
	_, err := rn.DialContext(ctx, "tcp", net.JoinHostPort(strict, "8080"))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("nginx of an IPv4-only Service on its pod's IPv6 address %s: %v, want connection refused", strict, err)
	}
	v4, err := cs.CoreV1().Pods(ns).Get(ctx, "strict-0", metav1.GetOptions{})
	tools.Must(t, err)
	get(ctx, t, v6, "http://"+net.JoinHostPort(v4.Status.PodIP, "8080")+"/api/", want(http.StatusOK, "hello from api"))
	t.Logf("dual served on [%s]:8080; strict refused [%s]:8080", dual, strict)
}

// podIPv6 is the IPv6 address of pod, or "" without one.
func podIPv6(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, pod string) string {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	tools.Must(t, err)
	for _, ip := range p.Status.PodIPs {
		if strings.Contains(ip.IP, ":") {
			return ip.IP
		}
	}
	return ""
}

// nginxWorkers counts, in the host's /proc, the nginx worker processes of
// the pod with uid: the node's kubelet puts each pod in a cgroup named after
// its uid (cgroupfs driver).
func nginxWorkers(t *testing.T, uid string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	tools.Must(t, err)
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("nginx: worker process")) {
			continue
		}
		if cgroup, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup")); err == nil && bytes.Contains(cgroup, []byte("pod"+uid)) {
			n++
		}
	}
	return n
}
