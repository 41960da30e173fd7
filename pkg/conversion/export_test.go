package conversion

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Hooks for the integration tests in package conversion_test. Those tests
// live outside this package because they run pkg/operator's manager, and
// pkg/operator may import this package.

const (
	KeyCACert        = keyCACert
	KeyTLSCert       = keyTLSCert
	KeyPreviousCA    = keyPreviousCA
	CompressedPrefix = compressedPrefix
)

var (
	Trusts    = trusts
	ParseCert = parseCert
	BigBeta   = bigBeta
)

// WithDefaults is opts as Setup completes them.
func WithDefaults(opts Options) (Options, error) { return opts.withDefaults() }

// IssueCertificates is the Secret data Setup would create for opts at now.
func IssueCertificates(opts Options, now time.Time) (map[string][]byte, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	data, _, err := certPlan{Names: o.names(), Now: now, Validity: o.Validity}.apply(nil)
	return data, err
}

// ReconcileOnce is one pass of the leader's injector, then one of the file
// sync every replica runs, through c, for an operator set up with opts
// (CertDir included).
func ReconcileOnce(ctx context.Context, c client.Client, opts Options) error {
	o, err := opts.withDefaults()
	if err != nil {
		return err
	}
	m := newCertManager(o, c, certFiles{Dir: o.CertDir, CertName: "tls.crt", KeyName: "tls.key"}, logr.Discard())
	if err := m.reconcile(ctx); err != nil {
		return err
	}
	return m.syncFiles(ctx)
}
