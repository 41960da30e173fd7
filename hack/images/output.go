package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeTarball writes img to dir/<file>.tar in the docker-archive format
// (manifest.json naming ref), which `ctr -n k8s.io images import`, `docker
// load` and `crane push` read. The file appears complete or not at all.
func writeTarball(dir, file string, ref name.Tag, img v1.Image) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, file+".tar")
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return out, os.Rename(tmp, out)
}

// push uploads img to ref with the credentials of the Docker configuration
// (~/.docker/config.json, credential helpers): what `docker login` or
// `crane auth login` stored.
func push(ctx context.Context, ref name.Reference, img v1.Image, opts ...remote.Option) error {
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.Write(ref, img, opts...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// pushIndex uploads idx and its images to ref, as push does an image.
func pushIndex(ctx context.Context, ref name.Reference, idx v1.ImageIndex) error {
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// imageSize is what a pull transfers: the manifest, the config and the
// compressed layers.
func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	size := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}

// deliver writes img to the -out directory and pushes it as asked, then
// prints one line: the image's name, its reference with the manifest
// digest, its image ID, the size a pull transfers, and where it went.
func deliver(ctx context.Context, o options, n string, ref name.Tag, img v1.Image, stdout io.Writer) error {
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	// The config digest is the image ID (`crictl images`, `docker images`).
	// It is what a tarball keeps: a docker archive holds the config and the
	// layers but no manifest, and the importer writes a manifest of its own,
	// so the manifest digest is the one a push gives, not the one
	// `ctr images import` shows.
	id, err := img.ConfigName()
	if err != nil {
		return err
	}
	size, err := imageSize(img)
	if err != nil {
		return err
	}
	var where []string
	if o.out != "" {
		file, err := writeTarball(o.out, n, ref, img)
		if err != nil {
			return err
		}
		where = append(where, file)
	}
	if o.push {
		if err := push(ctx, ref, img); err != nil {
			return err
		}
		where = append(where, "pushed")
	}
	_, err = fmt.Fprintf(stdout, "%-8s  %s@%s  id %s  %.1f MB  %s\n", n, ref.Name(), digest, id, float64(size)/1e6, strings.Join(where, ", "))
	return err
}

// localImage is the image of a multi-platform set that the docker archive
// holds: the build machine's, which the tests and `make run` start here, or
// the first platform's when the build machine's is not among them (a
// docker archive holds one image per reference).
func localImage(images []platformImage) platformImage {
	for _, pi := range images {
		if pi.platform.Equals(hostPlatform()) {
			return pi
		}
	}
	return images[0]
}

// deliverIndex writes the multi-platform image n to the -out directory,
// as a docker archive of the local image (NAME.tar, what `ctr images
// import` loads and the tests use) and as an OCI archive of the whole index
// (NAME.oci.tar), and pushes the index as asked. Its line names the index
// digest (what a push gives and a pull by digest names), the platforms, and
// the local image's platform, ID and size, which the docker archive keeps.
func deliverIndex(ctx context.Context, o options, n string, ref name.Tag, images []platformImage, created time.Time, stdout io.Writer) error {
	idx := imageIndex(images)
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	local := localImage(images)
	id, err := local.image.ConfigName()
	if err != nil {
		return err
	}
	size, err := imageSize(local.image)
	if err != nil {
		return err
	}
	platforms := make([]v1.Platform, len(images))
	for i, pi := range images {
		platforms[i] = pi.platform
	}
	var where []string
	if o.out != "" {
		file, err := writeTarball(o.out, n, ref, local.image)
		if err != nil {
			return err
		}
		oci, err := writeOCIArchive(o.out, n, ref, idx, created)
		if err != nil {
			return err
		}
		where = append(where, file, oci)
	}
	if o.push {
		if err := pushIndex(ctx, ref, idx); err != nil {
			return err
		}
		where = append(where, "pushed")
	}
	_, err = fmt.Fprintf(stdout, "%-8s  %s@%s  index %s  %s id %s  %.1f MB  %s\n", n, ref.Name(), digest,
		platformList(platforms), local.platform, id, float64(size)/1e6, strings.Join(where, ", "))
	return err
}
