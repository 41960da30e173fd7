// Command images builds the project's container images without Docker: the
// operator image (which is also the backup agent), and the nginx, exporter
// and pause images that tests running real pods load into containerd
// instead of pulling them. It writes docker-archive tarballs
// (`ctr -n k8s.io images import DIR/NAME.tar`) and can push to a registry.
//
//	go run ./hack/images -out bin/images
//	go run ./hack/images -registry registry.example.com/team -tag dev -push -only operator
//	go run ./hack/images -out bin/images -only operator -platforms linux/arm64
//
// The operator image holds what the Dockerfile's build holds, cross-compiled
// for each of -platforms and combined into an OCI image index; the other
// three are assembled from Debian packages of the build machine, for its
// architecture only, and are meant for tests only. Images are reproducible:
// the same inputs give the same digest (see creationTime).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	out, registry, tag string
	push, insecure     bool
	only               []string
	platforms          []v1.Platform
	version, revision  string
	src                string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var only, platforms string
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "out", "", "write DIR/<image>.tar (docker-archive, for `ctr -n k8s.io images import`; the operator's holds this machine's platform) and DIR/operator.oci.tar (the operator's image index, an OCI layout)")
	fs.StringVar(&o.registry, "registry", "", "registry path of every image (default: the one of bundle.yaml's operator image, from "+managerKustomization+")")
	fs.StringVar(&o.tag, "tag", "", "tag of every image (default: the tag of bundle.yaml's operator image)")
	fs.BoolVar(&o.push, "push", false, "push the images to -registry with the Docker configuration's credentials")
	fs.BoolVar(&o.insecure, "insecure", false, "push over plain HTTP (localhost registries use it anyway)")
	fs.StringVar(&only, "only", "", "comma-separated images to build (default all: "+strings.Join(imageNames(), ",")+")")
	fs.StringVar(&platforms, "platforms", defaultPlatforms, "comma-separated platforms of the operator image index (the test images are built for this machine's only)")
	fs.StringVar(&o.version, "version", "", "operator version stamped into the binary and the image label (default: git describe, as the Makefile's VERSION)")
	fs.StringVar(&o.src, "src", "", "build the operator image's binaries from this module tree instead, such as an earlier release's (a tree without cmd/nginx-reloader gives an image without it); give -version and -revision too")
	fs.StringVar(&o.revision, "revision", "", "operator source revision (default: git rev-parse HEAD, as the Makefile's REVISION)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./hack/images -out DIR [-registry REG] [-tag TAG] [-push] [-only NAMES] [-platforms LIST]\n\n")
		fs.PrintDefaults()
	}
	err := fs.Parse(args)
	if err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.out == "" && !o.push {
		return o, errors.New("nothing to do: give -out DIR, -push, or both")
	}
	if o.platforms, err = parsePlatforms(platforms); err != nil {
		return o, fmt.Errorf("-platforms: %w", err)
	}
	o.only = imageNames()
	if only != "" {
		o.only = nil
		for _, n := range strings.Split(only, ",") {
			n = strings.TrimSpace(n)
			if findImage(n) == nil {
				return o, fmt.Errorf("-only: unknown image %q (images: %s)", n, strings.Join(imageNames(), ", "))
			}
			o.only = append(o.only, n)
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	registry, operatorRepo, tag, err := bundleImage(root)
	if err != nil {
		return err
	}
	if o.registry != "" {
		registry = strings.TrimSuffix(o.registry, "/")
	}
	if o.tag != "" {
		tag = o.tag
	}
	created, err := creationTime()
	if err != nil {
		return err
	}
	version, revision := o.version, o.revision
	if version == "" || revision == "" {
		gitV, gitR := gitVersion(root)
		version, revision = or(version, gitV), or(revision, gitR)
	}
	b := &builder{root: root, version: version, revision: revision, src: or(o.src, root)}

	for _, n := range o.only {
		def := findImage(n)
		repo := def.repository
		if repo == "" {
			repo = operatorRepo
		}
		ref, err := reference(registry, repo, tag, o.insecure)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if err := buildAndDeliver(ctx, o, b, def, ref, created, stdout); err != nil {
			return fmt.Errorf("%s image: %w", n, err)
		}
	}
	return nil
}

// buildAndDeliver builds def's image for each of its platforms and delivers
// it: a multi-platform image as an index, any other as the one image.
func buildAndDeliver(ctx context.Context, o options, b *builder, def *imageDef, ref name.Tag, created time.Time, stdout io.Writer) error {
	platforms := []v1.Platform{hostPlatform()}
	if def.multiPlatform {
		platforms = o.platforms
	}
	images := make([]platformImage, 0, len(platforms))
	for _, p := range platforms {
		spec, err := def.build(ctx, b, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		img, err := assemble(spec, p, created)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		images = append(images, platformImage{platform: p, image: img})
	}
	if !def.multiPlatform {
		return deliver(ctx, o, def.name, ref, images[0].image, stdout)
	}
	return deliverIndex(ctx, o, def.name, ref, images, created, stdout)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
