package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// builder builds the Go binaries the images need.
type builder struct {
	root              string
	version, revision string
	// src is the module tree the operator image's binaries are built
	// from: root, or an earlier release's tree (-src).
	src string
}

// goBinary builds pkg for linux/goarch.
func (b *builder) goBinary(ctx context.Context, pkg, ldflags, goarch string) ([]byte, error) {
	return b.goBinaryFrom(ctx, b.root, pkg, ldflags, goarch)
}

// goBinaryFrom is goBinary from the module tree src.
func (b *builder) goBinaryFrom(ctx context.Context, src, pkg, ldflags, goarch string) ([]byte, error) {
	bin, err := goBuild(ctx, src, pkg, ldflags, goarch)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(bin)
}

// imageDef is one image the command builds.
type imageDef struct {
	name string
	// repository under -registry; empty for the operator, whose repository
	// is bundle.yaml's.
	repository string
	// multiPlatform images are built for every -platforms platform and
	// combined into an image index; the others are built for the build
	// machine only, as they are assembled from its Debian packages.
	multiPlatform bool
	build         func(context.Context, *builder, v1.Platform) (Spec, error)
}

// images are the images the command builds, in the order it builds them
// and -only names them.
var images = []imageDef{
	{name: "operator", multiPlatform: true, build: func(ctx context.Context, b *builder, p v1.Platform) (Spec, error) {
		start := time.Now()
		bin, err := b.goBinaryFrom(ctx, b.src, "./cmd/operator", operatorLDFlags(b.version, b.revision), p.Architecture)
		if err != nil {
			return Spec{}, err
		}
		// Releases before the reloader (v0.2.0) have none to add.
		var reloader []byte
		if _, err := os.Stat(filepath.Join(b.src, reloaderPackage)); err == nil {
			if reloader, err = b.goBinaryFrom(ctx, b.src, reloaderPackage, reloaderLDFlags, p.Architecture); err != nil {
				return Spec{}, err
			}
		}
		built := "./cmd/operator " + b.version
		if reloader != nil {
			built += " and " + reloaderPackage
		}
		fmt.Fprintf(os.Stderr, "images: built %s for %s in %s\n", built, p, time.Since(start).Round(time.Second))
		return operatorSpec(bin, reloader, b.version, b.revision)
	}},
	{name: "nginx", repository: "nginx", build: func(context.Context, *builder, v1.Platform) (Spec, error) { return nginxSpec() }},
	{name: "exporter", repository: "nginx-prometheus-exporter", build: func(context.Context, *builder, v1.Platform) (Spec, error) { return exporterSpec() }},
	{name: "pause", repository: "pause", build: func(ctx context.Context, b *builder, p v1.Platform) (Spec, error) {
		bin, err := b.goBinary(ctx, pausePackage, "-s -w", p.Architecture)
		if err != nil {
			return Spec{}, err
		}
		return pauseSpec(bin), nil
	}},
}

func imageNames() []string {
	names := make([]string, len(images))
	for i, d := range images {
		names[i] = d.name
	}
	return names
}

func findImage(n string) *imageDef {
	for i := range images {
		if images[i].name == n {
			return &images[i]
		}
	}
	return nil
}
