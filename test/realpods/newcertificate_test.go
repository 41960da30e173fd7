package realpods

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A server added with a certificate Secret and a basic-auth Secret the
// instance never named before, on its one replica, while clients connect
// without pause over HTTPS and HTTP through its Service: no request fails,
// no pod is replaced (the pod template does not change: the operator
// copies the new files into the instance's files Secret, which the pod
// already mounts), the instance is never Degraded (its pod waits for the
// files the new configuration names rather than refuse it), and the new
// host is served with its own certificate within seconds.
func TestANewServersCertificateIsServedWithinSecondsWithoutReplacingAPod(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	const oldHost, newHost = "old.realpods.test", "new.realpods.test"
	oldPool, oldCert, oldKey := framework.ServingCert(t, oldHost)
	newPool, newCert, newKey := framework.ServingCert(t, newHost)
	tlsSecret(ctx, t, cs, ns, "old-tls", oldCert, oldKey)

	server := func(host, secret, auth string) string {
		s := `
    - port: https
      serverNames: [` + host + `]
      tls:
        secretName: ` + secret
		if auth != "" {
			s += `
      basicAuth:
        secretName: ` + auth
		}
		return s + `
      locations:
      - path: /
        static: {}`
	}
	manifest := func(servers string) string {
		return `
apiVersion: v1
kind: ConfigMap
metadata:
  name: site
data:
  index.html: "hello\n"
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: web
spec:
  replicas: 1
  ports:
  - name: http
    containerPort: 8080
  - name: https
    containerPort: 8443
  content:
    configMaps:
    - name: site
  config:
    servers:
    - port: http
      defaultServer: true
      locations:
      - path: /
        static: {}` + servers + "\n"
	}
	objs := apply(ctx, t, c, ns, manifest(server(oldHost, "old-tls", "")))
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)

	ip := clusterIP(ctx, t, cs, ns, "web")
	httpsClient := func(host string, pool *x509.CertPool) func() *http.Client {
		return func() *http.Client {
			return &http.Client{Timeout: loadTimeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true,
				TLSClientConfig: &tls.Config{ServerName: host, RootCAs: pool}}}
		}
	}
	httpClient := func() *http.Client {
		return &http.Client{Timeout: loadTimeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	}
	hello := bodyIs("hello\n")
	https := startSteadyLoad(ctx, t, httpsClient(oldHost, oldPool), oldHost, "https://"+net.JoinHostPort(ip, "443")+"/", 2, hello)
	plain := startSteadyLoad(ctx, t, httpClient, "", "http://"+net.JoinHostPort(ip, "80")+"/", 2, hello)
	before := podUIDsOf(ctx, t, cs, ns, "web")
	sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, layout.NamesFor("web").StatefulSet, metav1.GetOptions{})
	tools.Must(t, err)
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	degraded := watchDegraded(ctx, cl, key)

	// The new Secrets, then the server that names them.
	tlsSecret(ctx, t, cs, ns, "new-tls", newCert, newKey)
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "users"},
		Data: map[string][]byte{"auth": []byte(tools.Htpasswd("user", "password"))}}, metav1.CreateOptions{})
	tools.Must(t, err)
	time.Sleep(time.Second) // the load goes on alone for a while
	var inst v1beta1.NginxOperator
	tools.Must(t, cl.Get(ctx, key, &inst))
	began := time.Now()
	apply(ctx, t, c, ns, manifest(server(oldHost, "old-tls", "")+server(newHost, "new-tls", "users")))
	newURL := "https://" + net.JoinHostPort(ip, "443") + "/"
	var served time.Duration
	tools.Eventually(t, time.Minute, "the new host served with its certificate and its users", func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, newURL, nil)
		req.Host = newHost
		req.SetBasicAuth("user", "password")
		resp, err := httpsClient(newHost, newPool)().Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "hello\n" {
			return fmt.Errorf("%s %q", resp.Status, body)
		}
		if err := presents(resp, newCert); err != nil {
			return err
		}
		served = time.Since(began)
		return nil
	})
	// For about 100 ms after its new workers start, nginx's old ones take
	// new connections too (pkg/reloader, workers.go): the first answer of
	// the new host says it is served, and only the instance's status says
	// that every new connection gets it.
	waitConfigLoaded(ctx, t, cl, key, inst.Status.ConfigHash)
	// Its basic auth is the new Secret's: without the user, 401.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, newURL, nil)
	req.Host = newHost
	if resp, err := httpsClient(newHost, newPool)().Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the new host without credentials: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	time.Sleep(3 * time.Second) // the load goes on after the change
	httpsGot, plainGot := https.stop(), plain.stop()
	degradedWhen := degraded()

	t.Logf("the new host served with its certificate %s after its server was applied; meanwhile %d HTTPS requests (%d failed) and %d HTTP requests (%d failed), each on a new connection",
		served.Round(time.Millisecond), httpsGot.total, httpsGot.failed, plainGot.total, plainGot.failed)
	for what, got := range map[string]steadyResult{"HTTPS": httpsGot, "HTTP": plainGot} {
		if got.total == 0 {
			t.Errorf("no %s request was sent", what)
		}
		for _, f := range got.failures[:min(5, len(got.failures))] {
			t.Errorf("an %s request failed while the new server came: %s", what, f)
		}
	}
	if after := podUIDsOf(ctx, t, cs, ns, "web"); !maps.Equal(before, after) {
		t.Errorf("the instance's pods were replaced: %v, then %v", before, after)
	}
	stsAfter, err := cs.AppsV1().StatefulSets(ns).Get(ctx, sts.Name, metav1.GetOptions{})
	tools.Must(t, err)
	if stsAfter.Generation != sts.Generation {
		t.Errorf("the StatefulSet went from generation %d to %d: its pod template changed", sts.Generation, stsAfter.Generation)
	}
	if degradedWhen != "" {
		t.Errorf("the instance was Degraded while the new server came: %s", degradedWhen)
	}
	selector := labels.SelectorFromSet(layout.Selector("web")).String()
	for pod, st := range reloaderStatuses(ctx, t, cs, dial, ns, selector) {
		if st.Failures != 0 || st.WaitingHash != "" {
			t.Errorf("pod %s's reloader refused a configuration, or waits still: %+v", pod, st)
		}
	}
}

