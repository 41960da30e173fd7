package realpods

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// streamsSpec is an instance of two pods relaying to the stream test
// servers "db" (realcluster.RunStreamServers): TCP on "echo", DNS over UDP
// on "dns" (Service port 53, one answer per query), and, on "https", the
// TLS name db.example.com passed through to the servers' own certificate
// while www.example.com is an HTTPS server of nginx's, with the
// certificate of the Secret www-tls, answering "www".
func streamsSpec() v1beta1.NginxOperatorSpec {
	backend := func(port int32) []v1beta1.Backend { return []v1beta1.Backend{{Service: "db", Port: port}} }
	return v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](2),
		Ports: []v1beta1.Port{
			{Name: "echo", ContainerPort: 7000},
			{Name: "dns", ContainerPort: 5353, ServicePort: 53, Protocol: corev1.ProtocolUDP},
			{Name: "https", ContainerPort: 8443},
		},
		Config: v1beta1.NginxConfig{
			Servers: []v1beta1.Server{{Port: "https", ServerNames: []string{"www.example.com"}, TLS: &v1beta1.TLS{SecretName: "www-tls"},
				Locations: []v1beta1.Location{{Path: "/", Respond: &v1beta1.RespondLocation{Status: http.StatusOK, Body: "www"}}}}},
			Streams: []v1beta1.Stream{
				{Port: "echo", Backends: backend(realcluster.StreamEchoPort)},
				{Port: "dns", Backends: backend(realcluster.StreamDNSPort), ExpectedResponses: ptr.To[int32](1)},
				{Port: "https", ServerNames: []string{"db.example.com"}, Backends: backend(realcluster.StreamTLSPort)},
			},
		},
	}
}

// Streams as their clients see them through the instance's Service, to a
// Service of three pods that each greet with their name: 30 TCP
// connections and 30 DNS queries over UDP (each a new client socket, and
// each answered by one datagram, which ends nginx's session) reach every
// pod; the UDP backend is reported as such in status.upstreams; on one
// port, the name db.example.com reaches a pod's own certificate (another
// CA's) and greeting, while www.example.com gets nginx's certificate and
// its HTTPS server's answer.
func TestStreamsRelayTCPAndUDPToEveryPodAndPassTLSThroughByName(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	backendCA, nginxCA := newTestCA(t, "backend CA"), newTestCA(t, "nginx CA")
	issueSecret(ctx, t, cs, ns, backendCA, "db-tls", "db.example.com")
	issueSecret(ctx, t, cs, ns, nginxCA, "www-tls", "www.example.com")
	realcluster.RunStreamServers(ctx, t, cs, ns, "db", 3, "db-tls", nil)
	objs := applyObjects(ctx, t, c, ns, nginxOperator(t, "relay", streamsSpec()))
	framework.WaitReady(ctx, t, cl, 3*time.Minute, objs...)
	inst := waitStreamEndpoints(ctx, t, cl, ns, "relay", 3, 3)
	for _, u := range inst.Status.Upstreams {
		if udp := u.Port == realcluster.StreamDNSPort; udp != (u.Protocol == corev1.ProtocolUDP) {
			t.Errorf("status.upstreams: %+v, want protocol UDP on port %d alone", u, realcluster.StreamDNSPort)
		}
	}
	pods := podNames(ctx, t, cs, ns, "app=db")
	key := client.ObjectKey{Namespace: ns, Name: "relay"}

	t.Run("TCP connections reach every pod", func(t *testing.T) {
		addr := framework.ServiceAddr(ctx, t, cs, key, "echo")
		sent := 0
		spread(t, "TCP connections", pods, addr, func() (string, error) {
			sent++
			return echoOnce(ctx, dial, addr, fmt.Sprintf("line %d", sent))
		})
	})
	t.Run("DNS queries over UDP reach every pod", func(t *testing.T) {
		addr := framework.ServiceAddr(ctx, t, cs, key, "dns")
		reportReloads(ctx, t, cs, dial, ns, "relay")
		queries := 0
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if network != "udp" {
				return nil, fmt.Errorf("the resolver asks over %s, not UDP", network)
			}
			queries++
			return dial(ctx, "udp", addr)
		}}
		spread(t, "DNS queries", pods, addr, func() (string, error) {
			// The resolver queries again when a query goes unanswered:
			// one query per lookup says every datagram was answered.
			before := queries
			pod, err := txtOf(ctx, r)
			if err == nil && queries-before != 1 {
				err = fmt.Errorf("answered after %d queries", queries-before)
			}
			return pod, err
		})
	})
	t.Run("one port passes db.example.com through and terminates www.example.com", func(t *testing.T) {
		passThroughAndTerminate(ctx, t, dial, framework.ServiceAddr(ctx, t, cs, key, "https"), backendCA, nginxCA)
	})
}

