package realpods

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// An NginxOperator serves through its ClusterIP Service, reached from the
// node: static content from a ConfigMap, a proxy location to another
// Service (the node's test server), a redirect, and TLS from a Secret.
func TestNginxOperatorServesStaticProxyRedirectAndTLSThroughItsService(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	rn := realcluster.NodeOf(c)

	// The proxied Service: the node's test server.
	realcluster.RunTestServer(ctx, t, cs, ns, "api", "")

	const host = "www.realpods.test"
	pool, certPEM, keyPEM := framework.ServingCert(t, host)
	tlsSecret(ctx, t, cs, ns, "web-tls", certPEM, keyPEM)

	objs := apply(ctx, t, c, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: site
data:
  index.html: "<h1>served from a ConfigMap</h1>\n"
  about.txt: "about this site\n"
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
      serverNames: [`+host+`]
      defaultServer: true
      locations:
      - path: /
        static: {}
      - path: /api/
        proxy:
          service: api
          port: 80
      - path: /old
        exact: true
        redirect:
          url: https://`+host+`/new
          code: 301
    - port: https
      serverNames: [`+host+`]
      tls:
        secretName: web-tls
      locations:
      - path: /
        static: {}
`)
	began := time.Now()
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	t.Logf("NginxOperator web Available %s after it was applied", time.Since(began).Round(time.Millisecond))

	ip := clusterIP(ctx, t, cs, ns, "web")
	hc := noRedirects(rn.HTTPClient())
	get(ctx, t, hc, "http://"+ip+":80/", want(http.StatusOK, "served from a ConfigMap"))
	get(ctx, t, hc, "http://"+ip+":80/about.txt", want(http.StatusOK, "about this site"))
	get(ctx, t, hc, "http://"+ip+":80/missing", want(http.StatusNotFound))
	// The test server answers "hello from <its hostname>", the pod's name.
	get(ctx, t, hc, "http://"+ip+":80/api/hello", want(http.StatusOK, "hello from api"))
	resp, _ := get(ctx, t, hc, "http://"+ip+":80/old", want(http.StatusMovedPermanently))
	if resp != nil && resp.Header.Get("Location") != "https://"+host+"/new" {
		t.Errorf("redirect to %q, want https://%s/new", resp.Header.Get("Location"), host)
	}

	// TLS on the Service port 443 (the pods' 8443) with the Secret's certificate, for the server's name.
	tlsClient := &http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			DialContext:       rn.DialContext,
			DisableKeepAlives: true,
			TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: host},
		},
	}
	resp, _ = get(ctx, t, tlsClient, "https://"+ip+":443/", want(http.StatusOK, "served from a ConfigMap"))
	block, _ := pem.Decode(certPEM)
	if resp != nil {
		if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 || !bytes.Equal(resp.TLS.PeerCertificates[0].Raw, block.Bytes) {
			t.Errorf("the https server did not present the Secret's certificate")
		}
	}
	// nginx ran as user 101 on a read-only root file system without
	// complaint.
	for name, logs := range containerLogs(ctx, t, cs, ns, "app.kubernetes.io/instance=web") {
		for _, bad := range nginxTrouble {
			if strings.Contains(logs, bad) {
				t.Errorf("the log of %s has %q:\n%s", name, bad, logs)
			}
		}
	}
}

// nginxTrouble are what nginx logs when a path, a permission or its
// configuration fails it.
var nginxTrouble = []string{"[emerg]", "[alert]", "[crit]", "Permission denied", "Read-only file system"}
