package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Annotations of index.json's entry that name the image: containerd's
// importer takes the full reference from the first, skopeo's oci-archive:
// transport looks up the tag in the second (the OCI image layout's own).
const (
	containerdImageName = "io.containerd.image.name"
	ociRefName          = "org.opencontainers.image.ref.name"
)

// writeOCIArchive writes idx to dir/<file>.oci.tar: a tar of an OCI image
// layout whose index.json has one entry, idx, named ref. That is what
// `ctr images import --all-platforms` and `skopeo copy oci-archive:` read,
// with every platform's image (a docker archive holds one). The archive's
// files have fixed times, owners and modes and are in lexical order, so the
// same index gives the same bytes. The file appears complete or not at all.
func writeOCIArchive(dir, file string, ref name.Tag, idx v1.ImageIndex, mtime time.Time) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, file+".oci.tar")
	layoutDir, err := os.MkdirTemp(dir, "."+file+".oci-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(layoutDir)
	p, err := layout.Write(layoutDir, empty.Index)
	if err != nil {
		return "", fmt.Errorf("writing the OCI layout of %s: %w", out, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{containerdImageName: ref.Name(), ociRefName: ref.TagStr()})); err != nil {
		return "", fmt.Errorf("writing the OCI layout of %s: %w", out, err)
	}
	tmp := out + ".tmp"
	if err := tarDirectory(layoutDir, tmp, mtime); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return out, os.Rename(tmp, out)
}

// tarDirectory writes the tree under root to the tar file out, with paths
// relative to root, root's own entry left out, owned by root:root.
func tarDirectory(root, out string, mtime time.Time) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	// WalkDir visits in lexical order.
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Format: tar.FormatUSTAR}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		case d.Type().IsRegular():
			return tarFile(tw, hdr, p)
		}
		return fmt.Errorf("%s: not a file or directory", p)
	})
	if err := tw.Close(); err != nil && walkErr == nil {
		walkErr = err
	}
	if err := f.Close(); err != nil && walkErr == nil {
		walkErr = err
	}
	return walkErr
}

func tarFile(tw *tar.Writer, hdr *tar.Header, p string) error {
	src, err := os.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}