// reportReloads has a failing t say which pods of the instance name
// reloaded nginx since the call, and which UDP sessions their nginx ended
// without an answer: a reload retires the workers, and a retiring worker
// ends each of its UDP sessions at its next event, dropping the answer that
// comes back for a datagram in flight ("disconnected on shutdown", logged
// at info level only; the access log shows the session with 0 bytes sent).
// The client then hears nothing until its own retry.
func reportReloads(ctx context.Context, t *testing.T, cs kubernetes.Interface, dial dialer, ns, name string) {
	t.Helper()
	selector := labels.SelectorFromSet(layout.Selector(name)).String()
	before := reloaderStatuses(ctx, t, cs, dial, ns, selector)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for pod, st := range reloaderStatuses(ctx, t, cs, dial, ns, selector) {
			if was := before[pod]; st.Reloads != was.Reloads || st.Hash != was.Hash {
				t.Logf("pod %s reloaded nginx %d times meanwhile (configuration %s, then %s)", pod, st.Reloads-was.Reloads, was.Hash, st.Hash)
			}
		}
		for container, logs := range containerLogs(ctx, t, cs, ns, selector) {
			for _, line := range strings.Split(logs, "\n") {
				if strings.Contains(line, " UDP 200 0 ") {
					t.Logf("%s: a UDP session ended without an answer: %s", container, line)
				}
			}
		}
	})
}

// spread waits until ask is answered through addr (kube-proxy programs a
// new Service a moment after it exists), then asks 30 times, each of which
// must be answered, and fails t unless every one of pods answered.
func spread(t *testing.T, what string, pods []string, addr string, ask func() (string, error)) {
	t.Helper()
	tools.Eventually(t, 30*time.Second, what+" to "+addr+" answered", func() error {
		_, err := ask()
		return err
	})
	counts := map[string]int{}
	for i := range 30 {
		pod, err := ask()
		if err != nil {
			t.Fatalf("%s to %s, %d of 30: %v", what, addr, i+1, err)
		}
		counts[pod]++
	}
	t.Logf("30 %s through the instance's Service (%s), by the pod that answered: %v", what, addr, counts)
	for _, pod := range pods {
		if counts[pod] == 0 {
			t.Errorf("pod %s answered none of 30 %s (answers %v)", pod, what, counts)
		}
	}
}

// passThroughAndTerminate checks the shared port at addr: db.example.com
// gets a backend pod's own certificate, which only the backend's CA
// verifies, and its greeting; www.example.com gets the certificate of
// nginx's Secret, which only nginx's CA verifies, and its server's answer.
func passThroughAndTerminate(ctx context.Context, t *testing.T, dial dialer, addr string, backendCA, nginxCA *tools.CA) {
	var pod, issuer string
	tools.Eventually(t, 30*time.Second, "db.example.com passed through", func() error {
		conn, err := dialTLS(ctx, dial, addr, &tls.Config{ServerName: "db.example.com", RootCAs: backendCA.Pool()})
		if err != nil {
			return err
		}
		defer conn.Close()
		issuer = conn.ConnectionState().PeerCertificates[0].Issuer.CommonName
		var r *bufio.Reader
		if r, pod, err = greeting(conn); err != nil {
			return err
		}
		return echoLine(conn, r, "passed through")
	})
	t.Logf("%s, db.example.com: a certificate issued by %q, greeted by %s", addr, issuer, pod)
	if issuer != "backend CA" || !strings.HasPrefix(pod, "db-") {
		t.Errorf("db.example.com: certificate of %q, greeting of %q; want the backend CA's and a db pod's", issuer, pod)
	}

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{ServerName: "www.example.com", RootCAs: nginxCA.Pool()}}}
	resp, body := get(ctx, t, hc, "https://"+addr+"/", want(http.StatusOK, "www"))
	if resp == nil || resp.TLS == nil {
		t.Fatal("www.example.com: no HTTPS answer")
	}
	if got := resp.TLS.PeerCertificates[0].Issuer.CommonName; got != "nginx CA" || body != "www" {
		t.Errorf("www.example.com: certificate issued by %q, body %q; want nginx CA's and the server's answer", got, body)
	}
	t.Logf("%s, www.example.com: a certificate issued by %q, %s %q", addr, resp.TLS.PeerCertificates[0].Issuer.CommonName, resp.Status, body)
}

