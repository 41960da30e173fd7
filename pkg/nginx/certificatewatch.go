package nginx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/certmanager"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
)

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=list;watch;create;patch;delete

// Reasons of condition CertificatesReady.
const (
	// ReasonCertificatesIssued: cert-manager says every Certificate is Ready.
	ReasonCertificatesIssued = "Issued"
	// ReasonCertificateNotReady: a Certificate is not (yet) Ready; the
	// message is cert-manager's.
	ReasonCertificateNotReady = "CertificateNotReady"
	// ReasonCertManagerNotInstalled: tls.issuerRef asks for a Certificate and
	// the API server does not serve cert-manager.io/v1 Certificates.
	ReasonCertManagerNotInstalled = "CertManagerNotInstalled"
)

// certManagerRecheck is how often an instance that asks for a Certificate
// looks again for cert-manager's API while it is not served: nothing else
// tells the operator that cert-manager was installed.
const certManagerRecheck = time.Minute

// errCertManagerNotInstalled: cert-manager's Certificate API is not served.
var errCertManagerNotInstalled = errors.New("tls.issuerRef asks cert-manager for a certificate, and the API server does not serve " +
	"cert-manager.io/v1 Certificates: install cert-manager, or name a Secret of your own")

// certificateAPI applies the instances' Certificates and watches them from
// the first reconcile that finds cert-manager's API served: the operator
// starts and runs without cert-manager, an instance without tls.issuerRef
// never touches its API, and a cert-manager installed later is found
// without a restart. Its cache holds only the operator's Certificates.
type certificateAPI struct {
	mgr ctrl.Manager
	// newCache builds the cache of Certificates, scoped as the operator's
	// other caches are.
	newCache func() (cache.Cache, error)
	// watch starts a source on the NginxOperator controller.
	watch func(source.TypedSource[ctrl.Request]) error

	mu      sync.Mutex
	applier *k8sutil.Applier
	reader  client.Reader
}

// start returns the Applier and the cache of Certificates, starting them on
// first use; errCertManagerNotInstalled while the API is not served.
func (c *certificateAPI) start(ctx context.Context) (*k8sutil.Applier, client.Reader, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.applier != nil {
		return c.applier, c.reader, nil
	}
	gvk := certmanager.GroupVersion.WithKind("Certificate")
	if _, err := c.mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
		return nil, nil, errCertManagerNotInstalled
	} else if err != nil {
		return nil, nil, err
	}
	certs, err := c.newCache()
	if err != nil {
		return nil, nil, err
	}
	if err := c.mgr.Add(certs); err != nil {
		return nil, nil, err
	}
	owner := handler.TypedEnqueueRequestForOwner[*certmanager.Certificate](c.mgr.GetScheme(), c.mgr.GetRESTMapper(),
		&v1beta1.NginxOperator{}, handler.OnlyControllerOwner())
	if err := c.watch(source.Kind(certs, &certmanager.Certificate{}, owner)); err != nil {
		return nil, nil, fmt.Errorf("watching cert-manager's Certificates: %w", err)
	}
	if !certs.WaitForCacheSync(ctx) {
		return nil, nil, errors.New("the cache of cert-manager's Certificates did not sync")
	}
	c.applier = &k8sutil.Applier{Client: c.mgr.GetClient(), Reader: certs, Live: c.mgr.GetAPIReader(), Scheme: c.mgr.GetScheme()}
	c.reader = certs
	return c.applier, c.reader, nil
}

// certificateReport is what an instance's CertificatesReady condition
// says; nil for an instance that asks for no Certificate.
type certificateReport struct {
	status          metav1.ConditionStatus
	reason, message string
}

// syncCertificates applies the Certificates nginx asks for, deletes the
// ones it asked for before and no longer does, and reports on them. An
// instance that asks for none costs nothing while cert-manager's API is
// not in use.
func (r *Reconciler) syncCertificates(ctx context.Context, nginx *v1beta1.NginxOperator) (*certificateReport, ctrl.Result, error) {
	wanted, err := Certificates(nginx)
	if err != nil || r.certificates == nil {
		return nil, ctrl.Result{}, err
	}
	if len(wanted) == 0 && !r.certificates.started() {
		return nil, ctrl.Result{}, nil
	}
	applier, reader, err := r.certificates.start(ctx)
	if errors.Is(err, errCertManagerNotInstalled) {
		return &certificateReport{metav1.ConditionFalse, ReasonCertManagerNotInstalled, err.Error()}, ctrl.Result{RequeueAfter: certManagerRecheck}, nil
	} else if err != nil {
		return nil, ctrl.Result{}, err
	}
	if err := r.deleteUnwantedCertificates(ctx, nginx, reader, wanted); err != nil || len(wanted) == 0 {
		return nil, ctrl.Result{}, err
	}
	live := make([]*certmanager.Certificate, 0, len(wanted))
	for _, cert := range wanted {
		answer := &certmanager.Certificate{}
		if _, err := applier.ApplyOwnedAnswer(ctx, r.Recorder, nginx, cert, answer); err != nil {
			return nil, ctrl.Result{}, err
		}
		if answer.ResourceVersion == "" {
			if err := reader.Get(ctx, client.ObjectKeyFromObject(cert), answer); err != nil {
				return nil, ctrl.Result{}, err
			}
		}
		live = append(live, answer)
	}
	status, reason, message := certificatesVerdict(live)
	return &certificateReport{status, reason, message}, ctrl.Result{}, nil
}

// started tells whether cert-manager's API is in use.
func (c *certificateAPI) started() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applier != nil
}

// deleteUnwantedCertificates deletes the Certificates nginx controls and
// no longer asks for.
func (r *Reconciler) deleteUnwantedCertificates(ctx context.Context, nginx *v1beta1.NginxOperator, reader client.Reader, wanted []*certmanager.Certificate) error {
	var owned certmanager.CertificateList
	if err := reader.List(ctx, &owned, client.InNamespace(nginx.Namespace), client.MatchingLabels(layout.Labels(nginx.Name))); err != nil {
		return err
	}
	for i := range owned.Items {
		cert := &owned.Items[i]
		stillWanted := slices.ContainsFunc(wanted, func(w *certmanager.Certificate) bool { return w.Name == cert.Name })
		if !metav1.IsControlledBy(cert, nginx) || stillWanted {
			continue
		}
		if err := r.Client.Delete(ctx, cert, client.Preconditions{UID: &cert.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// setCertificatesCondition sets CertificatesReady from report, and removes
// it from an instance that asks for no Certificate.
func setCertificatesCondition(nginx *v1beta1.NginxOperator, report *certificateReport) {
	if report == nil {
		meta.RemoveStatusCondition(&nginx.Status.Conditions, v1beta1.ConditionCertificatesReady)
		return
	}
	setCondition(nginx, v1beta1.ConditionCertificatesReady, report.status, report.reason, report.message)
}