// An instance that named no file before (its files volume has none of
// its Secrets yet) gets a TLS server on a port it has: the files Secret
// appears, the running pod's volume shows it, and the new server is served
// within seconds while plain HTTP clients lose no request and the pod
// stays.
func TestTheFirstCertificateOfAnInstanceIsServedWithoutReplacingAPod(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	const host = "first.realpods.test"
	pool, certPEM, keyPEM := framework.ServingCert(t, host)
	spec := func(tlsServer bool) *unstructured.Unstructured {
		servers := []v1beta1.Server{{Port: "http", DefaultServer: true, Locations: []v1beta1.Location{{Path: "/", Respond: &v1beta1.RespondLocation{Status: 200, Body: "hello"}}}}}
		if tlsServer {
			servers = append(servers, v1beta1.Server{Port: "https", ServerNames: []string{host}, TLS: &v1beta1.TLS{SecretName: "first-tls"},
				Locations: []v1beta1.Location{{Path: "/", Respond: &v1beta1.RespondLocation{Status: 200, Body: "hello"}}}})
		}
		return nginxOperator(t, "web", v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](1),
			Ports:  []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
			Config: v1beta1.NginxConfig{Servers: servers}})
	}
	objs := applyObjects(ctx, t, c, ns, spec(false))
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	ip := clusterIP(ctx, t, cs, ns, "web")
	plain := startSteadyLoad(ctx, t, func() *http.Client {
		return &http.Client{Timeout: loadTimeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	}, "", "http://"+net.JoinHostPort(ip, "80")+"/", 2, bodyIs("hello"))
	before := podUIDsOf(ctx, t, cs, ns, "web")

	tlsSecret(ctx, t, cs, ns, "first-tls", certPEM, keyPEM)
	began := time.Now()
	applyObjects(ctx, t, c, ns, spec(true))
	var served time.Duration
	tools.Eventually(t, time.Minute, "the first TLS server served with its certificate", func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+net.JoinHostPort(ip, "443")+"/", nil)
		req.Host = host
		resp, err := (&http.Client{Timeout: loadTimeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{ServerName: host, RootCAs: pool}}}).Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := bodyIs("hello")(resp, body); err != nil {
			return err
		}
		if err := presents(resp, certPEM); err != nil {
			return err
		}
		served = time.Since(began)
		return nil
	})
	time.Sleep(2 * time.Second) // the load goes on after the change
	got := plain.stop()
	t.Logf("the first TLS server served %s after it was applied; meanwhile %d HTTP requests on new connections, %d failed",
		served.Round(time.Millisecond), got.total, got.failed)
	if got.total == 0 {
		t.Fatal("no request was sent")
	}
	for _, f := range got.failures[:min(5, len(got.failures))] {
		t.Errorf("an HTTP request failed while the first TLS server came: %s", f)
	}
	if after := podUIDsOf(ctx, t, cs, ns, "web"); !maps.Equal(before, after) {
		t.Errorf("the instance's pods were replaced: %v, then %v", before, after)
	}
}

