package realpods

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// An instance whose Service is of type NodePort, with a plain-HTTP port
// and a TLS port (8080 and 8443 in the pod), answers on the ports clients
// use: 80 and 443 at its ClusterIP, and its node ports (one set in the
// spec, one the API server allocated) at the node's address, through
// kube-proxy. Its http server redirects to https://host/, without a port,
// and a client that follows the redirect is served over TLS on 443.
func TestANodePortInstanceAnswersOnTheWellKnownPortsAndItsNodePorts(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	rn := realcluster.NodeOf(c)

	const host = "ports.realpods.test"
	const httpNodePort = 31080
	pool, certPEM, keyPEM := framework.ServingCert(t, host)
	tlsSecret(ctx, t, cs, ns, "ports-tls", certPEM, keyPEM)
	objs := apply(ctx, t, c, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: site
data:
  index.html: "served on the port clients use\n"
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: ports
spec:
  replicas: 1
  service:
    type: NodePort
  ports:
  - name: http
    containerPort: 8080
    nodePort: `+strconv.Itoa(httpNodePort)+`
  - name: https
    containerPort: 8443
  content:
    configMaps:
    - name: site
  config:
    servers:
    - port: http
      serverNames: [`+host+`]
      defaultServer: true
      redirectToHTTPS: {}
    - port: https
      serverNames: [`+host+`]
      defaultServer: true
      tls:
        secretName: ports-tls
`)
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)

	svc, err := cs.CoreV1().Services(ns).Get(ctx, layout.NamesFor("ports").Service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]corev1.ServicePort{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p
	}
	httpPort, httpsPort := ports["http"], ports["https"]
	if httpPort.Port != 80 || httpPort.NodePort != httpNodePort || httpsPort.Port != 443 || httpsPort.NodePort == 0 ||
		svc.Annotations[layout.ServicePortsAnnotation] != string(serviceport.Standard) {
		t.Fatalf("Service ports %+v, annotations %v: want http on 80 and node port %d, https on 443 and an allocated node port, rule %s",
			svc.Spec.Ports, svc.Annotations, httpNodePort, serviceport.Standard)
	}

	// At the ClusterIP: the redirect names no port, and following it
	// reaches the TLS server on 443.
	cluster := dialingAt(rn, svc.Spec.ClusterIP, pool)
	resp, _ := get(ctx, t, noRedirects(dialingAt(rn, svc.Spec.ClusterIP, pool)), "http://"+host+"/", redirectsTo("https://"+host+"/"))
	if resp != nil {
		t.Logf("http://%s/ at %s:80: %s, Location %s", host, svc.Spec.ClusterIP, resp.Status, resp.Header.Get("Location"))
	}
	resp, _ = get(ctx, t, cluster, "http://"+host+"/", servedOverTLS("https://"+host+"/"))
	if resp != nil {
		t.Logf("followed to %s at %s:443: %s over %s", resp.Request.URL, svc.Spec.ClusterIP, resp.Status, tls.VersionName(resp.TLS.Version))
	}

	// At the node's address, on the node ports.
	nodes := dialingAt(rn, rn.IP(), pool)
	httpURL := fmt.Sprintf("http://%s:%d/", host, httpNodePort)
	resp, _ = get(ctx, t, noRedirects(dialingAt(rn, rn.IP(), pool)), httpURL, redirectsTo("https://"+host+"/"))
	if resp != nil {
		t.Logf("%s at node %s: %s, Location %s", httpURL, rn.IP(), resp.Status, resp.Header.Get("Location"))
	}
	httpsURL := fmt.Sprintf("https://%s:%d/", host, httpsPort.NodePort)
	resp, _ = get(ctx, t, nodes, httpsURL, servedOverTLS(httpsURL))
	if resp != nil {
		t.Logf("%s at node %s (allocated node port): %s", httpsURL, rn.IP(), resp.Status)
	}
}

// dialingAt is a client that connects through the node to ip, whatever
// host a URL names, on the URL's port: the URL's host is the virtual host
// (Host header and SNI), as for a client whose DNS points there.
func dialingAt(rn *node.Node, ip string, pool *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				_, port, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				return rn.DialContext(ctx, network, net.JoinHostPort(ip, port))
			},
			DisableKeepAlives: true,
			TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		},
	}
}

// redirectsTo accepts a permanent redirect (redirectToHTTPS' default 308)
// to exactly location.
func redirectsTo(location string) func(*http.Response, string) error {
	return func(r *http.Response, body string) error {
		if r.StatusCode != http.StatusPermanentRedirect || r.Header.Get("Location") != location {
			return fmt.Errorf("%s, Location %q; want 308 to %q", r.Status, r.Header.Get("Location"), location)
		}
		return nil
	}
}

// servedOverTLS accepts the site's page, served over TLS at url (the
// request's final URL, after any redirect).
func servedOverTLS(url string) func(*http.Response, string) error {
	page := want(http.StatusOK, "served on the port clients use")
	return func(r *http.Response, body string) error {
		if err := page(r, body); err != nil {
			return err
		}
		if r.TLS == nil || r.Request.URL.String() != url {
			return fmt.Errorf("served at %s (TLS %v), want %s over TLS", r.Request.URL, r.TLS != nil, url)
		}
		return nil
	}
}
