//go:build !unit

package k8sutil_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// A namespace's objects are cached and reach the watches only once the
// namespace is asked for: the Secrets of a namespace nothing names cost
// nothing, and once it is watched its objects arrive as creations and
// their changes as they happen.
func TestNamespaceCachesWatchOnlyTheNamespacesAskedFor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := env.Cluster(t).Config
	watched, _ := env.Namespace(t)
	other, cs := env.Namespace(t)
	refused := "not-watched"
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var built []string
	caches := k8sutil.NewNamespaceCaches(func(namespace string) (cache.Cache, error) {
		if namespace == refused {
			return nil, fmt.Errorf("namespace %s: %w", namespace, k8sutil.ErrNamespaceNotWatched)
		}
		built = append(built, namespace)
		return cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	})
	secret := func(ns, name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	for _, ns := range []string{watched, other} {
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret(ns, "before"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	obj := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	src := k8sutil.NamespacedKind(caches, obj, handler.TypedEnqueueRequestsFromMapFunc(
		func(_ context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}}}
		}))
	if err := src.Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	go func() { _ = caches.Start(ctx) }()

	// next is the next request queued, or none within wait.
	next := func(wait time.Duration) (types.NamespacedName, bool) {
		got := make(chan types.NamespacedName, 1)
		go func() {
			req, shutdown := queue.Get()
			if !shutdown {
				queue.Done(req)
				queue.Forget(req)
				got <- req.NamespacedName
			}
		}()
		select {
		case n := <-got:
			return n, true
		case <-time.After(wait):
			queue.ShutDown() // ends the Get above; the test is over anyway
			return types.NamespacedName{}, false
		}
	}

	if err := caches.Watch(ctx, watched, refused); err != nil {
		t.Fatalf("Watch: %v; a namespace the operator does not watch is skipped", err)
	}
	if got, ok := next(10 * time.Second); !ok || got != (types.NamespacedName{Namespace: watched, Name: "before"}) {
		t.Fatalf("after Watch, the watched namespace's Secret arrives as a creation: got %v (%t)", got, ok)
	}
	if _, err := cs.CoreV1().Secrets(watched).Create(ctx, secret(watched, "after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, ok := next(10 * time.Second); !ok || got != (types.NamespacedName{Namespace: watched, Name: "after"}) {
		t.Fatalf("a Secret created in the watched namespace: got %v (%t)", got, ok)
	}
	if len(built) != 1 || built[0] != watched {
		t.Fatalf("caches built for %v; want only %s", built, watched)
	}

	// A read watches its namespace: the other namespace's Secret is found,
	// and from then on reaches the watch.
	var found metav1.PartialObjectMetadata
	found.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := caches.Get(ctx, types.NamespacedName{Namespace: other, Name: "before"}, &found); err != nil {
		t.Fatalf("Get from a namespace not watched yet: %v", err)
	}
	if got, ok := next(10 * time.Second); !ok || got != (types.NamespacedName{Namespace: other, Name: "before"}) {
		t.Fatalf("after a read, the other namespace's Secret arrives: got %v (%t)", got, ok)
	}
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := caches.List(ctx, &list); err == nil {
		t.Error("List of every namespace: want an error, the cache lists one namespace at a time")
	}
	if err := caches.Get(ctx, types.NamespacedName{Namespace: refused, Name: "x"}, &found); !errors.Is(err, k8sutil.ErrNamespaceNotWatched) {
		t.Errorf("Get from a namespace the operator does not watch: %v; want ErrNamespaceNotWatched", err)
	}
	if _, ok := next(2 * time.Second); ok {
		t.Error("a request nothing changed")
	}
}