// A Gateway's HTTPS listener added with a certificate Secret that does not
// exist yet is not served (ResolvedRefs False) and, once the Secret is
// created, is served with it within seconds, while clients of the
// Gateway's first listener connect without pause through its Service: no
// request fails and no pod of the Gateway's instance is replaced.
func TestAGatewayListenerWhoseSecretAppearsLaterIsServedWithoutReplacingAPod(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	realcluster.RunTestServer(ctx, t, cs, ns, "api", "")
	const oldHost, newHost = "old.gateway.test", "new.gateway.test"
	oldPool, oldCert, oldKey := framework.ServingCert(t, oldHost)
	newPool, newCert, newKey := framework.ServingCert(t, newHost)
	tlsSecret(ctx, t, cs, ns, "old-tls", oldCert, oldKey)

	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	tools.Must(t, cl.Create(ctx, class))
	t.Cleanup(func() { _ = cl.Delete(context.Background(), class) })
	listener := func(name, host, secret string) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host)),
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(secret)}}}}
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{listener("old", oldHost, "old-tls")},
	}}
	tools.Must(t, cl.Create(ctx, gw))
	tools.Must(t, cl.Create(ctx, httpRoute(ns, "api", "/", "api", false)))
	waitProgrammed(ctx, t, cl, gw)

	instance := graph.InstanceName("web")
	url := "https://" + net.JoinHostPort(clusterIP(ctx, t, cs, ns, instance), "443") + "/"
	httpsClient := func(host string, pool *x509.CertPool) func() *http.Client {
		return func() *http.Client {
			return &http.Client{Timeout: loadTimeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true,
				TLSClientConfig: &tls.Config{ServerName: host, RootCAs: pool}}}
		}
	}
	fromAPI := bodyHasPrefix("hello from api")
	load := startSteadyLoad(ctx, t, httpsClient(oldHost, oldPool), oldHost, url, 4, fromAPI)
	before := podUIDsOf(ctx, t, cs, ns, instance)

	framework.Update(ctx, t, cl, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, func(g *gatewayv1.Gateway) {
		g.Spec.Listeners = append(g.Spec.Listeners, listener("new", newHost, "new-tls"))
	})
	tools.Eventually(t, time.Minute, "the new listener told its Secret is missing", func() error {
		var got gatewayv1.Gateway
		if err := cl.Get(ctx, client.ObjectKeyFromObject(gw), &got); err != nil {
			return err
		}
		for _, l := range got.Status.Listeners {
			if c := meta.FindStatusCondition(l.Conditions, string(gatewayv1.ListenerConditionResolvedRefs)); l.Name == "new" && c != nil && c.Status == metav1.ConditionFalse {
				return nil
			}
		}
		return fmt.Errorf("listeners %+v", got.Status.Listeners)
	})
	time.Sleep(time.Second) // the load goes on alone for a while
	tlsSecret(ctx, t, cs, ns, "new-tls", newCert, newKey)
	began := time.Now()
	var served time.Duration
	tools.Eventually(t, time.Minute, "the new listener served with its certificate", func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Host = newHost
		resp, err := httpsClient(newHost, newPool)().Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := fromAPI(resp, body); err != nil {
			return err
		}
		if err := presents(resp, newCert); err != nil {
			return err
		}
		served = time.Since(began)
		return nil
	})
	time.Sleep(3 * time.Second) // the load goes on after the change
	got := load.stop()

	t.Logf("the new listener served with its certificate %s after its Secret was created; meanwhile %d HTTPS requests on new connections, %d failed",
		served.Round(time.Millisecond), got.total, got.failed)
	if got.total == 0 {
		t.Fatal("no request was sent")
	}
	for _, f := range got.failures[:min(5, len(got.failures))] {
		t.Errorf("an HTTPS request failed while the new listener came: %s", f)
	}
	if after := podUIDsOf(ctx, t, cs, ns, instance); !maps.Equal(before, after) {
		t.Errorf("the instance's pods were replaced: %v, then %v", before, after)
	}
}

