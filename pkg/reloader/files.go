package reloader

// The files a configuration needs. The operator copies every file nginx
// reads of the objects an instance references (certificates, keys, CA
// certificates, htpasswd files) into the instance's files Secrets, which
// the pods mount as one directory (Options.Files), and heads nginx.conf
// with a manifest: the name and SHA-256 of each file it names, never their
// content. A new configuration reaches a pod at once (a push), and the
// files it needs when the kubelet next refreshes the pod's volumes
// (seconds after the operator's nudge): the reloader loads a configuration
// only once the directory holds every file of its manifest with that very
// digest, and says meanwhile what it waits for (Status.WaitingHash), so
// that a configuration that names a file the pod does not have yet is
// neither refused nor loaded with another file's content.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is one file of a manifest: its name in the files directory and the
// hex SHA-256 of its content.
type File struct {
	Name, SHA256 string
}

// Manifest lines: a header, then one line per file. nginx reads them as
// comments.
const (
	manifestHeader = "# nginx-operator: loaded once these files are in the files directory with these SHA-256 digests"
	manifestFile   = "# file "
)

// maxFileName is the longest file name a manifest may hold (a Secret's
// key).
const maxFileName = 253

// WithManifest heads config with the manifest of files (none: config as
// it is). Names must be ValidFileName's.
func WithManifest(config []byte, files []File) []byte {
	if len(files) == 0 {
		return config
	}
	var b bytes.Buffer
	b.WriteString(manifestHeader + "\n")
	for _, f := range files {
		fmt.Fprintf(&b, "%s%s %s\n", manifestFile, f.Name, f.SHA256)
	}
	b.Write(config)
	return b.Bytes()
}

// Digest is the hex SHA-256 a manifest records for data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ManifestOf reads the manifest at the head of config: the "# file" lines
// among the comment lines before its first directive. A line that names a
// file outside the files directory, or has no digest, is an error.
func ManifestOf(config []byte) ([]File, error) {
	var out []File
	s := bufio.NewScanner(bytes.NewReader(config))
	s.Buffer(make([]byte, 0, 4096), 64<<10)
	for s.Scan() {
		line := s.Text()
		rest, ok := strings.CutPrefix(line, manifestFile)
		if !ok {
			if strings.HasPrefix(line, "#") {
				continue
			}
			break
		}
		name, digest, ok := strings.Cut(rest, " ")
		if !ok || !ValidFileName(name) || !validDigest(digest) {
			return nil, fmt.Errorf("the configuration's files manifest has an invalid line %q", line)
		}
		out = append(out, File{Name: name, SHA256: digest})
	}
	return out, nil
}

// ValidFileName tells whether name can be a file of the files directory:
// a Secret's key ([-._a-zA-Z0-9], at most 253 characters) that is not one
// of the kubelet's own entries ("..<name>"), so it is one path element
// inside the directory.
func ValidFileName(name string) bool {
	if name == "" || name == "." || strings.HasPrefix(name, "..") || len(name) > maxFileName {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

func validDigest(d string) bool {
	if len(d) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(d)
	return err == nil
}

// maxWaitingNames bounds the names Status.WaitingFor lists.
const maxWaitingNames = 10

// filesOf reads, for the manifest of config, each file of the files
// directory dir: it writes the name and digest of each to h (or that it is
// missing) and returns the files whose content is not (yet) what the
// manifest says, by name. A config without a manifest needs no file; one
// whose manifest cannot be read, or that names files where there is no
// files directory, waits for what that says (it cannot be loaded safely,
// and the operator never writes one).
func filesOf(config []byte, dir string, h io.Writer) (waiting []string, err error) {
	files, err := ManifestOf(config)
	if err != nil {
		fmt.Fprintf(h, "manifest: %v\n", err)
		return []string{err.Error()}, nil
	}
	if len(files) > 0 && dir == "" {
		return []string{"a files directory (this reloader has no -files)"}, nil
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(h, "file %s missing\n", f.Name)
			waiting = append(waiting, f.Name)
			continue
		case err != nil:
			return nil, err
		}
		digest := Digest(data)
		fmt.Fprintf(h, "file %s %s\n", f.Name, digest)
		if digest != f.SHA256 {
			waiting = append(waiting, f.Name)
		}
	}
	return waiting, nil
}

// waitingNames are the first maxWaitingNames of names, and how many more
// there are.
func waitingNames(names []string) []string {
	if len(names) <= maxWaitingNames {
		return names
	}
	return append(names[:maxWaitingNames:maxWaitingNames], fmt.Sprintf("(and %d more)", len(names)-maxWaitingNames))
}
