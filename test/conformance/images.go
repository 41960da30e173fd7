package conformance

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/nginx-operator/nginx-operator/test/framework/node"
)

// EchoBasicPackage is the suite's backend, the program of its manifests'
// registry.k8s.io/gateway-api/echo-basic images, in the suite's module: the
// node builds it from the version go.mod requires.
const EchoBasicPackage = "sigs.k8s.io/gateway-api/conformance/echo-basic"

// Repositories of the images the suite's manifests name that the node
// provides.
const (
	echoBasicRepository = "registry.k8s.io/gateway-api/echo-basic"
	coreDNSRepository   = "registry.k8s.io/coredns/coredns"
)

// Backends are the images the suite's manifests run and how the node gets
// them, which cannot pull: echo-basic, under each name the manifests use,
// built from EchoBasicPackage; CoreDNS (the UDPRoute tests' DNS server,
// which Setup starts with the other backends and waits for) as the node's
// own CoreDNS binary; Others are images the node does not have (the mesh
// profiles', not run here).
type Backends struct {
	GoImages []node.GoImage
	CoreDNS  string
	Others   []string
}

var imageLine = regexp.MustCompile(`(?m)^\s*(?:-\s*)?image:\s*["']?([^\s"']+)`)

// BackendImages reads the images of the suite's manifests in fsys (its
// embedded conformance.Manifests): base/ and tests/, the Gateway tests'.
func BackendImages(fsys fs.FS) (Backends, error) {
	images := map[string]bool{}
	for _, dir := range []string{"base", "tests"} {
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (path.Ext(p) != ".yaml" && path.Ext(p) != ".yml") {
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			for _, m := range imageLine.FindAllStringSubmatch(string(data), -1) {
				images[m[1]] = true
			}
			return nil
		})
		if err != nil {
			return Backends{}, err
		}
	}
	var names []string
	for i := range images {
		names = append(names, i)
	}
	sort.Strings(names)
	var b Backends
	for _, img := range names {
		repo, _, _ := strings.Cut(img, ":")
		switch repo {
		case echoBasicRepository:
			b.GoImages = append(b.GoImages, node.GoImage{Package: EchoBasicPackage, Name: img})
		case coreDNSRepository:
			if b.CoreDNS != "" {
				return Backends{}, fmt.Errorf("the manifests name two CoreDNS images, %s and %s: the node provides one", b.CoreDNS, img)
			}
			b.CoreDNS = img
		default:
			b.Others = append(b.Others, img)
		}
	}
	if len(b.GoImages) == 0 {
		return Backends{}, fmt.Errorf("the manifests name no %s image", echoBasicRepository)
	}
	return b, nil
}
