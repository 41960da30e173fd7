package conversion

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/nginx-operator/nginx-operator/pkg/fsutil"
)

// certFiles are where the webhook server reads its certificate.
// controller-runtime's certwatcher notices when they change and reloads.
type certFiles struct {
	Dir, CertName, KeyName string
}

// same reports whether the files already hold certPEM and keyPEM.
func (f certFiles) same(certPEM, keyPEM []byte) bool {
	cert, err1 := os.ReadFile(filepath.Join(f.Dir, f.CertName))
	key, err2 := os.ReadFile(filepath.Join(f.Dir, f.KeyName))
	return err1 == nil && err2 == nil && bytes.Equal(cert, certPEM) && bytes.Equal(key, keyPEM)
}

// write replaces both files, each atomically (fsutil.WriteFile), so the
// watcher never reads a half-written file. It may briefly see a new key with
// the old certificate; it then keeps serving the old pair until the second
// file lands and the pair matches again.
func (f certFiles) write(certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return err
	}
	if err := fsutil.WriteFile(filepath.Join(f.Dir, f.KeyName), keyPEM, 0o600); err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(f.Dir, f.CertName), certPEM, 0o644)
}
