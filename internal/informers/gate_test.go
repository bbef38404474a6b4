package informers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// editJSON decodes a stored body, lets edit change it and encodes it again, the way a
// component that knows nothing of hcpsched's codec rewrites a document.
func editJSON(t *testing.T, body []byte, edit func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	edit(doc)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

func properties(doc map[string]any) map[string]any {
	p, _ := doc["properties"].(map[string]any)
	if p == nil {
		p = map[string]any{}
		doc["properties"] = p
	}
	return p
}

// foreignWrite is another ARO-HCP component's read-modify-write: it sets a field of its
// own and leaves cosmosMetadata exactly as it found it (absent, instanceVersion 0, or a
// value it does not bump).
func foreignWrite(t *testing.T, c database.Container, pk, id, marker string) database.Item {
	t.Helper()
	ctx := context.Background()
	cur, err := c.Get(ctx, pk, id)
	require.NoError(t, err)
	body := editJSON(t, cur.Body, func(doc map[string]any) { properties(doc)["foreignMarker"] = marker })
	written, err := c.Replace(ctx, pk, id, body, cur.ETag)
	require.NoError(t, err)
	return written
}

// handlerLog records what update handlers were given, encoded, so a test can ask whether
// a write reached them.
type handlerLog struct {
	mu   sync.Mutex
	seen [][]byte
}

func (h *handlerLog) record(obj any) {
	o, ok := obj.(interface{ Encoded() ([]byte, error) })
	if !ok {
		return
	}
	b, err := o.Encoded()
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, b)
}

func (h *handlerLog) saw(marker string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.seen {
		if bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}

func (h *handlerLog) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: h.record, UpdateFunc: func(_, n any) { h.record(n) }}
}

// legacyCluster is a cluster document whose cosmosMetadata edit leaves as an older
// writer would have stored it.
func legacyCluster(t *testing.T, sub, name string, edit func(meta map[string]any)) (pk string, body []byte) {
	t.Helper()
	d := clusterDoc(sub, name)
	encoded, err := api.Encode(d)
	require.NoError(t, err)
	return d.PartitionKey, editJSON(t, encoded, func(doc map[string]any) {
		meta, _ := properties(doc)["cosmosMetadata"].(map[string]any)
		require.NotNil(t, meta)
		edit(meta)
	})
}

// A write by another component to a document whose instanceVersion it does not keep
// reaches the cache and the event handlers within two polls, not at the next relist.
func TestForeignWritesToLegacyDocumentsReachTheCache(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		f := start(t, newStore, time.Hour)
		var handled handlerLog
		for _, inf := range []cache.SharedIndexInformer{f.clusters.SharedIndexInformer, f.spcs.SharedIndexInformer} {
			_, err := inf.AddEventHandler(handled.handler())
			require.NoError(t, err)
		}
		c := f.store.Container(api.ResourcesContainer)
		within := 2 * pollInterval

		withoutMetadata := arohcp.Get("serviceprovidercluster-without-cosmosmetadata.json")
		ivZeroPK, ivZero := legacyCluster(t, "sub-legacy", "iv-zero", func(meta map[string]any) { meta["instanceVersion"] = 0 })
		ivFrozenPK, ivFrozen := legacyCluster(t, "sub-legacy", "iv-frozen", func(meta map[string]any) { meta["instanceVersion"] = 7 })
		for _, tc := range []struct {
			name string
			pk   string
			body []byte
			get  func(resourceID string) ([]byte, error)
		}{
			{"no cosmosMetadata", "6b690bec-0c16-4ecb-8f67-781caf40bba7", withoutMetadata, encodedFrom(f.spcs.Lister())},
			{"instanceVersion 0", ivZeroPK, ivZero, encodedFrom(f.clusters.Lister())},
			{"instanceVersion never bumped", ivFrozenPK, ivFrozen, encodedFrom(f.clusters.Lister())},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				id, resourceID, _ := api.Identify(tc.body)
				_, err := c.Create(ctx, tc.pk, tc.body)
				require.NoError(t, err)
				require.Eventually(t, func() bool { _, err := tc.get(resourceID); return err == nil }, 5*time.Second, 5*time.Millisecond, "the document is cached")

				for i := 1; i <= 2; i++ {
					marker := fmt.Sprintf("%s foreign write %d", tc.name, i)
					foreignWrite(t, c, tc.pk, id, marker)
					assert.Eventually(t, func() bool {
						b, err := tc.get(resourceID)
						return err == nil && bytes.Contains(b, []byte(marker)) && handled.saw(marker)
					}, within, 5*time.Millisecond, "%q reaches the lister and the handlers within two polls", marker)
				}
			})
		}
	})
}

