package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/backup/storage"
)

// Request says what one backup run archives and where it goes.
type Request struct {
	Location
	OperatorVersion string
	Image           string          // the instance's nginx image
	Spec            json.RawMessage // the instance's spec, as stored
	// ConfigDir holds the rendered nginx.conf and the referenced ConfigMaps'
	// files (Secrets only by reference, never their data); "" skips it.
	ConfigDir string
	// ContentDir is the content volume's root; "" skips it.
	ContentDir string
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Record is what a successful run reports (the NginxBackup status entry).
type Record struct {
	ID             string
	Location       string // key prefix of the run, "<prefix>/<ns>/<instance>/<id>/"
	StartTime      time.Time
	CompletionTime time.Time
	SizeBytes      int64  // all files of the artifact, manifest included
	SHA256         string // of manifest.json, which pins every other file
	Manifest       Manifest
}

// Backup archives and uploads one run. The manifest is uploaded only after
// every other file was stored and its size confirmed, so a run that fails or
// is killed anywhere before that never looks complete. On failure it deletes
// what it had uploaded (best effort; Prune cleans what is left).
func Backup(ctx context.Context, st storage.Storage, req Request) (Record, error) {
	if err := req.Location.validate(); err != nil {
		return Record{}, err
	}
	if req.ConfigDir == "" && req.ContentDir == "" {
		return Record{}, errors.New("backup: nothing to back up (no config or content directory)")
	}
	now := req.Now
	if now == nil {
		now = time.Now
	}
	start := now().UTC()
	id := NewID(start)
	m := Manifest{
		FormatVersion:   FormatVersion,
		OperatorVersion: req.OperatorVersion,
		ID:              id,
		Namespace:       req.Namespace,
		Instance:        req.Instance,
		Image:           req.Image,
		Spec:            req.Spec,
		StartTime:       start,
	}
	var uploaded []string
	fail := func(err error) (Record, error) {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, k := range uploaded {
			_ = st.Delete(cleanup, k) // best effort: incomplete anyway without a manifest
		}
		return Record{}, fmt.Errorf("backup %s/%s %s: %w", req.Namespace, req.Instance, id, err)
	}
	if err := uploadParts(ctx, st, req, &m, &uploaded); err != nil {
		return fail(err)
	}
	m.CreationTime = now().UTC()
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fail(err)
	}
	sum := sha256.Sum256(body)
	if err := ctx.Err(); err != nil { // do not publish a run the caller gave up on
		return fail(err)
	}
	if _, err := st.Put(ctx, req.Key(id, ManifestFile), bytes.NewReader(body)); err != nil {
		uploaded = append(uploaded, req.Key(id, ManifestFile))
		return fail(fmt.Errorf("%s: %w", ManifestFile, err))
	}
	size := int64(len(body))
	for _, f := range m.Files {
		size += f.Size
	}
	return Record{
		ID:             id,
		Location:       req.Location.dir() + id + "/",
		StartTime:      start,
		CompletionTime: m.CreationTime,
		SizeBytes:      size,
		SHA256:         hex.EncodeToString(sum[:]),
		Manifest:       m,
	}, nil
}

// uploadParts uploads the archives req asks for (the configuration, the
// content) and lists them in m. Each key is added to uploaded before its
// upload starts, so a failed run deletes a partial object too.
func uploadParts(ctx context.Context, st storage.Storage, req Request, m *Manifest, uploaded *[]string) error {
	for _, part := range []struct{ name, dir string }{{ConfigFile, req.ConfigDir}, {ContentFile, req.ContentDir}} {
		if part.dir == "" {
			continue
		}
		key := req.Key(m.ID, part.name)
		*uploaded = append(*uploaded, key)
		f, err := uploadTree(ctx, st, key, part.dir)
		if err != nil {
			return fmt.Errorf("%s: %w", part.name, err)
		}
		f.Name = part.name
		m.Files = append(m.Files, f)
	}
	return nil
}

// errUploadStopped ends the archiver of a tree whose upload returned.
var errUploadStopped = errors.New("the upload stopped reading the archive")

// uploadTree streams a tar.gz of dir into key, hashing on the way, and
// checks the storage stored exactly the bytes produced.
func uploadTree(ctx context.Context, st storage.Storage, key, dir string) (FileEntry, error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := writeTarGz(ctx, pw, dir)
		pw.CloseWithError(err) // nil closes with io.EOF
		done <- err
	}()
	h := sha256.New()
	var counted countWriter
	n, err := st.Put(ctx, key, io.TeeReader(pr, io.MultiWriter(h, &counted)))
	pr.CloseWithError(errUploadStopped) // unblocks the archiver if Put returned early
	archErr := <-done
	switch {
	case err != nil:
		// The storage's error is the cause; the archiver's, if any, is
		// then only that nobody reads any more.
		return FileEntry{}, err
	case archErr != nil:
		return FileEntry{}, archErr
	case n != int64(counted):
		return FileEntry{}, fmt.Errorf("storage stored %d bytes, archive has %d", n, counted)
	}
	return FileEntry{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
