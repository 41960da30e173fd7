package operator

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup"
	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
	"github.com/nginx-operator/nginx-operator/pkg/gateway"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/metrics"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/prober"
	"github.com/nginx-operator/nginx-operator/pkg/routetable"
)

// Permissions of the manager itself; each controller declares its own.
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxmonitors,verbs=list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// CustomResources are the kinds the operator reconciles. Their informers must
// have synced before the operator reports ready.
func CustomResources() []client.Object {
	return []client.Object{&v1beta1.NginxOperator{}, &v1beta1.NginxMonitor{}, &v1beta1.NginxBackup{}}
}

// ManagedKinds are the kinds of the children the controllers create, and the
// pods of those children (their templates carry the operator's labels). The
// cache holds only those labelled app.kubernetes.io/managed-by=nginx-operator,
// never the cluster's other Secrets, ConfigMaps, workloads or pods, and keeps
// of a pod only its metadata and containers' states (TrimPod). Objects a custom
// resource merely references (a TLS Secret, a content ConfigMap) are read
// through the manager's API reader, not the cache; their metadata is watched
// in a cache of its own (ReferenceCacheOptions).
func ManagedKinds() []client.Object {
	return []client.Object{
		&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.Secret{}, &corev1.ConfigMap{},
		&corev1.ServiceAccount{}, &policyv1.PodDisruptionBudget{}, &networkingv1.NetworkPolicy{}, &batchv1.Job{}, &batchv1.CronJob{},
		&corev1.Pod{},
	}
}

// PodLabels are the labels of the operator's pods (config/manager), which
// the instances' NetworkPolicies admit to the reloaders.
func PodLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "nginx-operator", "app.kubernetes.io/component": "controller"}
}

// NewManager builds the manager with every controller added; the caller starts it.
func NewManager(cfg *rest.Config, opts Options, log logr.Logger) (manager.Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	metrics.Register()
	metricsOpts, err := metricsServerOptions(cfg, opts)
	if err != nil {
		return nil, err
	}
	mgr, err := manager.New(cfg, managerOptions(opts, log, metricsOpts))
	if err != nil {
		return nil, err
	}
	if err := addHealthChecks(mgr, log); err != nil {
		return nil, err
	}
	if err := addControllers(cfg, mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// metricsServerOptions serve /metrics on --metrics-bind-address, behind
// authentication and authorization when it is served with TLS.
func metricsServerOptions(cfg *rest.Config, opts Options) (metricsserver.Options, error) {
	metricsOpts := metricsserver.Options{
		BindAddress:   opts.MetricsBindAddress,
		SecureServing: opts.MetricsSecure,
		CertDir:       opts.MetricsCertDir,
	}
	if !opts.MetricsSecure {
		return metricsOpts, nil
	}
	// Every scrape is authenticated with a TokenReview and authorized with a
	// SubjectAccessReview for GET on the /metrics non-resource URL.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return metricsOpts, err
	}
	filter, err := filters.WithAuthenticationAndAuthorization(cfg, httpClient)
	if err != nil {
		return metricsOpts, fmt.Errorf("metrics authorization: %w", err)
	}
	metricsOpts.FilterProvider = func(*rest.Config, *http.Client) (metricsserver.Filter, error) { return filter, nil }
	return metricsOpts, nil
}

// managerOptions translate the flags into controller-runtime's options:
// the scoped cache, the servers, and leader election on a Lease released
// at shutdown so a successor need not wait for it to expire.
func managerOptions(opts Options, log logr.Logger, metricsOpts metricsserver.Options) manager.Options {
	return manager.Options{
		Scheme:                        NewScheme(),
		Logger:                        log,
		Cache:                         CacheOptions(opts),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		PprofBindAddress:              opts.PprofBindAddress,
		WebhookServer:                 webhook.NewServer(webhook.Options{Port: opts.WebhookPort, CertDir: opts.WebhookCertDir}),
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.LeaseDuration,
		RenewDeadline:                 &opts.RenewDeadline,
		RetryPeriod:                   &opts.RetryPeriod,
		GracefulShutdownTimeout:       &opts.GracefulShutdownTimeout,
		Controller:                    config.Controller{SkipNameValidation: &opts.SkipControllerNameValidation},
	}
}

// addHealthChecks: /healthz answers while the process runs; /readyz waits
// until the custom resources' informers have synced.
func addHealthChecks(mgr manager.Manager, log logr.Logger) error {
	informers := newInformerSync(mgr.GetCache(), CustomResources(), log.WithName("informers"))
	if err := mgr.Add(informers); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("informers", informers.Check)
}

// addControllers adds the three controllers, and the cache of referenced
// objects the NginxOperator controller watches.
func addControllers(cfg *rest.Config, mgr manager.Manager, opts Options) error {
	var podConfig prober.PodConfigReader
	if opts.ReadPodStatus {
		podConfig = prober.NewHTTPReader(podStatusTimeout)
	}
	references := k8sutil.NewNamespaceCaches(func(namespace string) (cache.Cache, error) {
		if !opts.Watches(namespace) {
			return nil, fmt.Errorf("namespace %s: %w", namespace, k8sutil.ErrNamespaceNotWatched)
		}
		return cache.New(cfg, ReferenceCacheOptions(opts, mgr, namespace))
	})
	if err := mgr.Add(references); err != nil {
		return err
	}
	gatewayServed, why := gateway.CanRun(context.Background(), mgr)
	var grants nginx.ServiceGrants
	var routes *routetable.Table
	if gatewayServed {
		grants = gateway.ServiceGrants{Client: mgr.GetClient(), Kinds: gateway.ServedRouteKinds(mgr)}
		routes = routetable.New()
	}
	if err := nginx.SetupWithManager(mgr, nginx.Setup{
		Images:     nginx.Images{Nginx: opts.Images.Nginx, Exporter: opts.Images.Exporter, Agent: opts.Images.Agent, Reloader: opts.Images.Reloader},
		PodConfig:  podConfig,
		References: references,
		Operator:   nginx.OperatorPods{Namespace: opts.Namespace, Labels: PodLabels()},
		Grants:     grants,
		Routes:     routes,
		CertificateCache: func() (cache.Cache, error) {
			return cache.New(mgr.GetConfig(), CertificateCacheOptions(opts, mgr))
		},
	}); err != nil {
		return fmt.Errorf("setting up the NginxOperator controller: %w", err)
	}
	if gatewayServed {
		if err := gateway.SetupWithManager(mgr, gateway.Setup{References: references, Routes: routes}); err != nil {
			return fmt.Errorf("setting up the Gateway controllers: %w", err)
		}
	} else {
		mgr.GetLogger().Info("the Gateway controllers do not run: " + why + "; the operator checks at start only")
	}
	if err := monitor.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the NginxMonitor controller: %w", err)
	}
	if err := backup.SetupWithManager(mgr, opts.Images.Agent, opts.Images.Nginx); err != nil {
		return fmt.Errorf("setting up the NginxBackup controller: %w", err)
	}
	return nil
}

