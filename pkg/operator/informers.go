package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// informerSync starts the informers of the custom resources and tells the
// readiness probe whether they have synced. The operator is not ready while a
// CRD is missing or its objects cannot be listed (for example for lack of
// RBAC): reconciling from an empty cache would act on a false picture.
//
// It runs on every replica, leader or not, so a standby is ready to take over.
type informerSync struct {
	cache   cache.Cache
	objects []client.Object
	log     logr.Logger

	mu      sync.Mutex
	pending map[string]string // kind -> why it is not synced yet
}

// retryInterval is how often a missing CRD is looked for again.
const retryInterval = 2 * time.Second

func newInformerSync(c cache.Cache, objects []client.Object, log logr.Logger) *informerSync {
	s := &informerSync{cache: c, objects: objects, log: log, pending: map[string]string{}}
	for _, obj := range objects {
		s.pending[kindOf(obj)] = "not started"
	}
	return s
}

func kindOf(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}

// NeedLeaderElection is false: standbys keep warm caches too.
func (s *informerSync) NeedLeaderElection() bool { return false }

// Start gets each informer, retrying while its CRD is not installed, and waits
// for it to sync.
func (s *informerSync) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, obj := range s.objects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.syncOne(ctx, obj)
		}()
	}
	wg.Wait()
	return nil
}

func (s *informerSync) syncOne(ctx context.Context, obj client.Object) {
	kind := kindOf(obj)
	logged := false
	for {
		s.setPending(kind, "waiting for the informer to sync")
		_, err := s.cache.GetInformer(ctx, obj, cache.BlockUntilSynced(true))
		if err == nil {
			// Logged before readiness turns: whoever sees /readyz answer 200
			// finds the reason in the log already.
			s.log.Info("informer synced", "kind", kind)
			s.setPending(kind, "")
			return
		}
		if ctx.Err() != nil {
			return
		}
		s.setPending(kind, err.Error())
		if !logged {
			s.log.Error(err, "cannot watch; is the CRD installed? retrying", "kind", kind)
			logged = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryInterval):
		}
	}
}

func (s *informerSync) setPending(kind, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if why == "" {
		delete(s.pending, kind)
	} else {
		s.pending[kind] = why
	}
}

// Check is the readiness check: an error listing every kind not synced yet.
func (s *informerSync) Check(*http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return nil
	}
	var parts []string
	for _, obj := range s.objects {
		if why, ok := s.pending[kindOf(obj)]; ok {
			parts = append(parts, fmt.Sprintf("%s: %s", kindOf(obj), why))
		}
	}
	return errors.New("informers not synced: " + strings.Join(parts, "; "))
}
