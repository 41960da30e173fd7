// Command olm generates the Operator Lifecycle Manager (OLM) bundle of
// nginx-operator from config/ and example/:
//
//	go run ./hack/olm [-o bundle] [-dockerfile bundle.Dockerfile] [-version 0.1.0] [-image ref]
//
// It writes <o>/manifests (the ClusterServiceVersion, the CRDs and the few
// extra objects OLM may install), <o>/metadata/annotations.yaml and the
// bundle image's Dockerfile. Nothing is hand-copied: every CRD, RBAC rule,
// Deployment field and example comes from what config/ and example/ hold at
// generation time. The output has no timestamps, so regenerating an
// unchanged tree rewrites identical bytes (make verify relies on it).
//
// What the bundle changes relative to config/, and why, is in transform.go.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	var o options
	flag.StringVar(&o.out, "o", "bundle", "bundle directory to write (manifests/ and metadata/ inside)")
	flag.StringVar(&o.dockerfile, "dockerfile", "", "bundle image Dockerfile to write (default: bundle.Dockerfile next to the -o directory)")
	flag.StringVar(&o.version, "version", "", "bundle version, semver without a leading v (default: the operator image tag kustomize sets in config/manager)")
	flag.StringVar(&o.image, "image", "", "operator image (default: the one kustomize sets in config/manager)")
	flag.StringVar(&o.root, "root", ".", "repository root holding config/ and example/")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "olm: unexpected arguments %v\n", flag.Args())
		os.Exit(2)
	}
	if o.dockerfile == "" {
		o.dockerfile = filepath.Join(filepath.Dir(filepath.Clean(o.out)), "bundle.Dockerfile")
	}
	b, err := generate(o)
	if err == nil {
		err = b.write(o.out, o.dockerfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "olm:", err)
		os.Exit(1)
	}
}
