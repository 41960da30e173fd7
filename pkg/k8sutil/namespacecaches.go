package k8sutil

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// NamespaceCaches caches the objects custom resources name (Secrets,
// ConfigMaps, Services, EndpointSlices: objects without the operator's
// labels, so no label selector can narrow them) one namespace at a time,
// and only the namespaces a controller has asked for: with Watch before it
// reads what an object names, or by reading through it (Get, List). A
// namespace where no custom resource names anything is never listed, so
// the Secrets, Services and EndpointSlices of the cluster's other
// applications cost the operator no memory. At 1,000 instances that name
// nothing, one cache of every watched namespace held 5 MiB of their own
// children's metadata and endpoints, and 10,000 unrelated Secrets and
// 1,000 unrelated Services added 5.6 MiB more (test/bench).
//
// A namespace stays watched until the operator stops: counting which
// namespaces are still named would cost a reconcile of every instance on
// each change, and a namespace once named is likely to be named again.
//
// Watches (NamespacedKind) registered on it reach the objects of every
// namespace watched, now or later; a namespace's first objects arrive as
// creations, as an informer's initial list does.
type NamespaceCaches struct {
	newCache func(namespace string) (cache.Cache, error)

	mu      sync.Mutex
	ctx     context.Context // the manager's, once Start is called
	started chan struct{}
	spaces  map[string]*namespaceCache
	sources []namespacedSource
	indexes []fieldIndex
}

// NamespaceSyncTimeout bounds how long a namespace's first list may take.
const NamespaceSyncTimeout = time.Minute

type namespaceCache struct {
	cache cache.Cache
	ready chan struct{} // closed once synced and every source attached, or on err
	err   error
}

type fieldIndex struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// namespacedSource is a registered watch: its type, and how to start it
// on one namespace's cache.
type namespacedSource struct {
	obj    client.Object
	attach func(cache.Cache) error
}

// NewNamespaceCaches returns caches built by newCache, one per namespace
// asked for; add it to the manager, which starts it.
func NewNamespaceCaches(newCache func(namespace string) (cache.Cache, error)) *NamespaceCaches {
	return &NamespaceCaches{newCache: newCache, started: make(chan struct{}), spaces: map[string]*namespaceCache{}}
}

// Start records the manager's context, which the namespaces' caches run
// under, and returns when it is done.
func (c *NamespaceCaches) Start(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	close(c.started)
	c.mu.Unlock()
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: a standby may serve reads too.
func (c *NamespaceCaches) NeedLeaderElection() bool { return false }

// IndexField adds an index to the caches of every namespace watched from
// then on; call it before the first namespace is.
func (c *NamespaceCaches) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.spaces) > 0 {
		return fmt.Errorf("index %s added after a namespace is watched", field)
	}
	c.indexes = append(c.indexes, fieldIndex{obj: obj, field: field, extract: extract})
	return nil
}

// ErrNamespaceNotWatched is what a NamespaceCaches' newCache returns for a
// namespace the operator does not watch (--namespaces): Watch skips it,
// Get and List fail with it.
var ErrNamespaceNotWatched = errors.New("the operator does not watch this namespace")

// Watch starts watching each namespace not watched yet and returns once
// their caches have synced, so that a change made after a read that
// follows it reaches the registered watches. Namespaces the operator does
// not watch are skipped.
func (c *NamespaceCaches) Watch(ctx context.Context, namespaces ...string) error {
	for _, ns := range namespaces {
		if _, err := c.namespace(ctx, ns); err != nil && !errors.Is(err, ErrNamespaceNotWatched) {
			return err
		}
	}
	return nil
}

