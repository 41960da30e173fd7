package framework

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// GatewayAPIModule is the module whose CRDs and conformance suite the
// tests use, at the version go.mod requires.
const GatewayAPIModule = "sigs.k8s.io/gateway-api"

// GatewayAPICRDFiles are the standard channel's CRDs of the Gateway API
// release go.mod requires, read from the module itself (go list), not
// copied into this repository.
func GatewayAPICRDFiles() ([]string, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", GatewayAPIModule)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding %s: %w", GatewayAPIModule, err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	files, err := filepath.Glob(filepath.Join(dir, "gateway.networking.k8s.io_*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Gateway API CRDs in %s (%v)", dir, err)
	}
	var crds []string
	for _, f := range files {
		// The directory also holds a ValidatingAdmissionPolicy.
		if !strings.Contains(filepath.Base(f), "_vap_") {
			crds = append(crds, f)
		}
	}
	return crds, nil
}

// InstallGatewayAPICRDs applies the standard channel's CRDs
// (GatewayAPICRDFiles) and waits until they are established.
func InstallGatewayAPICRDs(ctx context.Context, cfg *rest.Config) error {
	files, err := GatewayAPICRDFiles()
	if err != nil {
		return err
	}
	return installCRDFiles(ctx, cfg, files)
}
