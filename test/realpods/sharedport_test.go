package realpods

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A Gateway whose port 443 has an HTTPS listener and a TLS (passthrough)
// listener, as its clients see it through the instance's Service: while
// new HTTPS connections arrive without pause, the last TLSRoute of the
// port is removed and added again; no HTTPS request fails, no pod is
// replaced, and the TLS name is closed without its route and passed
// through to the backend's own certificate with it.
func TestATLSRouteLeavesAndJoinsASharedPortWithoutLosingAnHTTPSRequest(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	dial := realcluster.NodeOf(c).DialContext
	backendCA, nginxCA := newTestCA(t, "backend CA"), newTestCA(t, "nginx CA")
	issueSecret(ctx, t, cs, ns, backendCA, "db-tls", "db.example.com")
	issueSecret(ctx, t, cs, ns, nginxCA, "www-tls", "www.example.com")
	realcluster.RunStreamServers(ctx, t, cs, ns, "db", 1, "db-tls", nil)
	runTestServers(ctx, t, cs, ns, "web", 2)

	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.ControllerName}}
	tools.Must(t, cl.Create(ctx, class))
	t.Cleanup(func() { _ = cl.Delete(context.Background(), class) })
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{
			{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("www.example.com")),
				TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "www-tls"}}}},
			{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("db.example.com")),
				TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
		},
	}}
	tools.Must(t, cl.Create(ctx, gw))
	web := httpRoute(ns, "web", "/", "web", false)
	web.Spec.ParentRefs[0].Name = "shared"
	tools.Must(t, cl.Create(ctx, web))
	newTLSRoute := func() *gatewayv1.TLSRoute {
		return &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "shared", SectionName: ptr.To(gatewayv1.SectionName("tls"))}}},
			Hostnames:       []gatewayv1.Hostname{"db.example.com"},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: "db", Port: ptr.To(gatewayv1.PortNumber(realcluster.StreamTLSPort))}}}}},
		}}
	}
	tools.Must(t, cl.Create(ctx, newTLSRoute()))
	waitProgrammed(ctx, t, cl, gw)

	addr := net.JoinHostPort(clusterIP(ctx, t, cs, ns, graph.InstanceName("shared")), "443")
	// A TLS handshake for db.example.com, over the node's dialer, which
	// verifies the backend's own certificate.
	passedThrough := func() error {
		raw, err := dial(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer raw.Close()
		conn := tls.Client(raw, &tls.Config{ServerName: "db.example.com", RootCAs: backendCA.Pool()})
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		return conn.HandshakeContext(ctx)
	}
	tools.Eventually(t, 2*time.Minute, "db.example.com passed through to the backend's certificate", passedThrough)
	// Each request asks for www.example.com (in SNI and Host) on a new
	// connection to the Service.
	https := func() *http.Client {
		toService := func(ctx context.Context, network, _ string) (net.Conn, error) { return dial(ctx, network, addr) }
		return &http.Client{Timeout: loadClientTimeout, Transport: &http.Transport{DialContext: toService, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: nginxCA.Pool()}}}
	}
	before := podUIDsOf(ctx, t, cs, ns, graph.InstanceName("shared"))
	load := startSteadyLoad(ctx, t, https, "", "https://www.example.com/", 4, bodyHasPrefix("hello from web-"))
	began := time.Now()
	tools.Must(t, cl.Delete(ctx, newTLSRoute()))
	tools.Eventually(t, time.Minute, "db.example.com closed without its route", func() error {
		if passedThrough() == nil {
			return fmt.Errorf("still passed through")
		}
		return nil
	})
	removed := time.Since(began)
	time.Sleep(5 * time.Second) // the old workers' connections drain meanwhile
	began = time.Now()
	tools.Must(t, cl.Create(ctx, newTLSRoute()))
	tools.Eventually(t, time.Minute, "db.example.com passed through again", passedThrough)
	added := time.Since(began)
	time.Sleep(5 * time.Second)
	got := load.stop()

	t.Logf("TLSRoute removed in %s, added in %s; %d HTTPS requests on new connections meanwhile, %d failed",
		removed.Round(time.Millisecond), added.Round(time.Millisecond), got.total, got.failed)
	if got.total == 0 {
		t.Fatal("no request was sent")
	}
	for _, f := range got.failures[:min(5, len(got.failures))] {
		t.Errorf("an HTTPS request failed while the TLSRoute left and joined port 443: %s", f)
	}
	if after := podUIDsOf(ctx, t, cs, ns, graph.InstanceName("shared")); !maps.Equal(before, after) {
		t.Errorf("the instance's pods were replaced: %v, then %v", before, after)
	}
}
