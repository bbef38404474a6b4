package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"
)

// fakeOwnership owns the keys it is told to, and lets the test end ownership.
type fakeOwnership struct {
	mu     sync.Mutex
	owned  map[string]context.Context
	cancel map[string]context.CancelFunc
	subs   []func()
}

func newFakeOwnership() *fakeOwnership {
	return &fakeOwnership{owned: map[string]context.Context{}, cancel: map[string]context.CancelFunc{}}
}

func (o *fakeOwnership) Claim(key string) (context.Context, func(), bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ctx, ok := o.owned[key]
	return ctx, func() {}, ok
}

func (o *fakeOwnership) Owns(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.owned[key]
	return ok
}

func (o *fakeOwnership) OnAcquire(f func()) func() {
	o.mu.Lock()
	o.subs = append(o.subs, f)
	o.mu.Unlock()
	return func() {}
}

func (o *fakeOwnership) acquire(keys ...string) {
	o.mu.Lock()
	for _, k := range keys {
		o.owned[k], o.cancel[k] = context.WithCancel(context.Background())
	}
	subs := append([]func(){}, o.subs...)
	o.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

func (o *fakeOwnership) lose(key string) {
	o.mu.Lock()
	o.cancel[key]()
	delete(o.owned, key)
	o.mu.Unlock()
}

type staticInformer struct{ store cache.Store }

func (i staticInformer) AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return nil, nil
}
func (i staticInformer) GetStore() cache.Store { return i.store }

func TestOwnershipLimitsTheKeysWorkedAndResyncsOnAcquisition(t *testing.T) {
	own := newFakeOwnership()
	own.acquire("mine")
	var mu sync.Mutex
	worked := map[string]int{}
	lost := make(chan error, 1)
	h := newHarness(t, Options{Ownership: own, Workers: 2}, func(ctx context.Context, key string) (Result, error) {
		mu.Lock()
		worked[key]++
		mu.Unlock()
		if key == "long" {
			<-ctx.Done() // a reconcile in flight when ownership ends is cut short
			lost <- ctx.Err()
		}
		return Result{}, nil
	})
	store := cache.NewStore(func(obj any) (string, error) { return obj.(string), nil })
	for _, k := range []string{"mine", "theirs", "later", "long"} {
		require.NoError(t, store.Add(k))
	}
	require.NoError(t, h.ctrl.Watch(staticInformer{store: store}, func(obj any) []string { return []string{obj.(string)} }))
	h.run(t)

	h.ctrl.Enqueue("mine")
	h.ctrl.Enqueue("theirs")
	h.ctrl.Enqueue("later")
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return h.ctrl.queue.Len() == 0 }, 5*time.Second, time.Millisecond,
		"keys of other replicas leave the queue")

	own.acquire("later", "long")
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return worked["later"] == 1 && worked["long"] == 1 && worked["mine"] == 2
	}, 5*time.Second, time.Millisecond, "newly owned keys (and the owned ones) are enqueued from the caches")
	own.lose("long")
	select {
	case err := <-lost:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the reconcile's context did not end with its ownership")
	}

	mu.Lock()
	defer mu.Unlock()
	assert.Zero(t, worked["theirs"], "a key this replica does not own is never reconciled")
}
