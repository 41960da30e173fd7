package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// builder builds the Go binaries the images need, in a temporary directory.
type builder struct {
	root, tmp         string
	version, revision string
}

func (b *builder) goBinary(ctx context.Context, pkg, ldflags string) ([]byte, error) {
	out := filepath.Join(b.tmp, filepath.Base(pkg))
	if err := goBuild(ctx, b.root, pkg, out, ldflags); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// imageDef is one image the command builds.
type imageDef struct {
	name string
	// repository under -registry; empty for the operator, whose repository
	// is bundle.yaml's.
	repository string
	build      func(context.Context, *builder) (Spec, error)
}

// images are the images the command builds, in the order it builds them
// and -only names them.
var images = []imageDef{
	{name: "operator", build: func(ctx context.Context, b *builder) (Spec, error) {
		start := time.Now()
		bin, err := b.goBinary(ctx, "./cmd/operator", operatorLDFlags(b.version, b.revision))
		if err != nil {
			return Spec{}, err
		}
		reloader, err := b.goBinary(ctx, reloaderPackage, reloaderLDFlags)
		if err != nil {
			return Spec{}, err
		}
		fmt.Fprintf(os.Stderr, "images: built ./cmd/operator %s and %s in %s\n", b.version, reloaderPackage, time.Since(start).Round(time.Second))
		return operatorSpec(bin, reloader, b.version, b.revision)
	}},
	{name: "nginx", repository: "nginx", build: func(context.Context, *builder) (Spec, error) { return nginxSpec() }},
	{name: "exporter", repository: "nginx-prometheus-exporter", build: func(context.Context, *builder) (Spec, error) { return exporterSpec() }},
	{name: "pause", repository: "pause", build: func(ctx context.Context, b *builder) (Spec, error) {
		bin, err := b.goBinary(ctx, pausePackage, "-s -w")
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
