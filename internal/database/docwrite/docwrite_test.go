package docwrite

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// fixtureMC is an ARO-HCP management cluster: three conditions and fields hcpsched does
// not own.
const fixtureMC = "constructed/fleet-managementcluster-1-ready-schedulable.json"

// recordingCache is the write-through side of an informer, remembering what it was told.
type recordingCache[P any] struct {
	mu      sync.Mutex
	assumed []*api.Document[P]
}

func (c *recordingCache[P]) Assume(d *api.Document[P]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assumed = append(c.assumed, d)
}

// leanRecordingCache is a recordingCache that decodes what the store answers as a lean
// informer does (StoredDecoder).
type leanRecordingCache[P any] struct{ recordingCache[P] }

func (c *leanRecordingCache[P]) DecodeStored(body []byte) (*api.Document[P], error) {
	return api.DecodeLean[P](body)
}

// countingContainer counts the requests that reach the store, remembers the patches
// sent, and can fail the next request of a kind with a given error.
type countingContainer struct {
	database.Container
	mu       sync.Mutex
	replaces int
	creates  int
	patches  int
	gets     int
	sent     [][]database.PatchOperation
	guards   []database.PatchOptions
	failWith error
	// failPatchWith, failGetWith and failReplaceWith fail only that kind of request.
	failPatchWith, failGetWith, failReplaceWith error
}