func encodedFrom[P any](l *informers.Lister[P]) func(resourceID string) ([]byte, error) {
	return func(resourceID string) ([]byte, error) {
		d, err := l.Get(resourceID)
		if err != nil {
			return nil, err
		}
		return api.Encode(d)
	}
}

// racingStore stages the race between a list and the change feed: the first feed page
// is read once the list has subscribed, the document is written again after that page
// was published, and only then does the list read the store, so the list returns a newer
// version than the feed event queued before it; the feed reads on once the list is done.
type racingStore struct {
	database.Store
	resourceType string

	listStarted   chan struct{} // the list has subscribed its watch and is about to read
	pagePublished chan struct{} // the first feed page was handed to the informers
	release       chan struct{} // the test wrote the newer version: the list goes on
	listDone      chan struct{} // the list has read the store: the feed goes on

	lists, feedReads atomic.Int64
}

func newRacingStore(s database.Store, resourceType string) *racingStore {
	return &racingStore{Store: s, resourceType: resourceType,
		listStarted: make(chan struct{}), pagePublished: make(chan struct{}), release: make(chan struct{}), listDone: make(chan struct{})}
}

func (s *racingStore) Container(name string) database.Container {
	return &racingContainer{Container: s.Store.Container(name), store: s}
}

type racingContainer struct {
	database.Container
	store *racingStore
}

func (c *racingContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	inner := c.Container.List(ctx, opts)
	if !strings.EqualFold(opts.ResourceType, c.store.resourceType) || c.store.lists.Add(1) != 1 {
		return inner
	}
	return func(yield func(database.Item, error) bool) {
		close(c.store.listStarted)
		select {
		case <-c.store.release:
		case <-ctx.Done():
			yield(database.Item{}, ctx.Err())
			return
		}
		defer close(c.store.listDone)
		for item, err := range inner {
			if !yield(item, err) {
				return
			}
		}
	}
}

func (c *racingContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	switch c.store.feedReads.Add(1) {
	case 1:
		select {
		case <-c.store.listStarted:
		case <-ctx.Done():
			return database.ChangeFeedPage{}, ctx.Err()
		}
	case 2:
		// The pump asks for the next page only after publishing the first.
		close(c.store.pagePublished)
		select {
		case <-c.store.listDone:
		case <-ctx.Done():
			return database.ChangeFeedPage{}, ctx.Err()
		}
	}
	return c.Container.ChangeFeed(ctx, opts)
}

// The list may return a newer version than a feed event queued just before it; the
// cache must end on the newest version within two polls and stay there.
func TestListRacingTheFeedConverges(t *testing.T) {
	writers := []struct {
		name  string
		write func(t *testing.T, c database.Container, first *api.Cluster) string
	}{
		{"hcpsched writer", func(t *testing.T, c database.Container, first *api.Cluster) string {
			next := first.DeepCopy()
			next.Properties.ServiceProviderProperties.ProvisioningState = "Provisioning"
			_, err := database.Replace(context.Background(), c, next)
			require.NoError(t, err)
			return `"provisioningState":"Provisioning"`
		}},
		{"legacy writer", func(t *testing.T, c database.Container, first *api.Cluster) string {
			foreignWrite(t, c, first.PartitionKey, first.ID, "second version")
			return "second version"
		}},
	}
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		for _, w := range writers {
			t.Run(w.name, func(t *testing.T) {
				base := newStore(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := base.Container(api.ResourcesContainer)
				first, err := database.Create(ctx, c, clusterDoc("sub-race", "raced"))
				require.NoError(t, err)

				store := newRacingStore(base, api.ClusterResourceType)
				// Full documents: the legacy writer's change is a field no type declares.
				factory, err := informers.NewFactory(store, informers.Options{PollInterval: pollInterval, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry(), Documents: informers.FullDocuments})
				require.NoError(t, err)
				clusters := informers.NewCaches(factory).Clusters()
				factory.Start(ctx)

				select {
				case <-store.pagePublished:
				case <-time.After(10 * time.Second):
					t.Fatal("the first feed page was never published")
				}
				marker := w.write(t, c, first)
				close(store.release)
				require.True(t, factory.WaitForCacheSync(ctx))

				get := encodedFrom(clusters.Lister())
				hasMarker := func() bool {
					b, err := get(first.ResourceID)
					return err == nil && bytes.Contains(b, []byte(marker))
				}
				assert.Eventually(t, hasMarker, 2*pollInterval, 5*time.Millisecond, "the cache reaches the newer version within two polls")
				reads := store.feedReads.Load()
				require.Eventually(t, func() bool { return store.feedReads.Load() >= reads+2 }, 10*time.Second, 5*time.Millisecond)
				assert.True(t, hasMarker(), "and stays on it")
			})
		}
	})
}

