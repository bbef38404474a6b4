package controllertest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// Hooks sit between the controllers and the store (New(t, WithStore(hooks.Wrap))): they
// run a test's function just before the next Replace, record every Replace and Create
// that reaches the store, and count point reads. The zero value is ready to use.
type Hooks struct {
	// inflight is held (shared) by every write from the store call until it is
	// recorded, so that Writes never misses a write that has already reached the store.
	inflight sync.RWMutex
	mu       sync.Mutex
	before   func()
	replaces []RecordedWrite
	creates  []RecordedWrite
	gets     map[string]int // point reads by container
}

// RecordedWrite is one Replace or Create that reached the store.
type RecordedWrite struct {
	Container string
	Body      []byte
	Err       error
}

// Wrap returns s with every container it opens hooked; pass it to WithStore.
func (h *Hooks) Wrap(s database.Store) database.Store { return hookedStore{Store: s, hooks: h} }

// BeforeNextReplace runs f once, just before the next Replace reaches the store.
func (h *Hooks) BeforeNextReplace(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before = f
}

// LoseNextReplace makes the next Replace lose an etag race: just before it reaches the
// store, another writer applies edits to the stored document (see Kit.ReplaceStored).
// For unit tests, whose reconciles run on the test's goroutine.
func (h *Hooks) LoseNextReplace(t testing.TB, k *Kit, container string, rid *api.ResourceID, edits ...Edit) {
	h.BeforeNextReplace(func() { k.ReplaceStored(t, container, rid, edits...) })
}

// Writes returns the Replaces and Creates that reached the store so far, in order.
func (h *Hooks) Writes() (replaces, creates []RecordedWrite) {
	h.inflight.Lock()
	defer h.inflight.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]RecordedWrite(nil), h.replaces...), append([]RecordedWrite(nil), h.creates...)
}

// SuccessfulReplaces counts the Replaces the store applied.
func (h *Hooks) SuccessfulReplaces() int {
	replaces, _ := h.Writes()
	n := 0
	for _, w := range replaces {
		if w.Err == nil {
			n++
		}
	}
	return n
}

// RequireLostRace checks that the one Replace so far failed with 412.
func (h *Hooks) RequireLostRace(t testing.TB) {
	t.Helper()
	replaces, _ := h.Writes()
	require.Len(t, replaces, 1)
	require.ErrorIs(t, replaces[0].Err, database.ErrPreconditionFailed)
}

// PointReads counts the point reads of a container so far.
func (h *Hooks) PointReads(container string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gets[container]
}

type hookedStore struct {
	database.Store
	hooks *Hooks
}

func (s hookedStore) Container(name string) database.Container {
	return &hookedContainer{Container: s.Store.Container(name), hooks: s.hooks}
}

type hookedContainer struct {
	database.Container
	hooks *Hooks
}

func (c *hookedContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	h := c.hooks
	h.mu.Lock()
	before := h.before
	h.before = nil
	h.mu.Unlock()
	if before != nil {
		before()
	}
	h.inflight.RLock()
	defer h.inflight.RUnlock()
	item, err := c.Container.Replace(ctx, pk, id, body, ifMatch)
	h.mu.Lock()
	h.replaces = append(h.replaces, RecordedWrite{Container: c.Name(), Body: body, Err: err})
	h.mu.Unlock()
	return item, err
}

func (c *hookedContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	h := c.hooks
	h.inflight.RLock()
	defer h.inflight.RUnlock()
	item, err := c.Container.Create(ctx, pk, body)
	h.mu.Lock()
	h.creates = append(h.creates, RecordedWrite{Container: c.Name(), Body: body, Err: err})
	h.mu.Unlock()
	return item, err
}

func (c *hookedContainer) Get(ctx context.Context, pk, id string) (database.Item, error) {
	h := c.hooks
	h.mu.Lock()
	if h.gets == nil {
		h.gets = map[string]int{}
	}
	h.gets[c.Name()]++
	h.mu.Unlock()
	return c.Container.Get(ctx, pk, id)
}