func (c *countingContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	c.mu.Lock()
	c.replaces++
	err := cmp.Or(c.failWith, c.failReplaceWith)
	c.mu.Unlock()
	if err != nil {
		return database.Item{}, err
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

func (c *countingContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	c.mu.Lock()
	c.creates++
	err := c.failWith
	c.mu.Unlock()
	if err != nil {
		return database.Item{}, err
	}
	return c.Container.Create(ctx, pk, body)
}

func (c *countingContainer) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	c.mu.Lock()
	c.patches++
	c.sent = append(c.sent, ops)
	c.guards = append(c.guards, opts)
	err := cmp.Or(c.failWith, c.failPatchWith)
	c.mu.Unlock()
	if err != nil {
		return database.Item{}, err
	}
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

func (c *countingContainer) Get(ctx context.Context, pk, id string) (database.Item, error) {
	c.mu.Lock()
	c.gets++
	err := c.failGetWith
	c.mu.Unlock()
	if err != nil {
		return database.Item{}, err
	}
	return c.Container.Get(ctx, pk, id)
}

type world struct {
	store  *memory.Store
	fleet  *countingContainer
	cache  *recordingCache[api.ManagementClusterProperties]
	writer Writer[api.ManagementClusterProperties]
	cached *api.ManagementCluster
}

// newWorld stores the fixture management cluster and returns it as a cache would hold it.
func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{store: memory.New(), cache: &recordingCache[api.ManagementClusterProperties]{}}
	w.fleet = &countingContainer{Container: w.store.Container(api.FleetContainer)}
	item, err := w.fleet.Container.Create(context.Background(), "1", arohcp.Get(fixtureMC))
	require.NoError(t, err)
	w.cached, err = database.DecodeItem[api.ManagementClusterProperties](item)
	require.NoError(t, err)
	w.writer = New(w.fleet, w.cache)
	return w
}

func (w *world) stored(t *testing.T) *api.ManagementCluster {
	t.Helper()
	d, err := database.Get[api.ManagementClusterProperties](context.Background(), w.fleet.Container, "1", w.cached.ResourceID)
	require.NoError(t, err)
	return d
}

func setCondition(status, reason string) func(*api.ManagementCluster) error {
	return func(d *api.ManagementCluster) error {
		for i := range d.Properties.Status.Conditions {
			if d.Properties.Status.Conditions[i].Type == api.ManagementClusterConditionReady {
				d.Properties.Status.Conditions[i].Status = status
				d.Properties.Status.Conditions[i].Reason = reason
			}
		}
		return nil
	}
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	ready := Fields{"properties.status.conditions[Ready]"}
	tests := []struct {
		name   string
		owned  Fields
		change func(*api.ManagementCluster) error
		// storeErr fails the Patch that reaches the store.
		storeErr    error
		wantOutcome Outcome
		wantErr     error
		// wantRequest: a Patch reached the store.
		wantRequest bool
	}{
		{
			name:        "a change that leaves the document as it was sends nothing",
			owned:       ready,
			change:      setCondition(api.ConditionTrue, api.ManagementClusterReasonAllRegistered),
			wantOutcome: Unchanged,
		},
		{
			name:        "a changed owned field is written and assumed into the cache",
			owned:       ready,
			change:      setCondition(api.ConditionFalse, api.ManagementClusterReasonRegistrationIncomplete),
			wantOutcome: Written,
			wantRequest: true,
		},
		{
			name:        "412: another writer was first",
			owned:       ready,
			change:      setCondition(api.ConditionFalse, api.ManagementClusterReasonRegistrationIncomplete),
			storeErr:    &database.OpError{Op: "patch", Kind: database.ErrPreconditionFailed},
			wantOutcome: LostRace,
			wantRequest: true,
		},
		{
			name:        "404: the document went away",
			owned:       ready,
			change:      setCondition(api.ConditionFalse, api.ManagementClusterReasonRegistrationIncomplete),
			storeErr:    &database.OpError{Op: "patch", Kind: database.ErrNotFound},
			wantOutcome: LostRace,
			wantRequest: true,
		},
		{
			name:  "a change outside the owned fields is refused before any request",
			owned: ready,
			change: func(d *api.ManagementCluster) error {
				d.Properties.Spec.SchedulingPolicy = api.Unschedulable
				return nil
			},
			wantErr: ErrNotOwned,
		},
		{
			name:  "another condition than the owned one is not owned",
			owned: ready,
			change: func(d *api.ManagementCluster) error {
				d.Properties.Status.Conditions[0].Reason = api.ManagementClusterReasonCheckFailed
				return nil
			},
			wantErr: ErrNotOwned,
		},
		{
			name:  "the change's own error is returned and nothing is sent",
			owned: ready,
			change: func(*api.ManagementCluster) error {
				return errors.New("cannot decide")
			},
			wantErr: errors.New("cannot decide"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.fleet.failWith = tc.storeErr
			before, err := api.Encode(w.cached)
			require.NoError(t, err)

			res, err := w.writer.Update(t.Context(), w.cached, tc.owned, tc.change)

			after, encErr := api.Encode(w.cached)
			require.NoError(t, encErr)
			assert.Equal(t, string(before), string(after), "the cached document is never modified")
			assert.Equal(t, tc.wantRequest, w.fleet.patches == 1, "a Patch reached the store")
			assert.Zero(t, w.fleet.replaces, "a change of a few fields is never a Replace")
			if tc.wantErr != nil {
				if errors.Is(tc.wantErr, ErrNotOwned) {
					require.ErrorIs(t, err, ErrNotOwned)
				} else {
					require.EqualError(t, err, tc.wantErr.Error())
				}
				assert.Empty(t, w.cache.assumed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantOutcome, res.Outcome)
			if tc.wantOutcome != Written {
				assert.Nil(t, res.Stored)
				assert.Empty(t, w.cache.assumed, "nothing written, nothing assumed")
				assert.Equal(t, w.cached.ETag, w.stored(t).ETag)
				return
			}
			stored := w.stored(t)
			require.NotNil(t, res.Stored)
			assert.Equal(t, stored.ETag, res.Stored.ETag, "Stored is what the store holds")
			// The patch asks for no document back: Stored is the changed copy, stamped,
			// with the cached version's _ts (a lower bound of the write's).
			require.Len(t, w.fleet.guards, 1)
			assert.True(t, w.fleet.guards[0].Minimal, "the patch asks for the minimal answer")
			assert.LessOrEqual(t, res.Stored.Timestamp, stored.Timestamp)
			withStoredTS := *res.Stored
			withStoredTS.Timestamp = stored.Timestamp
			want, err := api.Encode(stored)
			require.NoError(t, err)
			got, err := api.Encode(&withStoredTS)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got), "Stored is the document the store holds")
			assert.Equal(t, w.cached.InstanceVersion()+1, stored.InstanceVersion())
			assert.False(t, api.IsConditionTrue(stored.Properties.Status.Conditions, api.ManagementClusterConditionReady))
			require.Len(t, w.cache.assumed, 1)
			assert.Same(t, res.Stored, w.cache.assumed[0], "the stored document is what the cache is told")
		})
	}
}

func TestUpdateReportsOtherStoreErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fleet.failWith = errors.New("connection reset")
	_, err := w.writer.Update(t.Context(), w.cached, Fields{"properties.spec.schedulingPolicy"}, func(d *api.ManagementCluster) error {
		d.Properties.Spec.SchedulingPolicy = api.Unschedulable
		return nil
	})
	require.ErrorContains(t, err, "patching "+w.cached.ResourceID+" in Fleet: connection reset")
	assert.Empty(t, w.cache.assumed)
}

// A cached document that has been written since is stale: its etag no longer matches.
func TestUpdateFromAStaleCopyLosesTheRace(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	owned := Fields{"properties.spec.schedulingPolicy"}
	res, err := w.writer.Update(t.Context(), w.cached, owned, func(d *api.ManagementCluster) error {
		d.Properties.Spec.SchedulingPolicy = api.Unschedulable
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, Written, res.Outcome)

	res, err = w.writer.Update(t.Context(), w.cached, owned, func(d *api.ManagementCluster) error {
		d.Properties.Spec.SchedulingPolicy = "Draining"
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, LostRace, res.Outcome)
	assert.Equal(t, api.Unschedulable, w.stored(t).Properties.Spec.SchedulingPolicy)
}

// Refresh makes the stored version of a document another writer changed visible to the
// cache, and assumes nothing when there is nothing newer to see.
func TestRefresh(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// foreign is what another writer does to the stored document first.
		foreign     func(t *testing.T, w *world)
		failGet     error
		wantAssumed bool
		wantErr     string
	}{
		{name: "changed by another writer", wantAssumed: true, foreign: func(t *testing.T, w *world) {
			other := New[api.ManagementClusterProperties](w.fleet.Container, NoCache[api.ManagementClusterProperties]{})
			res, err := other.Update(t.Context(), w.cached, Fields{"properties.spec.schedulingPolicy"}, func(d *api.ManagementCluster) error {
				d.Properties.Spec.SchedulingPolicy = api.Unschedulable
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, Written, res.Outcome)
		}},
		{name: "unchanged", foreign: func(*testing.T, *world) {}},
		{name: "gone", foreign: func(t *testing.T, w *world) {
			require.NoError(t, w.fleet.Container.Delete(t.Context(), w.cached.PartitionKey, w.cached.ID, ""))
		}},
		{name: "read fails", foreign: func(*testing.T, *world) {}, failGet: errors.New("connection reset"),
			wantErr: "reading " + api.ManagementClusterResourceID("1").String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			tt.foreign(t, w)
			w.fleet.failGetWith = tt.failGet
			err := w.writer.Refresh(t.Context(), w.cached)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Empty(t, w.cache.assumed)
				return
			}
			require.NoError(t, err)
			if !tt.wantAssumed {
				assert.Empty(t, w.cache.assumed)
				return
			}
			require.Len(t, w.cache.assumed, 1)
			stored := w.stored(t)
			assert.Equal(t, stored.ETag, w.cache.assumed[0].ETag)
			assert.Equal(t, api.Unschedulable, w.cache.assumed[0].Properties.Spec.SchedulingPolicy)
		})
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	mcID := api.ManagementClusterResourceID("1")
	newScheduling := func(t *testing.T) *api.ManagementClusterScheduling {
		d, err := api.NewManagementClusterScheduling(mcID)
		require.NoError(t, err)
		return d
	}
	t.Run("a new document is written and assumed into the cache", func(t *testing.T) {
		t.Parallel()
		c := &countingContainer{Container: memory.New().Container(api.FleetContainer)}
		cache := &recordingCache[api.ManagementClusterSchedulingProperties]{}
		res, err := New(c, cache).Create(t.Context(), newScheduling(t))
		require.NoError(t, err)
		assert.Equal(t, Written, res.Outcome)
		require.NotNil(t, res.Stored)
		assert.NotEmpty(t, res.Stored.ETag)
		assert.Equal(t, int64(1), res.Stored.InstanceVersion())
		require.Len(t, cache.assumed, 1)
		assert.Same(t, res.Stored, cache.assumed[0])
	})
	t.Run("409: someone created it first", func(t *testing.T) {
		t.Parallel()
		c := &countingContainer{Container: memory.New().Container(api.FleetContainer)}
		cache := &recordingCache[api.ManagementClusterSchedulingProperties]{}
		w := New(c, cache)
		_, err := w.Create(t.Context(), newScheduling(t))
		require.NoError(t, err)
		res, err := w.Create(t.Context(), newScheduling(t))
		require.NoError(t, err)
		assert.Equal(t, LostRace, res.Outcome)
		assert.Nil(t, res.Stored)
		assert.Len(t, cache.assumed, 1, "only the first create is assumed")
	})
	t.Run("other errors", func(t *testing.T) {
		t.Parallel()
		c := &countingContainer{Container: memory.New().Container(api.FleetContainer), failWith: errors.New("connection reset")}
		cache := &recordingCache[api.ManagementClusterSchedulingProperties]{}
		_, err := New(c, cache).Create(t.Context(), newScheduling(t))
		require.ErrorContains(t, err, "creating "+api.SchedulingResourceID(mcID).String()+" in Fleet: connection reset")
		assert.Empty(t, cache.assumed)
	})
}

// A writer over a container no informer watches has nothing to write through to.
func TestNoCache(t *testing.T) {
	t.Parallel()
	c := memory.New().Container(api.FleetContainer)
	d, err := api.NewManagementClusterScheduling(api.ManagementClusterResourceID("1"))
	require.NoError(t, err)
	res, err := New[api.ManagementClusterSchedulingProperties](c, NoCache[api.ManagementClusterSchedulingProperties]{}).Create(t.Context(), d)
	require.NoError(t, err)
	assert.Equal(t, Written, res.Outcome)
}

// confined decides what a change may touch; these cases are JSON, the way the store sees
// a document. (conditions_test.go has the cases of one owned condition beside others.)
func TestConfined(t *testing.T) {
	t.Parallel()
	const base = `{"id":"x","properties":{"spec":{"policy":"A","other":1},` +
		`"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`
	tests := []struct {
		name   string
		before string // base when empty
		after  string
		owned  Fields
		// notOwned is the path ErrNotOwned names; empty: the change is allowed.
		notOwned string
	}{
		{
			name:  "an owned leaf",
			after: `{"id":"x","properties":{"spec":{"policy":"B","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned: Fields{"properties.spec.policy"},
		},
		{
			name:     "a leaf beside the owned one",
			after:    `{"id":"x","properties":{"spec":{"policy":"A","other":2},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned:    Fields{"properties.spec.policy"},
			notOwned: "properties.spec.other",
		},
		{
			name:     "an envelope field",
			after:    `{"id":"y","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned:    Fields{"properties.spec"},
			notOwned: "id",
		},
		{
			name:  "an owned path owns everything beneath it",
			after: `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":2,"c":[1]}}}}}`,
			owned: Fields{"properties.status.nested"},
		},
		{
			name:  "a nested owned path",
			after: `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":2}}}}}`,
			owned: Fields{"properties.status.nested.a.b"},
		},
		{
			name:     "a field added beside a nested owned path",
			after:    `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":1,"c":1}}}}}`,
			owned:    Fields{"properties.status.nested.a.b"},
			notOwned: "properties.status.nested.a.c",
		},
		{
			name:     "a field removed beside a nested owned path",
			after:    `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"nested":{"a":{"b":1}}}}}`,
			owned:    Fields{"properties.status.nested.a.b"},
			notOwned: "properties.status.shard",
		},
		{
			name:   "an object appearing under an owned path",
			before: `{"id":"x","properties":{}}`,
			after:  `{"id":"x","properties":{"status":{"scaleCeiling":{"capacity":{"cpu":"1"}}}}}`,
			owned:  Fields{"properties.status.scaleCeiling.capacity"},
		},
		{
			name:     "an object appearing with a field that is not owned",
			before:   `{"id":"x","properties":{}}`,
			after:    `{"id":"x","properties":{"status":{"scaleCeiling":{"capacity":{"cpu":"1"}},"other":true}}}`,
			owned:    Fields{"properties.status.scaleCeiling.capacity"},
			notOwned: "properties.status.other",
		},
		{
			name:   "an object going away with only owned fields in it",
			before: `{"id":"x","properties":{"status":{"scaleCeiling":{"capacity":{"cpu":"1"}}}}}`,
			after:  `{"id":"x","properties":{}}`,
			owned:  Fields{"properties.status.scaleCeiling.capacity"},
		},
		{
			name:     "a value on the way to an owned path turned into an object",
			before:   `{"id":"x","properties":{"status":"legacy"}}`,
			after:    `{"id":"x","properties":{"status":{"shard":"s"}}}`,
			owned:    Fields{"properties.status.shard"},
			notOwned: "properties.status",
		},
		{
			name:     "an object on the way to an owned path turned into a value",
			before:   `{"id":"x","properties":{"status":{"shard":"s"}}}`,
			after:    `{"id":"x","properties":{"status":"legacy"}}`,
			owned:    Fields{"properties.status.shard"},
			notOwned: "properties.status",
		},
		{
			name:  "the owned condition goes away",
			after: `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned: Fields{"properties.status.conditions[Ready]"},
		},
		{
			name:     "another condition is added",
			after:    `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"},{"type":"New","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned:    Fields{"properties.status.conditions[Ready]"},
			notOwned: "properties.status.conditions",
		},
		{
			name:  "two conditions, each owned",
			after: `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[{"type":"CS","status":"False"},{"type":"Ready","status":"False"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned: Fields{"properties.status.conditions[Ready]", "properties.status.conditions[CS]"},
		},
		{
			name:  "the whole array owned",
			after: `{"id":"x","properties":{"spec":{"policy":"A","other":1},"status":{"conditions":[],"shard":"s","nested":{"a":{"b":1}}}}}`,
			owned: Fields{"properties.status.conditions"},
		},
		{
			name:     "nothing owned",
			after:    `{"id":"x","properties":{"spec":{"policy":"B","other":1},"status":{"conditions":[{"type":"CS","status":"True"},{"type":"Ready","status":"True"}],"shard":"s","nested":{"a":{"b":1}}}}}`,
			notOwned: "properties.spec.policy",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := tc.before
			if before == "" {
				before = base
			}
			require.True(t, json.Valid([]byte(before)) && json.Valid([]byte(tc.after)), "test JSON")
			err := confined([]byte(before), []byte(tc.after), tc.owned)
			if tc.notOwned == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNotOwned)
			assert.ErrorContains(t, err, ": "+tc.notOwned+" (owned:")
		})
	}
}

// With nothing owned, every change is refused and equal documents pass, whatever their
// shape.
func FuzzConfinedWithNothingOwned(f *testing.F) {
	f.Add(`{"a":1}`, `{"a":1}`)
	f.Add(`{"a":{"b":[1,{"type":"X"}]}}`, `{"a":{"b":[{"type":"X"},1]}}`)
	f.Add(`{"a":null}`, `{}`)
	f.Fuzz(func(t *testing.T, before, after string) {
		var b, a any
		if decodeJSON([]byte(before), &b) != nil || decodeJSON([]byte(after), &a) != nil {
			t.Skip("not JSON")
		}
		if _, ok := b.(map[string]any); !ok {
			t.Skip("not a document")
		}
		if _, ok := a.(map[string]any); !ok {
			t.Skip("not a document")
		}
		err := confined([]byte(before), []byte(after), nil)
		if equalIgnoringNulls(b, a) {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, ErrNotOwned)
		}
	})
}

// equalIgnoringNulls compares decoded JSON the way confined does: a null member is the
// same as an absent one.
func equalIgnoringNulls(a, b any) bool {
	am, aIsObject := a.(map[string]any)
	bm, bIsObject := b.(map[string]any)
	if !aIsObject || !bIsObject {
		return reflect.DeepEqual(a, b)
	}
	for k := range am {
		if !equalIgnoringNulls(am[k], bm[k]) {
			return false
		}
	}
	for k := range bm {
		if !equalIgnoringNulls(am[k], bm[k]) {
			return false
		}
	}
	return true
}

func TestUnionOfSorted(t *testing.T) {
	tests := []struct {
		a, b, want []string
	}{
		{},
		{a: []string{"a", "c"}, want: []string{"a", "c"}},
		{b: []string{"b"}, want: []string{"b"}},
		{a: []string{"a", "c", "e"}, b: []string{"b", "c", "f"}, want: []string{"a", "b", "c", "e", "f"}},
		{a: []string{"x"}, b: []string{"x"}, want: []string{"x"}},
		{a: []string{"b", "d"}, b: []string{"a"}, want: []string{"a", "b", "d"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, slices.Collect(unionOfSorted(tt.a, tt.b)), "%v ∪ %v", tt.a, tt.b)
	}
}