// startWithHiddenCluster starts a fixture on the memory store with one cluster created
// and cached, then hides that cluster from the change feed: later writes reach the cache
// only through Assume until the test shows them again.
func startWithHiddenCluster(t *testing.T, sub, name string) (*fixture, *api.Cluster) {
	t.Helper()
	f := start(t, stores["memory"], time.Hour)
	lister := f.clusters.Lister()
	created, err := database.Create(context.Background(), f.store.Container(api.ResourcesContainer), clusterDoc(sub, name))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := lister.Get(created.ResourceID); return err == nil }, 5*time.Second, 5*time.Millisecond)
	f.store.hideFromFeed(created.ID)
	return f, created
}

// An Assumed write retires as soon as the cache holds a newer write, even one by a
// component that rewrote cosmosMetadata without an instanceVersion.
func TestAssumedWriteYieldsToANewerForeignWrite(t *testing.T) {
	f, created := startWithHiddenCluster(t, "sub-assume", "shadowed")
	ctx := context.Background()
	c := f.store.Container(api.ResourcesContainer)
	lister := f.clusters.Lister()
	ours := created.DeepCopy()
	ours.Properties.ServiceProviderProperties.ProvisioningState = "Provisioning"
	written, err := database.Replace(ctx, c, ours)
	require.NoError(t, err)
	f.clusters.Assume(written)
	got, err := lister.Get(created.ResourceID)
	require.NoError(t, err)
	require.Equal(t, "Provisioning", got.Properties.ServiceProviderProperties.ProvisioningState, "our write is visible at once")

	// Another component rewrites the document and drops instanceVersion on the way.
	cur, err := c.Get(ctx, created.PartitionKey, created.ID)
	require.NoError(t, err)
	body := editJSON(t, cur.Body, func(doc map[string]any) {
		p := properties(doc)
		p["cosmosMetadata"] = map[string]any{"resourceID": created.ResourceID}
		p["foreignMarker"] = "newer than ours"
	})
	_, err = c.Replace(ctx, created.PartitionKey, created.ID, body, cur.ETag)
	require.NoError(t, err)
	f.store.mu.Lock()
	delete(f.store.hide, created.ID)
	f.store.mu.Unlock()

	get := encodedFrom(lister)
	assert.Eventually(t, func() bool {
		b, err := get(created.ResourceID)
		return err == nil && bytes.Contains(b, []byte("newer than ours"))
	}, 2*pollInterval, 5*time.Millisecond, "the overlay yields to the newer write the feed delivered")
}

// Writes this process makes in quick succession share a _ts and carry no _lsn; the
// overlay still knows the cache is behind the last of them, not ahead.
func TestAssumedWritesInOneSecondStayVisible(t *testing.T) {
	f, created := startWithHiddenCluster(t, "sub-chain", "chained")
	ctx := context.Background()
	c := f.store.Container(api.ResourcesContainer)
	lister := f.clusters.Lister()
	prev := created
	for _, state := range []string{"Provisioning", "Succeeded", "Updating"} {
		next := prev.DeepCopy()
		next.Properties.ServiceProviderProperties.ProvisioningState = state
		written, err := database.Replace(ctx, c, next)
		require.NoError(t, err)
		f.clusters.Assume(written)
		got, err := lister.Get(created.ResourceID)
		require.NoError(t, err)
		assert.Equal(t, state, got.Properties.ServiceProviderProperties.ProvisioningState, "the cache still holds the first version")
		f.clusters.Assume(prev)
		got, _ = lister.Get(created.ResourceID)
		assert.Equal(t, state, got.Properties.ServiceProviderProperties.ProvisioningState, "an earlier write never shadows a later one")
		prev = written
	}
}
