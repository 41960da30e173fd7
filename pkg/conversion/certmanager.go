package conversion

import (
	"context"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// certManager keeps the Secret, the files and the CRD's caBundle in step.
type certManager struct {
	opts   Options
	client client.Client
	files  certFiles
	log    logr.Logger
	now    func() time.Time

	// mu serialises file writes: the leader's injector and the syncer both
	// write, in the same process.
	mu sync.Mutex
}

func newCertManager(opts Options, c client.Client, files certFiles, log logr.Logger) *certManager {
	return &certManager{opts: opts, client: c, files: files, log: log, now: time.Now}
}

func (m *certManager) secretKey() client.ObjectKey {
	return client.ObjectKey{Namespace: m.opts.Namespace, Name: m.opts.SecretName}
}

func (m *certManager) plan(rotate bool) certPlan {
	return certPlan{Names: m.opts.names(), Now: m.now(), Validity: m.opts.Validity, Rotate: rotate}
}

// bootstrap runs on every replica before the manager starts. It does not
// rotate a certificate that is merely near expiry — that needs the leader
// to update the caBundle first — but it creates or repairs one that cannot
// serve at all, and writes the files unconditionally: without them the
// webhook server cannot start.
func (m *certManager) bootstrap(ctx context.Context) error {
	secret, err := ensureSecret(ctx, m.client, m.secretKey(), m.plan(false), m.log)
	if err != nil {
		return fmt.Errorf("conversion webhook certificate: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.files.write(secret.Data[keyTLSCert], secret.Data[keyTLSKey]); err != nil {
		return fmt.Errorf("writing the webhook certificate to %s: %w", m.files.Dir, err)
	}
	m.log.Info("webhook serving certificate written", "dir", m.files.Dir, "secret", m.secretKey(), "notAfter", notAfter(secret.Data))
	m.trustAtStart(ctx, secret)
	return nil
}

// trustAtStart makes the CRD's conversion settings trust the certificate
// before the manager starts. The leader's injector does this too, but only
// once the caches have synced, and listing NginxOperators stored as
// v1alpha1 goes through this very webhook: on a cluster whose CRD does not
// trust it yet (the book's objects, a CRD applied anew, a lost caBundle)
// the caches would wait for the webhook and the injector for the caches.
// Every replica may write here: the caBundle comes from the one Secret, so
// they all write the same. A failure is left to the injector, which retries.
func (m *certManager) trustAtStart(ctx context.Context, secret *corev1.Secret) {
	if _, err := m.trust(ctx, secret); err != nil {
		m.log.Info("the CRD's conversion settings could not be set at start; the leader retries", "crd", m.opts.CRDName, "err", err)
	}
}

// reconcile is one pass of the leader: rotate the certificate if due, make
// the CRD's spec.conversion trust it, then serve it. The order matters: the
// CA is in the caBundle before any replica serves a certificate it signed.
func (m *certManager) reconcile(ctx context.Context) error {
	secret, err := ensureSecret(ctx, m.client, m.secretKey(), m.plan(true), m.log)
	if err != nil {
		return err
	}
	bundle, err := m.trust(ctx, secret)
	if err != nil {
		return err
	}
	return m.serve(secret, bundle)
}

// trust makes the CRD's spec.conversion call the webhook and trust the CAs
// of secret, and returns that caBundle.
func (m *certManager) trust(ctx context.Context, secret *corev1.Secret) ([]byte, error) {
	bundle := caBundle(secret.Data, m.now())
	patched, err := ensureConversion(ctx, m.client, m.opts.CRDName, desiredConversion(m.opts, bundle))
	if err != nil {
		return nil, err
	}
	if patched {
		m.log.Info("CRD conversion webhook configured", "crd", m.opts.CRDName, "url", m.opts.URL,
			"service", m.opts.Namespace+"/"+m.opts.ServiceName, "caCertificates", countCerts(bundle))
	}
	return bundle, nil
}

// syncFiles is one pass of every replica: load a changed certificate from
// the Secret once the apiserver trusts it.
func (m *certManager) syncFiles(ctx context.Context) error {
	secret := &corev1.Secret{}
	if err := m.client.Get(ctx, m.secretKey(), secret); err != nil {
		return fmt.Errorf("reading Secret %s: %w", m.secretKey(), err)
	}
	if m.files.same(secret.Data[keyTLSCert], secret.Data[keyTLSKey]) {
		return nil
	}
	bundle, err := crdCABundle(ctx, m.client, m.opts.CRDName)
	if err != nil {
		return err
	}
	return m.serve(secret, bundle)
}

// serve writes the Secret's certificate to the files when they differ and
// bundle, the caBundle the CRD holds, trusts it. Until then the replica keeps
// serving its current certificate, which the caBundle still trusts.
func (m *certManager) serve(secret *corev1.Secret, bundle []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cert, key := secret.Data[keyTLSCert], secret.Data[keyTLSKey]
	if m.files.same(cert, key) {
		return nil
	}
	if !trusts(bundle, cert, m.now()) {
		m.log.Info("new webhook serving certificate not trusted by the CRD's caBundle yet; serving the current one until the leader updates it",
			"secret", m.secretKey(), "crd", m.opts.CRDName)
		return nil
	}
	if err := m.files.write(cert, key); err != nil {
		return fmt.Errorf("writing the webhook certificate to %s: %w", m.files.Dir, err)
	}
	m.log.Info("webhook serving certificate updated", "dir", m.files.Dir, "notAfter", notAfter(secret.Data))
	return nil
}

// countCerts is the number of PEM blocks in bundle, for log lines.
func countCerts(bundle []byte) int {
	n := 0
	for block, rest := pem.Decode(bundle); block != nil; block, rest = pem.Decode(rest) {
		n++
	}
	return n
}

// injector is the leader's periodic reconcile.
func (m *certManager) injector() *periodic {
	return &periodic{name: "CRD conversion and certificate rotation", leader: true, interval: m.opts.ResyncInterval, fn: m.reconcile, log: m.log}
}

// fileSyncer is every replica's periodic Secret re-read. Its first pass waits
// an interval: bootstrap has just written the files.
func (m *certManager) fileSyncer() *periodic {
	return &periodic{name: "certificate file sync", interval: m.opts.ResyncInterval, fn: m.syncFiles, log: m.log, delayFirst: true}
}
