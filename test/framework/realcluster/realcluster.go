// Package realcluster runs the operator as a user would, on a local cluster
// whose node runs pods for real (package test/framework/node): the project's
// images are built with hack/images (once per test binary), imported into
// the node's containerd, and bundle.yaml is created with kubectl, its
// Deployment told to deploy the built nginx and exporter images.
//
//	var env = framework.NewEnv(realcluster.FrameworkOptions(realcluster.Options{}))
//
//	func TestMain(m *testing.M) { os.Exit(env.Main(m)) }
//
//	func TestX(t *testing.T) {
//		realcluster.Require(t) // skips without a real node; builds the images
//		c := env.Cluster(t)
//		realcluster.InstallBundle(ctx, t, c) // once per cluster; later calls wait for the first
//		ns := realcluster.RestrictedNamespace(t, cs)
//		...
//	}
package realcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nginx-operator/nginx-operator/internal/gobuild"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Image names, as hack/images knows them (its -only flag).
const (
	Operator = "operator"
	Nginx    = "nginx"
	Exporter = "exporter"
	Pause    = "pause"
)

// Images are the project's images, built by hack/images.
type Images struct {
	// Dir holds <name>.tar for each image.
	Dir string
	// Refs maps an image's name (Operator, Nginx, ...) to its reference,
	// without digest: what pods name.
	Refs map[string]string
}

// Archive is the docker archive of the image called name.
func (i *Images) Archive(name string) string { return filepath.Join(i.Dir, name+".tar") }

// Ref is the reference of the image called name.
func (i *Images) Ref(name string) string { return i.Refs[name] }

var (
	buildOnce sync.Once
	built     *Images
	buildErr  error
)

// BuildImages builds the operator, nginx, exporter and pause images with
// `go run ./hack/images` into a temporary directory, the first time it is
// called in this process, and returns them (or that first call's error)
// ever after. The directory stays after the process ends, until the next
// process that builds images removes it: the node imports the archives when
// it starts, and a second cluster of the process would again.
func BuildImages(ctx context.Context) (*Images, error) {
	buildOnce.Do(func() { built, buildErr = buildImages(ctx) })
	return built, buildErr
}

func buildImages(ctx context.Context) (*Images, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	sweepImageDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", imagesDirPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	// The node runs this machine's platform only: building the operator for
	// the other platforms of `make images` would cost minutes for nothing.
	cmd := exec.CommandContext(ctx, gobuild.GoTool(), "run", "./hack/images", "-out", dir, "-only", strings.Join([]string{Operator, Nginx, Exporter, Pause}, ","),
		"-platforms", "linux/"+runtime.GOARCH)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go run ./hack/images: %w\n%s%s", err, stderr.String(), stdout.String())
	}
	refs, err := parseRefs(stdout.String())
	if err != nil {
		return nil, fmt.Errorf("go run ./hack/images: %w", err)
	}
	imgs := &Images{Dir: dir, Refs: refs}
	for _, n := range []string{Operator, Nginx, Exporter, Pause} {
		if refs[n] == "" {
			return nil, fmt.Errorf("go run ./hack/images printed no %s image:\n%s", n, stdout.String())
		}
		if _, err := os.Stat(imgs.Archive(n)); err != nil {
			return nil, err
		}
	}
	return imgs, nil
}

// imagesDirPrefix starts the name of BuildImages's directories, followed by
// the pid of the process that built them.
const imagesDirPrefix = "realcluster-images-"

// sweepImageDirs removes the image directories of processes that are gone:
// nothing removes a process's own when it exits.
func sweepImageDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), imagesDirPrefix+"*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), imagesDirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // still running
		}
		_ = os.RemoveAll(d)
	}
}

// parseRefs reads hack/images's output, one image a line: its name, then
// its reference with the manifest digest ("name  repo:tag@sha256:...  id ...").
func parseRefs(out string) (map[string]string, error) {
	refs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		ref, _, _ := strings.Cut(f[1], "@")
		refs[f[0]] = ref
	}
	if len(refs) == 0 {
		return nil, errors.New("no image printed")
	}
	return refs, sc.Err()
}

// Options configure the cluster of FrameworkOptions.
type Options struct {
	// Images are more image archives the node imports (see node.Options).
	Images []string
	// GoImages are more images of Go programs the node builds and imports,
	// such as the node's test server:
	// {Package: "./test/framework/node/internal/testserver", Name: "nginx-operator.local/testserver:1"}.
	GoImages []node.GoImage
	// CoreDNSImage names an image of the node's CoreDNS binary the node
	// imports (see node.Options).
	CoreDNSImage string
	// Framework are the cluster's options; RealNode is set by
	// FrameworkOptions.
	Framework framework.Options
}

// TestServer is the node's test server as a GoImage (see
// test/framework/node/internal/testserver: `serve ADDR` answers every
// request with "hello from <hostname>").
var TestServer = node.GoImage{Package: "./test/framework/node/internal/testserver", Name: "nginx-operator.local/testserver:1"}

// FrameworkOptions returns opts.Framework with a real node (see RealNode)
// that runs the project's images, for framework.NewEnv or framework.Start.
func FrameworkOptions(opts Options) framework.Options {
	fo := opts.Framework
	fo.RealNode = NewRealNode(opts)
	return fo
}

// RealNode is a node (package test/framework/node) that builds the
// project's images (BuildImages) when the cluster prepares it, and imports
// them, the pause image as its sandbox image.
type RealNode struct {
	opts Options
	node *node.Node
}

var _ framework.RealNode = (*RealNode)(nil)

// NewRealNode returns a node for framework.Options.RealNode.
func NewRealNode(opts Options) *RealNode { return &RealNode{opts: opts} }

// Node is the underlying node, once the cluster prepared it (nil before):
// its IP, HTTPClient, DialContext, Dir.
func (r *RealNode) Node() *node.Node { return r.node }

// Missing says what the node lacks to run on this machine, or nil.
func (r *RealNode) Missing() error {
	// Go builds the images: as if the node built images of its own.
	return node.New(node.Options{GoImages: []node.GoImage{TestServer}}).Missing()
}

// Prepare builds the images and prepares the node.
func (r *RealNode) Prepare(ctx context.Context, dir string) (string, error) {
	imgs, err := BuildImages(ctx)
	if err != nil {
		return "", err
	}
	r.node = node.New(node.Options{
		Images:           append([]string{imgs.Archive(Operator), imgs.Archive(Nginx), imgs.Archive(Exporter)}, r.opts.Images...),
		SandboxImage:     imgs.Archive(Pause),
		SandboxImageName: imgs.Ref(Pause),
		GoImages:         r.opts.GoImages,
		CoreDNSImage:     r.opts.CoreDNSImage,
	})
	return r.node.Prepare(ctx, dir)
}

// Start starts the node.
func (r *RealNode) Start(ctx context.Context, c *framework.Cluster) error {
	if r.node == nil {
		return errors.New("the node was not prepared")
	}
	return r.node.Start(ctx, c)
}

// Halt ends the node's processes.
func (r *RealNode) Halt() error {
	if r.node == nil {
		return nil
	}
	return r.node.Halt()
}

// Stop ends the node and undoes what it changed.
func (r *RealNode) Stop() error {
	if r.node == nil {
		return nil
	}
	return r.node.Stop()
}

// NodeOf is the node of c, which FrameworkOptions made, or nil.
func NodeOf(c *framework.Cluster) *node.Node {
	if r, ok := c.RealNode.(*RealNode); ok {
		return r.node
	}
	return nil
}
