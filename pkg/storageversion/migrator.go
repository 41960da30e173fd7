// Package storageversion moves every stored object of a multi-version CRD to
// its storage version, and then tells the apiserver that no older version is
// left in etcd (the CRD's status.storedVersions).
//
// Why the operator does this itself: a cluster that ran the book's operator
// stored NginxOperators as v1alpha1. They stay encoded that way in etcd until
// something rewrites them, and the apiserver keeps v1alpha1 in
// status.storedVersions for as long as that may be true, so a later release
// could never stop serving v1alpha1. kube-storage-version-migrator does the
// same job but is rarely installed; the operator already owns the CRD's
// conversion settings and runs once per cluster as the leader.
package storageversion

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// The rewrite is an update of each object as read; the CRD's status is
// patched once every object is rewritten.
//
// +kubebuilder:rbac:groups=nginx.operator.dev,resources=nginxoperators,verbs=update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=patch,resourceNames=nginxoperators.nginx.operator.dev

// pageSize bounds the memory of one list call: the objects are not cached.
const pageSize = 250

// Add runs a Migrator for the CRD crdName in mgr, with a client of its own
// that reads from the apiserver: the objects are listed once, page by page,
// and never cached.
func Add(mgr manager.Manager, crdName string) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme, HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return err
	}
	return mgr.Add(&Migrator{Client: c, CRDName: crdName, Log: mgr.GetLogger().WithName("storage-version")})
}

// Migrator is a leader-only manager runnable that migrates CRDName once and
// then returns. A failed pass (a conflict with kubectl, an object the
// apiserver refuses to rewrite) is logged and retried with a growing delay,
// up to MaxRetryDelay, until it succeeds or the manager stops.
type Migrator struct {
	// Client reads and writes directly (no cache); its scheme must know
	// apiextensions/v1.
	Client  client.Client
	CRDName string
	Log     logr.Logger
	// FirstRetryDelay and MaxRetryDelay default to 10s and 5m.
	FirstRetryDelay, MaxRetryDelay time.Duration
}

// NeedLeaderElection is true: one replica is enough, and two would only
// rewrite the same objects twice.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start runs passes until one completes.
func (m *Migrator) Start(ctx context.Context) error {
	delay := cmp.Or(m.FirstRetryDelay, 10*time.Second)
	maxDelay := cmp.Or(m.MaxRetryDelay, 5*time.Minute)
	for {
		err := m.Migrate(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		m.Log.Error(err, "storage version migration failed; retrying", "crd", m.CRDName, "after", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, maxDelay)
	}
}

// Migrate makes one pass. It costs a single GET when status.storedVersions
// already names only the storage version, which is the steady state.
func (m *Migrator) Migrate(ctx context.Context) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Client.Get(ctx, client.ObjectKey{Name: m.CRDName}, crd); err != nil {
		return fmt.Errorf("reading CRD %s: %w", m.CRDName, err)
	}
	storage, ok := StorageVersion(crd)
	if !ok {
		return fmt.Errorf("CRD %s has no storage version", m.CRDName)
	}
	if !NeedsMigration(crd) {
		return nil
	}
	m.Log.Info("migrating stored objects to the storage version", "crd", m.CRDName,
		"storedVersions", strings.Join(crd.Status.StoredVersions, ","), "storageVersion", storage)
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.ListKind}
	rewritten, err := m.rewriteAll(ctx, gvk)
	if err != nil {
		return err
	}
	// The lock makes a concurrent CRD change (a new version added by
	// kubectl apply) fail this patch instead of being overwritten; the next
	// pass starts over.
	patch := client.MergeFromWithOptions(crd.DeepCopy(), client.MergeFromWithOptimisticLock{})
	crd.Status.StoredVersions = []string{storage}
	if err := m.Client.Status().Patch(ctx, crd, patch); err != nil {
		return fmt.Errorf("setting status.storedVersions of CRD %s to [%s]: %w", m.CRDName, storage, err)
	}
	m.Log.Info("storage version migration complete", "crd", m.CRDName, "storageVersion", storage, "objects", rewritten)
	return nil
}

// rewriteAll updates every object, page by page, as read. The apiserver
// decodes each from whatever version it was stored in and encodes it in the
// storage version; an object already stored that way is left untouched
// (an update that changes no byte is not written).
func (m *Migrator) rewriteAll(ctx context.Context, listGVK schema.GroupVersionKind) (int, error) {
	itemGVK := listGVK
	itemGVK.Kind = listGVK.Kind[:len(listGVK.Kind)-len("List")]
	n, cont := 0, ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(listGVK)
		if err := m.Client.List(ctx, list, client.Limit(pageSize), client.Continue(cont)); err != nil {
			return n, fmt.Errorf("listing %s: %w", listGVK.GroupKind(), err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(itemGVK)
			if err := m.rewrite(ctx, obj); err != nil {
				return n, err
			}
			n++
		}
		if cont = list.GetContinue(); cont == "" {
			return n, nil
		}
	}
}

// rewrite updates obj unchanged, re-reading it after a conflict. An object
// deleted meanwhile needs nothing.
func (m *Migrator) rewrite(ctx context.Context, obj *unstructured.Unstructured) error {
	key := client.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := m.Client.Update(ctx, obj)
		if apierrors.IsConflict(err) {
			fresh := &unstructured.Unstructured{}
			fresh.SetGroupVersionKind(obj.GroupVersionKind())
			if getErr := m.Client.Get(ctx, key, fresh); getErr != nil {
				return getErr
			}
			*obj = *fresh
		}
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("rewriting %s %s in the storage version: %w", obj.GetKind(), key, err)
	}
	return nil
}

// StorageVersion is the name of crd's version marked storage.
func StorageVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, bool) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name, true
		}
	}
	return "", false
}

// NeedsMigration reports whether etcd may still hold objects of crd in a
// version other than its storage version.
func NeedsMigration(crd *apiextensionsv1.CustomResourceDefinition) bool {
	storage, ok := StorageVersion(crd)
	return ok && !slices.Equal(crd.Status.StoredVersions, []string{storage})
}