// An open TCP connection through a stream keeps relaying, both ways, after
// every pod has loaded a configuration change that has nothing to do with
// it (the answer of an HTTP server of another port): nginx's reload leaves
// the connection to the workers of the old configuration, which keep it
// until it closes or worker_shutdown_timeout passes (the pods' grace
// period less 7 s: 68 s at the default 75 s). The test exchanges its lines
// within a few seconds of the reload, well inside that.
func TestAnOpenStreamConnectionOutlivesAnUnrelatedConfigurationChange(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	realcluster.RunStreamServers(ctx, t, cs, ns, "db", 1, "", nil)
	respond := func(body string) []v1beta1.Location {
		return []v1beta1.Location{{Path: "/", Respond: &v1beta1.RespondLocation{Status: http.StatusOK, Body: body}}}
	}
	objs := applyObjects(ctx, t, c, ns, nginxOperator(t, "relay", v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](2),
		Ports:    []v1beta1.Port{{Name: "echo", ContainerPort: 7000}, {Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{
			Servers: []v1beta1.Server{{Port: "http", Locations: respond("v1")}},
			Streams: []v1beta1.Stream{{Port: "echo", Backends: []v1beta1.Backend{{Service: "db", Port: realcluster.StreamEchoPort}}}},
		},
	}))
	framework.WaitReady(ctx, t, cl, 3*time.Minute, objs...)
	before := waitStreamEndpoints(ctx, t, cl, ns, "relay", 1, 1)
	key := client.ObjectKey{Namespace: ns, Name: "relay"}
	addr := framework.ServiceAddr(ctx, t, cs, key, "echo")
	var conn net.Conn
	var r *bufio.Reader
	tools.Eventually(t, 30*time.Second, "a connection to "+addr+" greeted", func() error {
		var err error
		conn, r, _, err = openEcho(ctx, dial, addr)
		return err
	})
	defer conn.Close()
	tools.Must(t, echoLine(conn, r, "before the change"))

	framework.UpdateInstance(ctx, t, cl, key, func(n *v1beta1.NginxOperator) { n.Spec.Config.Servers[0].Locations = respond("v2") })
	after := waitConfigLoaded(ctx, t, cl, key, before.Status.ConfigHash)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	get(ctx, t, hc, "http://"+framework.ServiceAddr(ctx, t, cs, key, "http")+"/", want(http.StatusOK, "v2"))
	loaded := time.Now()
	for i := range 5 {
		if err := echoLine(conn, r, fmt.Sprintf("after the change %d", i)); err != nil {
			t.Fatalf("the connection opened before configuration %s was loaded, %s after: %v", after.Status.ConfigHash,
				time.Since(loaded).Round(time.Millisecond), err)
		}
		// Paces the lines over two seconds: a window in which the old
		// workers must keep the connection.
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("configuration %s replaced by %s and loaded by both pods; the connection opened before relayed 5 more lines over %s",
		before.Status.ConfigHash, after.Status.ConfigHash, time.Since(loaded).Round(time.Millisecond))
}

// waitStreamEndpoints waits until the instance's status has upstreams
// upstreams of n endpoints each and every pod's nginx serves the
// configuration that has them, and returns the instance.
func waitStreamEndpoints(ctx context.Context, t *testing.T, cl client.Client, ns, name string, upstreams int, n int32) *v1beta1.NginxOperator {
	t.Helper()
	var inst v1beta1.NginxOperator
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		if cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &inst) != nil || len(inst.Status.Upstreams) != upstreams {
			return false
		}
		for _, u := range inst.Status.Upstreams {
			if u.Endpoints != n {
				return false
			}
		}
		return inst.Status.ObservedGeneration == inst.Generation && ptr.Deref(inst.Status.LoadedReplicas, -1) == ptr.Deref(inst.Spec.Replicas, 1)
	}) {
		t.Fatalf("status.upstreams %+v, loadedReplicas %s: want %d upstreams of %d endpoints, loaded by every pod",
			inst.Status.Upstreams, loadedString(inst.Status.LoadedReplicas), upstreams, n)
	}
	return &inst
}

