package operator

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/logging"
)

// Options are the operator's command-line settings.
type Options struct {
	// Namespaces to watch; empty means all (minus DenyNamespaces).
	Namespaces []string
	// DenyNamespaces are never watched; only valid when Namespaces is empty.
	DenyNamespaces []string

	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	MetricsBindAddress      string
	MetricsSecure           bool
	MetricsCertDir          string
	HealthProbeBindAddress  string
	// PprofBindAddress serves net/http/pprof when set; off by default.
	PprofBindAddress        string
	WebhookPort             int
	WebhookCertDir          string
	GracefulShutdownTimeout time.Duration

	// ConversionWebhook serves /convert and manages its certificate and the
	// CRD's conversion settings (see pkg/conversion).
	ConversionWebhook bool
	// WebhookCertManagement is who provides the webhook's certificate and
	// the CRD's caBundle: CertManagementSelf or CertManagementExternal.
	WebhookCertManagement string
	Namespace             string // the operator's own namespace: holds the webhook certificate Secret
	WebhookServiceName    string
	WebhookSecretName     string
	WebhookURL            string // instead of the Service, for local runs and tests

	// Images are the defaults for what the operator deploys.
	Images Images
	// ReadPodStatus reads each nginx pod's reloader over the pod network
	// for status.loadedReplicas and refused configurations.
	ReadPodStatus bool

	LogLevel  string
	LogFormat string

	// SkipControllerNameValidation lets one process run several managers, as
	// integration tests do; controller-runtime otherwise refuses duplicate
	// controller names (they would share metrics). Not a flag.
	SkipControllerNameValidation bool
}

// Images are the container images the operator deploys when a custom resource
// does not name one.
type Images struct {
	Nginx    string
	Exporter string
	Agent    string
	Reloader string
}

// DefaultAgentImage is the operator's own image, which also runs the backup
// agent and holds the nginx-reloader.
const DefaultAgentImage = "ghcr.io/nginx-operator/nginx-operator"

// OwnImageEnv names the operator's own image, as the Helm chart sets it: the
// agent and the reloader come from the same image, so an operator pulled
// from a mirror deploys them from that mirror too. An environment variable
// rather than only the flags, because a chart may run an older operator,
// which ignores an unknown variable but refuses an unknown flag.
const OwnImageEnv = "NGINX_OPERATOR_IMAGE"

// ownImage is the default of --agent-image and --reloader-image.
func ownImage(version string) string {
	if img := strings.TrimSpace(os.Getenv(OwnImageEnv)); img != "" {
		return img
	}
	return DefaultAgentImage + ":" + version
}