// namespace is the synced cache of ns, started on first use.
func (c *NamespaceCaches) namespace(ctx context.Context, ns string) (cache.Cache, error) {
	select {
	case <-c.started:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	nc, ok := c.spaces[ns]
	if !ok {
		nc = &namespaceCache{ready: make(chan struct{})}
		c.spaces[ns] = nc
		go c.startNamespace(ns, nc)
	}
	c.mu.Unlock()
	select {
	case <-nc.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if nc.err != nil {
		return nil, nc.err
	}
	return nc.cache, nil
}

// startNamespace builds, starts and syncs the cache of ns, then attaches
// every registered source to it. On failure the namespace is forgotten, so
// the next use tries again.
func (c *NamespaceCaches) startNamespace(ns string, nc *namespaceCache) {
	fail := func(err error) {
		c.mu.Lock()
		delete(c.spaces, ns)
		c.mu.Unlock()
		nc.err = fmt.Errorf("watching namespace %s: %w", ns, err)
		close(nc.ready)
	}
	nsCache, err := c.newCache(ns)
	if err != nil {
		fail(err)
		return
	}
	c.mu.Lock()
	indexes, sources := c.indexes, c.sources
	c.mu.Unlock()
	for _, i := range indexes {
		if err := nsCache.IndexField(c.ctx, i.obj, i.field, i.extract); err != nil {
			fail(err)
			return
		}
	}
	ctx, stop := context.WithCancel(c.ctx)
	failed := fail
	fail = func(err error) { stop(); failed(err) }
	go func() { _ = nsCache.Start(ctx) }()
	// The sources' informers, listed before any source sees them: a read
	// right after Watch finds what the watches will report. Bounded, so a
	// namespace that cannot be listed (RBAC) fails the reconcile asking
	// for it, which retries, rather than holding its worker.
	syncCtx, cancel := context.WithTimeout(ctx, NamespaceSyncTimeout)
	defer cancel()
	for _, s := range sources {
		if _, err := nsCache.GetInformer(syncCtx, s.obj); err != nil {
			fail(err)
			return
		}
	}
	if !nsCache.WaitForCacheSync(syncCtx) {
		fail(fmt.Errorf("the cache did not sync within %s", NamespaceSyncTimeout))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Under the lock, so that a source registered meanwhile (AddSource)
	// is attached here or there, once.
	for _, s := range c.sources {
		if err := s.attach(nsCache); err != nil {
			nc.err = fmt.Errorf("watching namespace %s: %w", ns, err)
		}
	}
	nc.cache = nsCache
	close(nc.ready)
}

// addSource registers s and attaches it to every namespace watched.
func (c *NamespaceCaches) addSource(s namespacedSource) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, s)
	for _, nc := range c.spaces {
		select {
		case <-nc.ready:
			if nc.err == nil {
				if err := s.attach(nc.cache); err != nil {
					return err
				}
			}
		default: // startNamespace attaches it
		}
	}
	return nil
}

// Get reads key from its namespace's cache, watching the namespace first.
func (c *NamespaceCaches) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	nsCache, err := c.namespace(ctx, key.Namespace)
	if err != nil {
		return err
	}
	return nsCache.Get(ctx, key, obj, opts...)
}

// List lists one namespace (client.InNamespace is required), watching it
// first.
func (c *NamespaceCaches) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.Namespace == "" {
		return fmt.Errorf("the references cache lists one namespace at a time: no namespace given")
	}
	nsCache, err := c.namespace(ctx, o.Namespace)
	if err != nil {
		return err
	}
	return nsCache.List(ctx, list, opts...)
}

// NamespacedKind is source.Kind over every namespace c watches: h sees the
// objects of type obj of each namespace from when it is first watched.
func NamespacedKind[T client.Object](c *NamespaceCaches, obj T, h handler.TypedEventHandler[T, reconcile.Request], predicates ...predicate.TypedPredicate[T]) source.Source {
	return &namespacedKind[T]{caches: c, obj: obj, handler: h, predicates: predicates}
}

type namespacedKind[T client.Object] struct {
	caches     *NamespaceCaches
	obj        T
	handler    handler.TypedEventHandler[T, reconcile.Request]
	predicates []predicate.TypedPredicate[T]
}

// Start registers the watch; each namespace's informer feeds queue through
// a source.Kind of its own. There is nothing to wait for at start: no
// namespace is watched before a reconcile asks for one.
func (k *namespacedKind[T]) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return k.caches.addSource(namespacedSource{obj: k.obj, attach: func(nsCache cache.Cache) error {
		return source.Kind(nsCache, k.obj, k.handler, k.predicates...).Start(ctx, queue)
	}})
}

func (k *namespacedKind[T]) String() string {
	return fmt.Sprintf("namespaced kind source: %T", k.obj)
}