// waitConfigLoaded waits until the instance at key has a configuration
// other than old, loaded by every pod, and returns the instance.
func waitConfigLoaded(ctx context.Context, t *testing.T, cl client.Client, key client.ObjectKey, old string) *v1beta1.NginxOperator {
	t.Helper()
	var inst v1beta1.NginxOperator
	if !framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) bool {
		return cl.Get(ctx, key, &inst) == nil && inst.Status.ObservedGeneration == inst.Generation && inst.Status.ConfigHash != old &&
			ptr.Deref(inst.Status.LoadedReplicas, -1) == ptr.Deref(inst.Spec.Replicas, 1)
	}) {
		t.Fatalf("configuration %s still served: status %+v", old, inst.Status)
	}
	return &inst
}

// podNames are the names of the running pods of ns that match selector.
func podNames(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, selector string) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	tools.Must(t, err)
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

func newTestCA(t *testing.T, name string) *tools.CA {
	t.Helper()
	ca, err := tools.NewCA(name, time.Hour)
	tools.Must(t, err)
	return ca
}

// issueSecret creates the TLS Secret name holding a certificate of ca for host.
func issueSecret(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, ca *tools.CA, name, host string) {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(tools.Server(host), time.Hour)
	tools.Must(t, err)
	tlsSecret(ctx, t, cs, ns, name, certPEM, keyPEM)
}

// echoOnce connects to a stream test server at addr as a new client,
// reads its greeting, has it echo line and hangs up; it returns the name
// of the pod that greeted.
func echoOnce(ctx context.Context, dial dialer, addr, line string) (string, error) {
	conn, r, pod, err := openEcho(ctx, dial, addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return pod, echoLine(conn, r, line)
}

// openEcho connects to a stream test server at addr and reads its
// greeting; it returns the connection, its reader and the pod that greeted.
func openEcho(ctx context.Context, dial dialer, addr string) (net.Conn, *bufio.Reader, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, "", err
	}
	r, pod, err := greeting(conn)
	if err != nil {
		conn.Close()
		return nil, nil, "", err
	}
	return conn, r, pod, nil
}

// greeting reads the greeting of a stream test server on conn, "hello from
// <pod>", which it sends before the client says anything.
func greeting(conn net.Conn) (*bufio.Reader, string, error) {
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return nil, "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, "", fmt.Errorf("reading the greeting: %w (got %q)", err, line)
	}
	pod, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "hello from ")
	if !ok {
		return nil, "", fmt.Errorf("greeting %q", line)
	}
	return r, pod, nil
}

// echoLine sends line on conn and reads it back from r, within 10 s.
func echoLine(conn net.Conn, r *bufio.Reader, line string) error {
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		return fmt.Errorf("sending %q: %w", line, err)
	}
	got, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading back %q: %w (got %q)", line, err, got)
	}
	if got != line+"\n" {
		return fmt.Errorf("sent %q, got back %q", line, got)
	}
	return nil
}

// dialTLS connects to addr and completes a TLS handshake with cfg.
func dialTLS(ctx context.Context, dial dialer, addr string, cfg *tls.Config) (*tls.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}

// txtOf is the TXT record r finds for a name, which a stream test server
// answers with its pod's name.
func txtOf(ctx context.Context, r *net.Resolver) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	txt, err := r.LookupTXT(ctx, "whoami.streams.test.")
	if err != nil {
		return "", err
	}
	if len(txt) != 1 {
		return "", fmt.Errorf("TXT records %q, want one", txt)
	}
	return txt[0], nil
}
