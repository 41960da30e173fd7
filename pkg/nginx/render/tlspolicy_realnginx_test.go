package render

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// TestRealNginxOffersOnlyTheConfiguredTLSProtocols proves ssl_protocols
// comes from spec.config.tls: with TLSv1.3 alone, a TLS 1.2 client is
// refused (TLS 1.1 is refused whatever the spec, by the CRD's enum).
func TestRealNginxOffersOnlyTheConfiguredTLSProtocols(t *testing.T) {
	nginxBin := tools.Nginx(t)
	httpsPort, healthPort := int32(tools.Port(t)), int32(tools.Port(t))
	spec := v1beta1.NginxOperatorSpec{
		Ports: []v1beta1.Port{{Name: "https", ContainerPort: httpsPort}},
		Config: v1beta1.NginxConfig{
			NginxSettings: v1beta1.NginxSettings{
				DisableHTTP2: true,
				TLS:          v1beta1.TLSPolicy{Protocols: []string{"TLSv1.3"}},
			},
			Servers: []v1beta1.Server{{Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls"}}},
		},
	}
	proc := startRendered(t, nginxBin, validationtest.Spec(t, spec), healthPort, map[string]string{"index.html": "x\n"}, nil)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/", httpsPort), nil)
	tools.Must(t, err)
	if resp, _ := fetch(t, proc, c, req); resp.Proto != "HTTP/1.1" || resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("%s over %s; want HTTP/1.1 (disableHTTP2) over TLS 1.3", resp.Proto, tls.VersionName(resp.TLS.Version))
	}
	if err := handshake(httpsPort, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}); err == nil {
		t.Error("a TLS 1.2 client was served; protocols is [TLSv1.3]")
	}
}

// handshake opens a TLS connection to port on loopback with config.
func handshake(port int32, config *tls.Config) error {
	d := &net.Dialer{Timeout: 3 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", "127.0.0.1:"+strconv.Itoa(int(port)), config)
	if err != nil {
		return err
	}
	return conn.Close()
}
