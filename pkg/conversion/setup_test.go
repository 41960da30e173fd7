package conversion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

func TestOptionsDefaultsAndValidation(t *testing.T) {
	got, err := Options{Namespace: "ops"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Namespace: "ops", SecretName: "nginx-operator-webhook-cert", ServiceName: "nginx-operator-webhook",
		CRDName: "nginxoperators.nginx.operator.dev", Validity: year, ResyncInterval: time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no namespace", Options{}, "namespace is required"},
		{"http URL", Options{Namespace: "ops", URL: "http://127.0.0.1:9443/convert"}, "not an https URL"},
		{"URL without host", Options{Namespace: "ops", URL: "https:///convert"}, "not an https URL"},
		{"validity shorter than three resyncs", Options{Namespace: "ops", Validity: 2 * time.Minute}, "at least three resync intervals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.opts.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestCertificateNames(t *testing.T) {
	for _, tc := range []struct {
		url      string
		wantDNS  []string
		wantIPs  []string
		wantNote string
	}{
		{"", []string{"hook.ops.svc", "hook.ops.svc.cluster.local"}, nil, "the Service's names"},
		{"https://127.0.0.1:9443/convert", []string{"hook.ops.svc", "hook.ops.svc.cluster.local"}, []string{"127.0.0.1"}, "an IP host is an IP SAN"},
		{"https://[::1]:9443/convert", []string{"hook.ops.svc", "hook.ops.svc.cluster.local"}, []string{"::1"}, "an IPv6 host"},
		{"https://operator.example.com/convert", []string{"hook.ops.svc", "hook.ops.svc.cluster.local", "operator.example.com"}, nil, "a DNS host is a DNS SAN"},
	} {
		n := Options{Namespace: "ops", ServiceName: "hook", URL: tc.url}.names()
		var ips []string
		for _, ip := range n.IPs {
			ips = append(ips, ip.String())
		}
		if diff := cmp.Diff(tc.wantDNS, n.DNSNames); diff != "" {
			t.Errorf("%s: DNS names (-want +got):\n%s", tc.wantNote, diff)
		}
		if diff := cmp.Diff(tc.wantIPs, ips); diff != "" {
			t.Errorf("%s: IPs (-want +got):\n%s", tc.wantNote, diff)
		}
	}
}

func TestCertFilesAreTheWebhookServersOwn(t *testing.T) {
	dir := t.TempDir()
	srv := webhook.NewServer(webhook.Options{CertDir: dir, CertName: "serving.crt"})
	srv.Register("/x", nil) // applies the server's defaults, as Setup's Register does
	f, err := webhookCertFiles(srv, "")
	if err != nil {
		t.Fatal(err)
	}
	if f != (certFiles{Dir: dir, CertName: "serving.crt", KeyName: "tls.key"}) {
		t.Errorf("files %+v, want the server's directory and names", f)
	}
	if _, err := webhookCertFiles(srv, filepath.Join(dir, "elsewhere")); err == nil || !strings.Contains(err.Error(), "never see") {
		t.Errorf("a CertDir the server does not read was accepted: %v", err)
	}
}

func TestCertFilesWriteReplacesBothAndReportsSameness(t *testing.T) {
	f := certFiles{Dir: filepath.Join(t.TempDir(), "certs"), CertName: "tls.crt", KeyName: "tls.key"}
	if f.same([]byte("c1"), []byte("k1")) {
		t.Fatal("missing files reported the same")
	}
	for _, pair := range [][2]string{{"c1", "k1"}, {"c2", "k2"}} {
		if err := f.write([]byte(pair[0]), []byte(pair[1])); err != nil {
			t.Fatal(err)
		}
		if !f.same([]byte(pair[0]), []byte(pair[1])) {
			t.Errorf("after writing %v the files differ", pair)
		}
	}
	if f.same([]byte("c2"), []byte("k1")) {
		t.Error("a different key reported the same")
	}
	entries, _ := os.ReadDir(f.Dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want tls.crt and tls.key only (no temporary files left)", len(entries))
	}
	if st, err := os.Stat(filepath.Join(f.Dir, "tls.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v (%v), want 0600", st.Mode(), err)
	}
}