// BindFlags registers every option on fs with its default.
func (o *Options) BindFlags(fs *flag.FlagSet, version string) {
	fs.Func("namespaces", "comma-separated namespaces to watch (default: all namespaces)", listFlag(&o.Namespaces))
	fs.Func("deny-namespaces", "comma-separated namespaces never to watch; cannot be combined with --namespaces", listFlag(&o.DenyNamespaces))
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "elect a leader with a Lease so only one replica reconciles")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the operator's own namespace when in a cluster)")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "nginx-operator.nginx.operator.dev", "name of the leader election Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a lost leader's lease blocks the others")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps retrying to renew before it steps down")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to acquire or renew the lease")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8443", "address of the metrics endpoint; \"0\" disables it")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS, authenticating and authorizing every scrape against the apiserver")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for the metrics endpoint (default: a self-signed certificate)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", "", "address of the Go profiler's /debug/pprof endpoints, unauthenticated: bind it to localhost (default: off)")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "port of the conversion webhook server")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "", "directory for the webhook serving certificate (default: a new private temporary directory, removed on exit)")
	fs.BoolVar(&o.ConversionWebhook, "conversion-webhook", true, "serve the v1alpha1<->v1beta1 conversion webhook and manage its certificate and the CRD's caBundle")
	fs.StringVar(&o.WebhookCertManagement, "webhook-cert-management", CertManagementSelf,
		"who provides the conversion webhook's certificate and the CRD's caBundle: "+CertManagementSelf+" (generate, rotate and inject them) or "+
			CertManagementExternal+" (OLM, cert-manager: serve the certificate found in --webhook-cert-dir and leave the CRD alone)")
	fs.StringVar(&o.Namespace, "namespace", defaultNamespace(), "the operator's own namespace (default: $POD_NAMESPACE, then the in-cluster service account's)")
	fs.StringVar(&o.WebhookServiceName, "webhook-service-name", "nginx-operator-webhook", "Service in --namespace through which the apiserver reaches the conversion webhook")
	fs.StringVar(&o.WebhookSecretName, "webhook-secret-name", "nginx-operator-webhook-cert", "Secret in --namespace holding the webhook's CA and serving certificate")
	fs.StringVar(&o.WebhookURL, "webhook-url", "", "URL the apiserver calls for conversion instead of the Service, such as https://127.0.0.1:9443/convert for a local run")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", 30*time.Second, "how long running reconciles may take to finish after SIGTERM")
	fs.StringVar(&o.Images.Nginx, "nginx-image", "nginx:1.27", "nginx image for NginxOperator objects that do not set spec.image")
	fs.StringVar(&o.Images.Exporter, "exporter-image", "nginx/nginx-prometheus-exporter:1.4", "nginx-prometheus-exporter sidecar image")
	own := ownImage(version)
	fs.StringVar(&o.Images.Agent, "agent-image", own, "image running the backup and restore agent (default: $"+OwnImageEnv+", else "+DefaultAgentImage+" tagged with the version)")
	fs.StringVar(&o.Images.Reloader, "reloader-image", own, "image holding /nginx-reloader, which an init container copies into every nginx pod (default: as --agent-image)")
	fs.BoolVar(&o.ReadPodStatus, "read-pod-status", true, "read each nginx pod's reloader (port 18082, over the pod network) to report status.loadedReplicas and configurations nginx refused; false where the operator cannot reach the pods")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: "+strings.Join(logging.Levels, ", "))
	fs.StringVar(&o.LogFormat, "log-format", "logfmt", "log format: "+strings.Join(logging.Formats, ", "))
}

func listFlag(dst *[]string) func(string) error {
	return func(v string) error {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*dst = append(*dst, s)
			}
		}
		return nil
	}
}

// Values of --webhook-cert-management.
const (
	CertManagementSelf     = "self"
	CertManagementExternal = "external"
)

// Validate reports every invalid combination at once.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Namespaces) > 0 && len(o.DenyNamespaces) > 0 {
		errs = append(errs, errors.New("--namespaces and --deny-namespaces cannot be combined"))
	}
	if o.LeaderElect && !(o.LeaseDuration > o.RenewDeadline && o.RenewDeadline > o.RetryPeriod && o.RetryPeriod > 0) {
		errs = append(errs, fmt.Errorf("leader election needs lease duration (%s) > renew deadline (%s) > retry period (%s) > 0", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
	}
	switch o.WebhookCertManagement {
	case "", CertManagementSelf, CertManagementExternal: // "": Options built in code, self
	default:
		errs = append(errs, fmt.Errorf("--webhook-cert-management %q: want %s or %s", o.WebhookCertManagement, CertManagementSelf, CertManagementExternal))
	}
	if o.ConversionWebhook && o.WebhookCertManagement != CertManagementExternal && o.Namespace == "" {
		errs = append(errs, errors.New("--namespace is required for the conversion webhook outside a cluster (or set --conversion-webhook=false)"))
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port %d is not a port number", o.WebhookPort))
	}
	for flagName, image := range map[string]string{"--nginx-image": o.Images.Nginx, "--exporter-image": o.Images.Exporter, "--agent-image": o.Images.Agent, "--reloader-image": o.Images.Reloader} {
		if strings.TrimSpace(image) == "" || strings.ContainsAny(image, " \t\n") {
			errs = append(errs, fmt.Errorf("%s %q is not an image reference", flagName, image))
		}
	}
	return errors.Join(errs...)
}

// Watches tells whether the operator may watch namespace: any, unless
// --namespaces names some. A namespace of --deny-namespaces is "watched"
// through the caches' field selector, which shows nothing of it.
func (o *Options) Watches(namespace string) bool {
	return len(o.Namespaces) == 0 || slices.Contains(o.Namespaces, namespace)
}

// serviceAccountNamespaceFile is where a pod learns its namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}