// podStatusTimeout bounds one request to a pod's reloader.
const podStatusTimeout = 2 * time.Second

// CacheOptions scope the informer cache: only the watched namespaces, and for
// child kinds only the objects the operator manages.
func CacheOptions(opts Options) cache.Options {
	c := cache.Options{ByObject: map[client.Object]cache.ByObject{}, DefaultTransform: TrimForCache}
	scopeToNamespaces(&c, opts)
	for _, obj := range ManagedKinds() {
		c.ByObject[obj] = cache.ByObject{Label: naming.ManagedSelector()}
	}
	// Namespaces (metadata only) are watched by the NginxMonitor controller
	// for namespaceSelector.labelSelector. They are cluster-scoped, so
	// --namespaces does not apply, and the apiserver refuses the
	// --deny-namespaces field selector (metadata.namespace) on them.
	c.ByObject[&corev1.Namespace{}] = cache.ByObject{Field: fields.Everything()}
	return c
}

// ReferenceCacheOptions scope the cache of the objects instances name in
// namespace, one of the watched namespaces (see k8sutil.NamespaceCaches):
// its Secrets, ConfigMaps and Services, which carry no label of the
// operator's, so they cannot share the managed cache (one informer per
// kind there, restricted by label). It holds their metadata only, trimmed
// to identity and version (nginx.TrimReference), and the namespace's
// EndpointSlices, trimmed to what an upstream is made of
// (nginx.TrimEndpointSlice).
func ReferenceCacheOptions(opts Options, mgr manager.Manager, namespace string) cache.Options {
	c := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(), DefaultTransform: nginx.TrimReference,
		ByObject: map[client.Object]cache.ByObject{&discoveryv1.EndpointSlice{}: {Transform: nginx.TrimEndpointSlice}}}
	scopeToNamespaces(&c, opts)
	c.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	return c
}

// CertificateCacheOptions scope the cache of cert-manager Certificates,
// which the NginxOperator controller starts once an instance asks for one
// and the API is served (it cannot be part of the managed cache, which
// fails to start without the CRD): the operator's own Certificates in the
// watched namespaces.
func CertificateCacheOptions(opts Options, mgr manager.Manager) cache.Options {
	c := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(), DefaultTransform: TrimForCache,
		ByObject: map[client.Object]cache.ByObject{&certmanager.Certificate{}: {Label: naming.ManagedSelector()}}}
	scopeToNamespaces(&c, opts)
	return c
}

// scopeToNamespaces restricts c to --namespaces and away from
// --deny-namespaces.
func scopeToNamespaces(c *cache.Options, opts Options) {
	if len(opts.Namespaces) > 0 {
		c.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.Namespaces {
			c.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if len(opts.DenyNamespaces) > 0 {
		var denied []fields.Selector
		for _, ns := range opts.DenyNamespaces {
			denied = append(denied, fields.OneTermNotEqualSelector("metadata.namespace", ns))
		}
		c.DefaultFieldSelector = fields.AndSelectors(denied...)
	}
}
