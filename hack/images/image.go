package main

import (
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Layer is one layer of an image: its entries and the history line that
// says where they come from (what `docker history` or `crane config` shows).
type Layer struct {
	CreatedBy string
	Entries   []Entry
}

// Spec is everything an image is made of. Each image's builder (operator.go,
// nginx.go, exporter.go, pause.go) returns one; assemble turns it into an
// image without looking at the build machine.
type Spec struct {
	Layers []Layer
	Config v1.Config
}

// defaultPath is the PATH of Debian-based images and of distroless: the
// kubelet resolves a container's command (nginx's is plain "nginx") with it.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// assemble builds an OCI image for platform, which is what the config
// states: the spec's binaries must have been built for it. created is the
// image's creation time and every file's modification time: fixed, so that
// the digest depends on the content only.
func assemble(spec Spec, platform v1.Platform, created time.Time) (v1.Image, error) {
	created = created.UTC().Truncate(time.Second)
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: platform.Architecture,
		OS:           platform.OS,
		Variant:      platform.Variant,
		Created:      v1.Time{Time: created},
		Config:       spec.Config,
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	set := newLayerSet()
	adds := make([]mutate.Addendum, 0, len(spec.Layers))
	for _, l := range spec.Layers {
		entries, err := set.normalise(l.Entries)
		if err != nil {
			return nil, fmt.Errorf("layer %q: %w", l.CreatedBy, err)
		}
		layer, err := newLayer(entries, created)
		if err != nil {
			return nil, fmt.Errorf("layer %q: %w", l.CreatedBy, err)
		}
		adds = append(adds, mutate.Addendum{
			Layer:     layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: l.CreatedBy},
		})
	}
	return mutate.Append(img, adds...)
}

// platformImage is an image and the platform it runs on.
type platformImage struct {
	platform v1.Platform
	image    v1.Image
}

// imageIndex combines images of one program for several platforms into an
// OCI image index, in the order given: a pull by the index's reference gets
// the image of the puller's platform. Each entry's platform is the one its
// image's config states, which clients compare with theirs before pulling
// the config. The index holds digests only, so it is as reproducible as its
// images.
func imageIndex(images []platformImage) v1.ImageIndex {
	adds := make([]mutate.IndexAddendum, len(images))
	for i, pi := range images {
		p := pi.platform
		adds[i] = mutate.IndexAddendum{Add: pi.image, Descriptor: v1.Descriptor{Platform: &p}}
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
}
