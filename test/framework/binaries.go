// Package framework runs a real, local Kubernetes control plane for tests and
// for `make run`: etcd and kube-apiserver for integration tests, plus
// kube-controller-manager, kube-scheduler and kwok (fake nodes and kubelets) for
// end-to-end tests. Everything listens on loopback with free ports, and every
// process is stopped when the cluster is.
package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Binary names the framework runs.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Kubectl               = "kubectl"
	Kwok                  = "kwok"
)

// BinDirEnv points at a directory holding all binaries, bypassing the cache.
// KUBEBUILDER_ASSETS is honoured too, for directories prepared by envtest's setup tool
// (which holds only etcd, kube-apiserver and kubectl, enough for integration tests).
const BinDirEnv = "NGINX_OPERATOR_KUBE_BIN"

// installHint is what a developer runs when binaries are missing.
const installHint = "make kube-binaries (builds them once, about 10 minutes, into the user cache)"

// BinDir returns the directory holding the control-plane binaries: the
// environment override if set, otherwise the version-keyed cache directory of
// hack/install-kube-binaries.sh.
func BinDir() (string, error) {
	for _, env := range []string{BinDirEnv, "KUBEBUILDER_ASSETS"} {
		if dir := os.Getenv(env); dir != "" {
			return dir, nil
		}
	}
	dir, err := tools.InstallerDir("hack/install-kube-binaries.sh")
	if err != nil {
		return "", fmt.Errorf("locating the Kubernetes binaries: %w", err)
	}
	return dir, nil
}

// BinPath is the path of binary name, or an error that says how to install it.
func BinPath(name string) (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found in %s: run %s", name, dir, installHint)
	}
	return p, nil
}
