package conversion

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// What the certificate management uses, and nothing more: the Secret in the
// operator's own namespace (get, create, update; never list or watch), and the
// NginxOperator CRD, by name, whose spec.conversion it patches.
//
// The Secret rule comes out cluster-wide: the operator's namespace is chosen
// at install time, and controller-gen's namespace= parameter would need it as
// a literal and a RoleBinding of its own. The NginxOperator controller already
// holds cluster-wide Secret access, so this adds no privilege today.
//
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;patch,resourceNames=nginxoperators.nginx.operator.dev

// Defaults of Options.
const (
	DefaultSecretName     = "nginx-operator-webhook-cert"
	DefaultServiceName    = "nginx-operator-webhook"
	DefaultCRDName        = "nginxoperators.nginx.operator.dev"
	DefaultValidity       = 365 * 24 * time.Hour
	DefaultResyncInterval = time.Minute
)

// Options configure the conversion webhook and its certificate.
type Options struct {
	// Namespace is where the operator runs; it holds the certificate Secret
	// and, without URL, the webhook Service. Required.
	Namespace string
	// SecretName of the certificate Secret. Default DefaultSecretName.
	SecretName string
	// ServiceName of the webhook Service; the certificate is valid for
	// <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local. Default DefaultServiceName.
	ServiceName string
	// URL, when set (local runs, tests), is the full https URL the apiserver
	// calls instead of the Service, for example https://127.0.0.1:9443/convert.
	// Its host is added to the certificate as an IP or DNS name.
	URL string
	// CertDir is where tls.crt and tls.key are written for the manager's
	// webhook server. Default: the webhook server's own CertDir; when set it
	// must be that directory.
	CertDir string
	// CRDName is the CRD whose spec.conversion points at the webhook.
	// Default DefaultCRDName.
	CRDName string
	// Validity of a new CA and serving certificate. They are replaced when
	// less than a third of it remains. Default DefaultValidity.
	Validity time.Duration
	// ResyncInterval is how often the leader checks the certificate and the
	// CRD, and every replica re-reads the Secret. Default DefaultResyncInterval.
	ResyncInterval time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.SecretName == "" {
		o.SecretName = DefaultSecretName
	}
	if o.ServiceName == "" {
		o.ServiceName = DefaultServiceName
	}
	if o.CRDName == "" {
		o.CRDName = DefaultCRDName
	}
	if o.Validity == 0 {
		o.Validity = DefaultValidity
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("conversion webhook: the operator's namespace is required (it holds the certificate Secret)"))
	}
	if o.URL != "" {
		if u, err := url.Parse(o.URL); err != nil || u.Scheme != "https" || u.Hostname() == "" {
			errs = append(errs, fmt.Errorf("conversion webhook URL %q is not an https URL with a host", o.URL))
		}
	}
	if o.ResyncInterval < 0 || o.Validity < 3*o.ResyncInterval {
		errs = append(errs, fmt.Errorf("conversion webhook certificate validity %s must be at least three resync intervals (%s) so rotation happens before expiry", o.Validity, o.ResyncInterval))
	}
	return o, errors.Join(errs...)
}

// names are the certificate's subject alternative names.
func (o Options) names() sans {
	svc := o.ServiceName + "." + o.Namespace + ".svc"
	s := sans{DNSNames: []string{svc, svc + ".cluster.local"}}
	if o.URL != "" {
		u, _ := url.Parse(o.URL) // validated by withDefaults
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			s.IPs = append(s.IPs, ip)
		} else {
			s.DNSNames = append(s.DNSNames, u.Hostname())
		}
	}
	return s
}

// Setup serves the conversion webhook on mgr's webhook server and manages
// its certificate:
//
//   - before returning, the certificate Secret holds a CA and a serving
//     certificate (created when missing, replaced when unusable) and their
//     files are in the webhook server's CertDir, so the server can start;
//   - a leader-elected runnable keeps the CRD's spec.conversion pointing at
//     the webhook with the CA as caBundle, and rotates the certificate when a
//     third of its validity remains, keeping the old CA in the caBundle until
//     it expires;
//   - every replica re-reads the Secret and loads a new certificate once the
//     CRD's caBundle trusts it.
//
// The Secret and the CRD are read directly from the apiserver: the manager's
// cache holds neither.
func Setup(ctx context.Context, mgr manager.Manager, opts Options) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	srv := mgr.GetWebhookServer()
	srv.Register(Path, NewHandler())
	files, err := webhookCertFiles(srv, opts.CertDir)
	if err != nil {
		return err
	}
	opts.CertDir = files.Dir

	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme, HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return err
	}

	cm := newCertManager(opts, c, files, mgr.GetLogger().WithName("conversion-webhook"))
	if err := cm.bootstrap(ctx); err != nil {
		return err
	}
	if err := mgr.Add(cm.injector()); err != nil {
		return err
	}
	if err := mgr.Add(cm.fileSyncer()); err != nil {
		return err
	}
	// Not ready until the webhook answers: the Service must not send the
	// apiserver's conversion requests to a replica that cannot serve them.
	return mgr.AddReadyzCheck("conversion-webhook", srv.StartedChecker())
}

// Serve only registers the /convert handler, for installs where someone else
// (OLM, cert-manager) mounts the serving certificate into the webhook
// server's CertDir and keeps the CRD's conversion settings and caBundle: the
// server reloads a renewed certificate from that directory by itself.
func Serve(mgr manager.Manager) error {
	srv := mgr.GetWebhookServer()
	srv.Register(Path, NewHandler())
	return mgr.AddReadyzCheck("conversion-webhook", srv.StartedChecker())
}

// webhookCertFiles are the files the webhook server reads. Register has
// applied the server's defaults, so its CertDir is known by now.
func webhookCertFiles(srv webhook.Server, certDir string) (certFiles, error) {
	ds, ok := srv.(*webhook.DefaultServer)
	if !ok {
		if certDir == "" {
			return certFiles{}, fmt.Errorf("webhook server %T: set Options.CertDir to the directory it reads", srv)
		}
		return certFiles{Dir: certDir, CertName: "tls.crt", KeyName: "tls.key"}, nil
	}
	f := certFiles{Dir: ds.Options.CertDir, CertName: ds.Options.CertName, KeyName: ds.Options.KeyName}
	if certDir != "" && certDir != f.Dir {
		return certFiles{}, fmt.Errorf("conversion webhook CertDir %q is not the webhook server's CertDir %q: the server would never see the certificate", certDir, f.Dir)
	}
	return f, nil
}
