package controllertest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/storetap"
)

// Hooks sit between the controllers and the store (New(t, WithStore(hooks.Wrap))): they
// run a test's function just before the next Replace or Patch, record every Replace,
// Patch and Create that reaches the store, and count point reads. A Patch counts as a
// replace here: it is how docwrite replaces the owned fields of a document. The zero
// value is ready to use.
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

// RecordedWrite is one Replace, Patch or Create that reached the store.
type RecordedWrite struct {
	Container string
	// Body is the document a Replace or Create sent, or the document as a successful
	// Patch left it (nil when the Patch failed).
	Body []byte
	// Patch is the operations of a Patch; nil for a Replace or Create.
	Patch []database.PatchOperation
	Err   error
}

// Wrap returns s with every container it opens hooked; pass it to WithStore.
func (h *Hooks) Wrap(s database.Store) database.Store { return hookedStore{Store: s, hooks: h} }

// BeforeNextReplace runs f once, just before the next Replace or Patch reaches the store.
func (h *Hooks) BeforeNextReplace(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before = f
}

// LoseNextReplace makes the next Replace or Patch lose an etag race: just before it reaches the
// store, another writer applies edits to the stored document (see Kit.ReplaceStored).
// For unit tests, whose reconciles run on the test's goroutine.
func (h *Hooks) LoseNextReplace(t testing.TB, k *Kit, container string, rid *api.ResourceID, edits ...Edit) {
	h.BeforeNextReplace(func() { k.ReplaceStored(t, container, rid, edits...) })
}

// Writes returns the Replaces (and Patches) and Creates that reached the store so far,
// in order.
func (h *Hooks) Writes() (replaces, creates []RecordedWrite) {
	h.inflight.Lock()
	defer h.inflight.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]RecordedWrite(nil), h.replaces...), append([]RecordedWrite(nil), h.creates...)
}

// SuccessfulReplaces counts the Replaces and Patches the store applied.
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

// RequireLostRace checks that the one Replace or Patch so far failed with 412.
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

func (c *hookedContainer) runBefore() {
	h := c.hooks
	h.mu.Lock()
	before := h.before
	h.before = nil
	h.mu.Unlock()
	if before != nil {
		before()
	}
}

func (c *hookedContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	h := c.hooks
	c.runBefore()
	h.inflight.RLock()
	defer h.inflight.RUnlock()
	item, err := c.Container.Replace(ctx, pk, id, body, ifMatch)
	h.mu.Lock()
	h.replaces = append(h.replaces, RecordedWrite{Container: c.Name(), Body: body, Err: err})
	h.mu.Unlock()
	return item, err
}

func (c *hookedContainer) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	h := c.hooks
	c.runBefore()
	h.inflight.RLock()
	defer h.inflight.RUnlock()
	stored, answer, err := storetap.Patch(ctx, c.Container, pk, id, ops, opts)
	h.mu.Lock()
	h.replaces = append(h.replaces, RecordedWrite{Container: c.Name(), Body: stored.Body, Patch: ops, Err: err})
	h.mu.Unlock()
	return answer, err
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
