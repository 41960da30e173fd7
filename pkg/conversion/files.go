package conversion

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// write replaces both files, each atomically (write then rename), so the
// watcher never reads a half-written file. It may briefly see a new key with
// the old certificate; it then keeps serving the old pair until the second
// file lands and the pair matches again.
func (f certFiles) write(certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(f.Dir, f.KeyName), keyPEM, 0o600); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(f.Dir, f.CertName), certPEM, 0o644)
}

func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), perm)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