// loadTimeout is how long a client of a steady load waits for an answer:
// on 2 cores shared with the rest of make test an answer can take seconds;
// a refused or reset connection, or an error status, is what a restart
// causes.
const loadTimeout = 20 * time.Second

// steadyLoad is clients sending requests one after the other each, about
// 50 a second each, every one on a new connection (so each is routed by
// kube-proxy's rules and handshakes anew), and checking every answer.
type steadyLoad struct {
	mu     sync.Mutex
	result steadyResult
	halt   chan struct{}
	wg     sync.WaitGroup
}

// steadyResult counts a steady load's requests and those that failed,
// and says how the first 19 and the last of those did.
type steadyResult struct {
	total, failed int
	failures      []string
}

// startSteadyLoad waits until url answers as check wants 20 times in a row
// (a Service answers once kube-proxy has programmed it), then starts
// clients of newClient, which send host as the Host header ("": url's).
func startSteadyLoad(ctx context.Context, t *testing.T, newClient func() *http.Client, host, url string, clients int, check func(*http.Response, []byte) error) *steadyLoad {
	t.Helper()
	get := func(hc *http.Client) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if host != "" {
			req.Host = host
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		return check(resp, body)
	}
	inARow := 0
	tools.Eventually(t, time.Minute, url+" answering 20 times in a row", func() error {
		if err := get(newClient()); err != nil {
			inARow = 0
			return err
		}
		if inARow++; inARow < 20 {
			return fmt.Errorf("%d in a row", inARow)
		}
		return nil
	})
	l := &steadyLoad{halt: make(chan struct{})}
	for range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			hc := newClient()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-l.halt:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				at := time.Now()
				err := get(hc)
				l.mu.Lock()
				l.result.total++
				if err != nil {
					l.result.failed++
				}
				if err != nil && len(l.result.failures) < 20 {
					l.result.failures = append(l.result.failures, fmt.Sprintf("%s..%s: %v", at.Format("15:04:05.000"), time.Now().Format("15:04:05.000"), err))
				} else if err != nil {
					l.result.failures = append(l.result.failures[:19], fmt.Sprintf("the last at %s: %v", at.Format("15:04:05.000"), err))
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// stop ends the load and returns what it counted.
func (l *steadyLoad) stop() steadyResult {
	close(l.halt)
	l.wg.Wait()
	return l.result
}

// bodyIs checks for a 200 with body want.
func bodyIs(want string) func(*http.Response, []byte) error {
	return func(resp *http.Response, body []byte) error {
		if resp.StatusCode != http.StatusOK || string(body) != want {
			return fmt.Errorf("%s %.80q", resp.Status, body)
		}
		return nil
	}
}

// bodyHasPrefix checks for a 200 whose body begins with prefix.
func bodyHasPrefix(prefix string) func(*http.Response, []byte) error {
	return func(resp *http.Response, body []byte) error {
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), prefix) {
			return fmt.Errorf("%s %.80q", resp.Status, body)
		}
		return nil
	}
}

// presents checks that the server of resp presented the certificate of
// certPEM.
func presents(resp *http.Response, certPEM []byte) error {
	block, _ := pem.Decode(certPEM)
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 || !bytes.Equal(resp.TLS.PeerCertificates[0].Raw, block.Bytes) {
		return fmt.Errorf("the server presented another certificate")
	}
	return nil
}

// podUIDsOf are the UIDs of the pods of instance, by name.
func podUIDsOf(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, instance string) map[string]string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(layout.Selector(instance)).String()})
	tools.Must(t, err)
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = string(p.UID)
	}
	return out
}

// watchDegraded reads the instance's Degraded condition every 200 ms
// until the returned function is called, which says when and why it was
// True, "" when it never was.
func watchDegraded(ctx context.Context, cl client.Client, key client.ObjectKey) func() string {
	var (
		mu   sync.Mutex
		seen string
	)
	halt, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-halt:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var n v1beta1.NginxOperator
			if cl.Get(ctx, key, &n) != nil {
				continue
			}
			if c := meta.FindStatusCondition(n.Status.Conditions, v1beta1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
				mu.Lock()
				if seen == "" {
					seen = time.Now().Format("15:04:05.000") + ": " + c.Reason + ": " + c.Message
				}
				mu.Unlock()
			}
		}
	}()
	return func() string {
		close(halt)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}
