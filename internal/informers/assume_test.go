package informers_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// OnAssume hooks hear of every Assumed write at once, by the document's cache key, and
// the listers already show the write when they do: whoever keeps state derived from the
// listers (the placement snapshot) reads the write it is told of, not the version before.
func TestOnAssumeHearsEveryAssumedWrite(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	factory, err := informers.NewFactory(store, informers.Options{Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
	lister := schedulings.Lister()
	c := store.Container(api.FleetContainer)
	created, err := database.Create(ctx, c, schedulingDoc("Stamp-1"))
	require.NoError(t, err)

	type heard struct {
		hook, key string
		pending   []string
	}
	var got []heard
	hook := func(name string) func(key string) {
		return func(key string) {
			d, err := lister.Get(key)
			var pending []string
			if assert.NoError(t, err, "the lister holds the document the hook is told of") {
				pending = d.Properties.Status.PendingAssignedClusters
			}
			got = append(got, heard{hook: name, key: key, pending: pending})
		}
	}
	schedulings.OnAssume(hook("first"))

	const cluster = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
	reserve := created.DeepCopy()
	reserve.Properties.Status.PendingAssignedClusters = []string{cluster}
	written, err := database.Replace(ctx, c, reserve)
	require.NoError(t, err)
	schedulings.Assume(written)
	key := strings.ToLower(written.ResourceID)
	assert.Equal(t, []heard{{hook: "first", key: key, pending: []string{cluster}}}, got, "told at once, by cache key, after the lister shows the write")

	// A hook registered later hears the writes from then on, after the earlier hooks.
	got = nil
	schedulings.OnAssume(hook("second"))
	release := written.DeepCopy()
	release.Properties.Status.PendingAssignedClusters = nil
	released, err := database.Replace(ctx, c, release)
	require.NoError(t, err)
	schedulings.Assume(released)
	assert.Equal(t, []heard{{hook: "first", key: key}, {hook: "second", key: key}}, got)

	// A document without a resource ID cannot be keyed: nothing is assumed, no hook told.
	got = nil
	anonymous := released.DeepCopy()
	anonymous.ResourceID = ""
	anonymous.Metadata().ResourceID = ""
	schedulings.Assume(anonymous)
	assert.Empty(t, got)
}

// A write through docwrite puts in the overlay what the change feed will bring: a lean
// informer gets a lean copy of the stored document (no field it does not declare, so no
// more heap than the feed's copy), a full one the whole document.
func TestWriteThroughDecodesAsTheFeedDoes(t *testing.T) {
	for _, docs := range []informers.Documents{informers.LeanDocuments, informers.FullDocuments} {
		t.Run(docs.String(), func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			factory, err := informers.NewFactory(store, informers.Options{Registerer: prometheus.NewRegistry(), Documents: docs})
			require.NoError(t, err)
			schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
			c := store.Container(api.FleetContainer)
			created, err := database.Create(ctx, c, schedulingDoc("Stamp-1"))
			require.NoError(t, err)
			foreign := foreignWrite(t, c, created.PartitionKey, created.ID, "kept by the store")
			cached, err := schedulings.DecodeStored(foreign.Body)
			require.NoError(t, err)

			res, err := docwrite.New(c, schedulings).Update(ctx, cached, docwrite.Fields{"properties.status.pendingAssignedClusters"},
				func(d *api.ManagementClusterScheduling) error {
					d.Properties.Status.PendingAssignedClusters = []string{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"}
					return nil
				})
			require.NoError(t, err)
			require.Equal(t, docwrite.Written, res.Outcome)

			assumed, err := schedulings.Lister().Get(strings.ToLower(created.ResourceID))
			require.NoError(t, err)
			stored, err := c.Get(ctx, created.PartitionKey, created.ID)
			require.NoError(t, err)
			fromFeed, err := schedulings.DecodeStored(stored.Body)
			require.NoError(t, err)
			// The patch asks for no document back, so the copy keeps the cached version's
			// _ts: a lower bound of the write's (see docwrite's patched).
			assert.LessOrEqual(t, assumed.Timestamp, fromFeed.Timestamp)
			withStoredTS := *assumed
			withStoredTS.Timestamp = fromFeed.Timestamp
			got, err := api.Encode(&withStoredTS)
			require.NoError(t, err)
			assert.Contains(t, string(stored.Body), "kept by the store", "the patch left the foreign field in the store")
			if docs == informers.LeanDocuments {
				assert.NotContains(t, string(got), "foreignMarker", "a lean cache keeps no undeclared field")
			} else {
				assert.Contains(t, string(got), "kept by the store", "a full cache keeps every field")
			}
			want, err := api.Encode(fromFeed)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// A document this process creates through docwrite enters the overlay as the change feed
// will bring it: lean in a lean informer (none of the system properties it does not
// declare), whole in a full one. A lean cache given the whole document would keep it
// whole through every later write, which starts from the cached copy.
func TestCreateWritesThroughAsTheFeedDecodes(t *testing.T) {
	for _, docs := range []informers.Documents{informers.LeanDocuments, informers.FullDocuments} {
		t.Run(docs.String(), func(t *testing.T) {
			store := memory.New()
			factory, err := informers.NewFactory(store, informers.Options{Registerer: prometheus.NewRegistry(), Documents: docs})
			require.NoError(t, err)
			schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
			c := store.Container(api.FleetContainer)

			doc := schedulingDoc("Stamp-1")
			res, err := docwrite.New(c, schedulings).Create(t.Context(), doc)
			require.NoError(t, err)
			require.Equal(t, docwrite.Written, res.Outcome)

			assumed, err := schedulings.Lister().Get(doc.ResourceID)
			require.NoError(t, err)
			got, err := api.Encode(assumed)
			require.NoError(t, err)
			if docs == informers.LeanDocuments {
				assert.NotContains(t, string(got), "_self", "a lean cache keeps no undeclared field")
			} else {
				assert.Contains(t, string(got), "_self", "a full cache keeps every field")
			}
			stored, err := c.Get(t.Context(), doc.PartitionKey, doc.ID)
			require.NoError(t, err)
			fromFeed, err := schedulings.DecodeStored(stored.Body)
			require.NoError(t, err)
			want, err := api.Encode(fromFeed)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// BenchmarkByIndexWithAssumedWrites reads one index value while many writes of this
// process wait for the change feed, as in a burst: the cost should not grow with them.
func BenchmarkByIndexWithAssumedWrites(b *testing.B) {
	for _, assumedWrites := range []int{10, 1000} {
		b.Run(fmt.Sprintf("assumed=%d", assumedWrites), func(b *testing.B) {
			factory, err := informers.NewFactory(memory.New(), informers.Options{Registerer: prometheus.NewRegistry()})
			require.NoError(b, err)
			schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
			var cluster string
			for i := range assumedWrites {
				cluster = fmt.Sprintf("/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c%d", i)
				doc := schedulingDoc(fmt.Sprintf("%d", i+1), cluster)
				doc.ETag = fmt.Sprintf("\"etag-%d\"", i)
				schedulings.Assume(doc)
			}
			lister := schedulings.Lister()
			key := informers.KeyOf(cluster)
			b.ReportAllocs()
			for b.Loop() {
				got, err := lister.ByIndex(informers.IndexByPendingCluster, key)
				if err != nil || len(got) != 1 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// When the change feed brings a write this process made, the cache takes the copy the
// write already decoded, with the feed item's _lsn (by which the cache orders writes),
// instead of decoding the item again; it is the document the feed item holds.
func TestFeedTakesTheDecodedCopyOfOwnWrites(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The write is stored a second after the document was created: the write's own copy
	// does not know its _ts (the patch asks for no document back), the feed's does.
	var clock atomic.Int64
	clock.Store(time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC).Unix())
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(clock.Load(), 0) }))
	factory, err := informers.NewFactory(store, informers.Options{PollInterval: 20 * time.Millisecond, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
	factory.Start(ctx)
	require.True(t, factory.WaitForCacheSync(ctx))
	c := store.Container(api.FleetContainer)
	created, err := database.Create(ctx, c, schedulingDoc("Stamp-1"))
	require.NoError(t, err)
	key := strings.ToLower(created.ResourceID)
	cachedFromFeed := func() *api.ManagementClusterScheduling {
		obj, ok, err := schedulings.GetStore().GetByKey(key)
		if err != nil || !ok {
			return nil
		}
		d, _ := informers.DocumentOf[api.ManagementClusterSchedulingProperties](obj)
		return d
	}
	require.Eventually(t, func() bool { return cachedFromFeed() != nil }, 5*time.Second, time.Millisecond)

	clock.Add(1)
	res, err := docwrite.New(c, schedulings).Update(ctx, cachedFromFeed(), docwrite.Fields{"properties.status.pendingAssignedClusters"},
		func(d *api.ManagementClusterScheduling) error {
			d.Properties.Status.PendingAssignedClusters = []string{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"}
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, docwrite.Written, res.Outcome)

	var fromFeed *api.ManagementClusterScheduling
	require.Eventually(t, func() bool {
		fromFeed = cachedFromFeed()
		return fromFeed != nil && fromFeed.ETag == res.Stored.ETag
	}, 5*time.Second, time.Millisecond, "the feed brings the write")
	assert.Positive(t, fromFeed.LSN, "the feed item's _lsn")
	assert.Same(t, res.Stored.Properties.Status, fromFeed.Properties.Status, "the write's decoded copy, not a second decode")

	var item database.Item
	page, err := c.ChangeFeed(ctx, database.ChangeFeedOptions{Start: database.FromBeginning})
	require.NoError(t, err)
	for _, it := range page.Items {
		if it.ETag == res.Stored.ETag {
			item = it
		}
	}
	require.NotEmpty(t, item.Body, "the write is in the feed")
	want, err := schedulings.DecodeStored(item.Body)
	require.NoError(t, err)
	wantJSON, err := api.Encode(want)
	require.NoError(t, err)
	gotJSON, err := api.Encode(fromFeed)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(gotJSON), "the same document as a decode of the feed item")
}
