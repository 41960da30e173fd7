package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// hostPathProvisionerDir is where the controller-manager's hostPath
// provisioner creates the directories of the volumes it provisions (root,
// mode 0750), on the host, which the node shares.
const hostPathProvisionerDir = "/tmp/hostpath_pv/"

// provisionedVolumes makes every directory the hostPath provisioner
// creates world-writable, as the local-path provisioner of kind and k3s
// does: fsGroup does not apply to hostPath volumes, so a non-root pod could
// otherwise neither write nor read them. The mode changes as the
// PersistentVolume appears, before the claim's pod can be scheduled (the
// claim binds to it after). It remembers the directories, which remove
// deletes: the cluster, and the provisioner, are gone by then.
type provisionedVolumes struct {
	stop  chan struct{}
	mu    sync.Mutex
	paths map[string]bool
}

// watchProvisionedVolumes starts opening volumes until halt.
func watchProvisionedVolumes(cs kubernetes.Interface) *provisionedVolumes {
	v := &provisionedVolumes{stop: make(chan struct{}), paths: map[string]bool{}}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().PersistentVolumes().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    v.open,
		UpdateFunc: func(_, obj any) { v.open(obj) },
	})
	factory.Start(v.stop)
	return v
}

func (v *provisionedVolumes) open(obj any) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok || pv.Spec.HostPath == nil {
		return
	}
	p := openablePath(pv.Spec.HostPath.Path)
	if p == "" {
		return
	}
	v.mu.Lock()
	v.paths[p] = true
	v.mu.Unlock()
	_ = os.Chmod(p, 0o777)
}

// halt stops watching; it is safe more than once.
func (v *provisionedVolumes) halt() {
	v.mu.Lock()
	defer v.mu.Unlock()
	select {
	case <-v.stop:
	default:
		close(v.stop)
	}
}

// remove halts and deletes the directories of the volumes it saw.
func (v *provisionedVolumes) remove() error {
	v.halt()
	v.mu.Lock()
	defer v.mu.Unlock()
	var errs []error
	for p := range v.paths {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openablePath is path when it is a directory the provisioner made
// (directly under hostPathProvisionerDir), or "".
func openablePath(path string) string {
	clean := filepath.Clean(path)
	rest, ok := strings.CutPrefix(clean, hostPathProvisionerDir)
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return ""
	}
	return clean
}
