package informers_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

const pollInterval = 250 * time.Millisecond

// stores are the implementations every informer test runs against. feedRequests counts
// change-feed reads as the store itself sees them: for the emulator, real HTTP requests
// counted by the Cosmos client's metrics policy.
type testStore struct {
	database.Store
	feedRequests func() float64
}

var stores = map[string]func(t *testing.T) testStore{
	"memory": func(t *testing.T) testStore {
		s := &countingStore{Store: memory.New()}
		return testStore{Store: s, feedRequests: func() float64 { return float64(s.feedReads.Load()) }}
	},
	"emulator": func(t *testing.T) testStore {
		emu := emulator.StartForTest(t)
		reg := prometheus.NewRegistry()
		s, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: "informers"}, reg)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, s.EnsureLayout(ctx, api.ResourcesContainer, api.FleetContainer))
		return testStore{Store: s, feedRequests: func() float64 {
			return counterSum(t, reg, "hcpsched_cosmos_requests_total", map[string]string{"operation": cosmos.OperationChangeFeed})
		}}
	},
}

// counterSum adds up a counter family's series whose labels include want.
func counterSum(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
	metrics:
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metrics
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

// countingStore counts change-feed reads and can hide chosen items from the feed, to
// play a feed that missed an event.
type countingStore struct {
	database.Store
	feedReads atomic.Int64
	mu        sync.Mutex
	hide      map[string]bool
}

func (s *countingStore) Container(name string) database.Container {
	return &countingContainer{Container: s.Store.Container(name), store: s}
}

func (s *countingStore) hideFromFeed(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hide == nil {
		s.hide = map[string]bool{}
	}
	s.hide[id] = true
}

type countingContainer struct {
	database.Container
	store *countingStore
}

func (c *countingContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	c.store.feedReads.Add(1)
	page, err := c.Container.ChangeFeed(ctx, opts)
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	kept := page.Items[:0]
	for _, it := range page.Items {
		if !c.store.hide[it.ID] {
			kept = append(kept, it)
		}
	}
	page.Items = kept
	return page, err
}

type fixture struct {
	store    *countingStore
	factory  *informers.Factory
	registry *prometheus.Registry
	clusters *informers.Informer[api.ClusterProperties]
	spcs     *informers.Informer[api.ServiceProviderClusterProperties]
	updates  atomic.Int64
}

func start(t *testing.T, newStore func(t *testing.T) testStore, relist time.Duration) *fixture {
	t.Helper()
	f := &fixture{store: &countingStore{Store: newStore(t)}, registry: prometheus.NewRegistry()}
	var err error
	// Full documents: tests see other writers' changes through a field no type declares
	// (foreignWrite), which only full documents keep. The gate is the same in both modes.
	f.factory, err = informers.NewFactory(f.store, informers.Options{PollInterval: pollInterval, RelistPeriod: relist, Registerer: f.registry, Documents: informers.FullDocuments})
	require.NoError(t, err)
	f.clusters = informers.NewCaches(f.factory).Clusters()
	f.spcs = informers.NewCaches(f.factory).ServiceProviderClusters()
	_, err = f.clusters.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { f.updates.Add(1) }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.factory.Start(ctx)
	require.True(t, f.factory.WaitForCacheSync(ctx))
	return f
}

func clusterDoc(sub, name string) *api.Cluster {
	rid := api.MustParseResourceID(fmt.Sprintf("/subscriptions/%s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/%s", sub, name))
	return api.NewDocument(rid, sub, api.ClusterProperties{
		ServiceProviderProperties: &api.ClusterServiceProviderProperties{ProvisioningState: "Accepted"},
	})
}

func forEachStore(t *testing.T, fn func(t *testing.T, newStore func(t *testing.T) testStore)) {
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) { fn(t, newStore) })
	}
}

func TestChangesReachListerWithinTwoPolls(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		f := start(t, newStore, time.Hour)
		ctx := context.Background()
		c := f.store.Container(api.ResourcesContainer)
		lister := f.clusters.Lister()
		within := 2 * pollInterval

		created, err := database.Create(ctx, c, clusterDoc("sub-1", "Alpha"))
		require.NoError(t, err)
		assert.Eventually(t, func() bool { _, err := lister.Get(created.ResourceID); return err == nil }, within, 5*time.Millisecond, "create")

		update := created.DeepCopy()
		update.Properties.ServiceProviderProperties.ProvisioningState = "Provisioning"
		updated, err := database.Replace(ctx, c, update)
		require.NoError(t, err)
		assert.Eventually(t, func() bool {
			d, err := lister.Get(strings.ToUpper(created.ResourceID))
			return err == nil && d.Properties.ServiceProviderProperties.ProvisioningState == "Provisioning"
		}, within, 5*time.Millisecond, "update")

		item, err := c.Get(ctx, updated.PartitionKey, updated.ID)
		require.NoError(t, err)
		_, err = database.SoftDelete(ctx, c, item, time.Now())
		require.NoError(t, err)
		assert.Eventually(t, func() bool {
			_, err := lister.Get(created.ResourceID)
			return isNotFound(err)
		}, within, 5*time.Millisecond, "soft delete")
	})
}

func isNotFound(err error) bool { return errors.Is(err, database.ErrNotFound) }

func TestRelistRepairsWhatTheFeedMissed(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		f := start(t, newStore, 500*time.Millisecond)
		ctx := context.Background()
		c := f.store.Container(api.ResourcesContainer)
		lister := f.clusters.Lister()

		gone, err := database.Create(ctx, c, clusterDoc("sub-2", "gone"))
		require.NoError(t, err)
		missed, err := database.Create(ctx, c, clusterDoc("sub-2", "missed"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return len(lister.List()) == 2 }, 5*time.Second, 10*time.Millisecond)

		// A hard delete never reaches the feed; an update the feed drops is lost too.
		require.NoError(t, c.Delete(ctx, gone.PartitionKey, gone.ID, ""))
		f.store.hideFromFeed(missed.ID)
		upd := missed.DeepCopy()
		upd.Properties.ServiceProviderProperties.ProvisioningState = "Succeeded"
		_, err = database.Replace(ctx, c, upd)
		require.NoError(t, err)

		assert.Eventually(t, func() bool {
			_, errGone := lister.Get(gone.ResourceID)
			d, errMissed := lister.Get(missed.ResourceID)
			return isNotFound(errGone) && errMissed == nil && d.Properties.ServiceProviderProperties.ProvisioningState == "Succeeded"
		}, 10*time.Second, 20*time.Millisecond, "the periodic relist repairs the cache")
		assert.GreaterOrEqual(t, counterSum(t, f.registry, "hcpsched_informer_relists_total", nil), 2.0)
	})
}

// A relist that finds nothing new fires no update events: _etag is the ResourceVersion.
func TestQuietRelistFiresNoUpdates(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		f := start(t, newStore, 300*time.Millisecond)
		_, err := database.Create(context.Background(), f.store.Container(api.ResourcesContainer), clusterDoc("sub-3", "quiet"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return len(f.clusters.Lister().List()) == 1 }, 5*time.Second, 10*time.Millisecond)
		before := f.relists(t)
		require.Eventually(t, func() bool { return f.relists(t) >= before+3 }, 10*time.Second, 20*time.Millisecond)
		assert.Zero(t, f.updates.Load())
	})
}

// The pump is the only reader of a container: with several types registered, an idle
// container costs at most one feed request per feed range per poll.
func TestIdleContainerCostsOneFeedReadPerPoll(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		store := newStore(t)
		factory, err := informers.NewFactory(store, informers.Options{PollInterval: pollInterval, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry()})
		require.NoError(t, err)
		informers.NewCaches(factory).Clusters()
		informers.NewCaches(factory).ServiceProviderClusters()
		informers.Register[api.RawProperties](factory, api.ResourcesContainer, "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools", nil)
		informers.Register[api.RawProperties](factory, api.ResourcesContainer, "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths", nil)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		factory.Start(ctx)
		require.True(t, factory.WaitForCacheSync(ctx))
		ranges, err := store.Container(api.ResourcesContainer).FeedRanges(ctx)
		require.NoError(t, err)

		startReads, startTime := store.feedRequests(), time.Now()
		const polls = 8
		require.Eventually(t, func() bool { return store.feedRequests() >= startReads+float64(polls*len(ranges)) }, 20*time.Second, 10*time.Millisecond)
		elapsed := time.Since(startTime)
		reads := store.feedRequests() - startReads
		maxPolls := float64(elapsed/pollInterval) + 1
		assert.LessOrEqual(t, reads, maxPolls*float64(len(ranges)), "%v feed requests in %s with 4 types registered", reads, elapsed)
	})
}

func TestMalformedDocumentIsSkippedAndCounted(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		f := start(t, newStore, time.Hour)
		ctx := context.Background()
		c := f.store.Container(api.ResourcesContainer)
		bad := `{"id":"bad-1","partitionKey":"sub-4","resourceID":"not-a-resource-id","resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","properties":{}}`
		_, err := c.Create(ctx, "sub-4", []byte(bad))
		require.NoError(t, err)
		good, err := database.Create(ctx, c, clusterDoc("sub-4", "good"))
		require.NoError(t, err)
		assert.Eventually(t, func() bool { _, err := f.clusters.Lister().Get(good.ResourceID); return err == nil }, 5*time.Second, 10*time.Millisecond,
			"a malformed document does not block its feed range")
		assert.Eventually(t, func() bool {
			return counterSum(t, f.registry, "hcpsched_changefeed_malformed_documents_total", nil) >= 1
		}, 5*time.Second, 10*time.Millisecond)
	})
}

func TestListersAndIndexes(t *testing.T) {
	f := start(t, stores["memory"], time.Hour)
	ctx := context.Background()
	c := f.store.Container(api.ResourcesContainer)
	cluster, err := database.Create(ctx, c, clusterDoc("sub-5", "Indexed"))
	require.NoError(t, err)
	spcID := api.MustParseResourceID(cluster.ResourceID).Child("serviceProviderClusters", "default")
	_, err = database.Create(ctx, c, api.NewDocument(spcID, "sub-5", api.ServiceProviderClusterProperties{Spec: &api.ServiceProviderClusterSpec{}}))
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		spcs, err := f.spcs.Lister().ByIndex(informers.IndexByCluster, informers.KeyOf(cluster.ResourceID))
		return err == nil && len(spcs) == 1
	}, 5*time.Second, 10*time.Millisecond)

	_, err = f.clusters.Lister().Get("/subscriptions/sub-5/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/absent")
	assert.ErrorIs(t, err, database.ErrNotFound, "a cache miss is the store's not-found error")
}

func (f *fixture) relists(t *testing.T) float64 {
	return counterSum(t, f.registry, "hcpsched_informer_relists_total", nil)
}

// The mutation detector catches a controller that changes a lister's object in place.
func TestMutationDetectorCatchesInPlaceChanges(t *testing.T) {
	f := start(t, stores["memory"], time.Hour)
	_, err := database.Create(context.Background(), f.store.Container(api.ResourcesContainer), clusterDoc("sub-6", "shared"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(f.clusters.Lister().List()) == 1 }, 5*time.Second, 10*time.Millisecond)

	inner := &recordingTB{TB: t}
	informertest.DetectMutations(inner, f.clusters.SharedIndexInformer)
	cached := f.clusters.Lister().List()[0]
	copied := cached.DeepCopy()
	copied.Properties.ServiceProviderProperties.ProvisioningState = "Changed on a copy"
	inner.runCleanups()
	assert.False(t, inner.failed, "changing a deep copy is fine")

	inner = &recordingTB{TB: t}
	informertest.DetectMutations(inner, f.clusters.SharedIndexInformer)
	cached.Properties.ServiceProviderProperties.ProvisioningState = "Changed in the cache"
	inner.runCleanups()
	assert.True(t, inner.failed, "changing the cached object is caught")
}

type recordingTB struct {
	testing.TB
	failed   bool
	cleanups []func()
}

func (r *recordingTB) Errorf(string, ...any) { r.failed = true }
func (r *recordingTB) Fatalf(string, ...any) { r.failed = true }
func (r *recordingTB) Cleanup(fn func())     { r.cleanups = append(r.cleanups, fn) }
func (r *recordingTB) Helper()               {}
func (r *recordingTB) runCleanups() {
	for _, fn := range r.cleanups {
		fn()
	}
}

func schedulingDoc(stamp string, pending ...string) *api.ManagementClusterScheduling {
	mc := api.ManagementClusterResourceID(stamp)
	return api.NewDocument(api.SchedulingResourceID(mc), stamp, api.ManagementClusterSchedulingProperties{
		Status: &api.SchedulingStatus{PendingAssignedClusters: pending},
	})
}

// A document this process wrote is visible to its listers before the change feed brings
// it, and handlers still hear about it when the feed does.
func TestAssumedWritesAreVisibleAtOnce(t *testing.T) {
	store := &countingStore{Store: memory.New()}
	factory, err := informers.NewFactory(store, informers.Options{PollInterval: 50 * time.Millisecond, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
	updates := make(chan string, 10)
	_, err = schedulings.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, n any) {
		updates <- n.(*informers.Object[api.ManagementClusterSchedulingProperties]).GetResourceVersion()
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx)
	require.True(t, factory.WaitForCacheSync(ctx))
	c := store.Container(api.FleetContainer)
	lister := schedulings.Lister()

	created, err := database.Create(ctx, c, schedulingDoc("1"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := lister.Get(created.ResourceID); return err == nil }, 5*time.Second, 5*time.Millisecond)

	const cluster = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
	store.hideFromFeed(created.ID) // the feed will not deliver the next write in this part
	reserve := created.DeepCopy()
	reserve.Properties.Status.PendingAssignedClusters = []string{cluster}
	written, err := database.Replace(ctx, c, reserve)
	require.NoError(t, err)
	schedulings.Assume(written)

	got, err := lister.Get(written.ResourceID)
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.InstanceVersion(), "Get sees the write at once")
	byPending, err := lister.ByIndex(informers.IndexByPendingCluster, informers.KeyOf(cluster))
	require.NoError(t, err)
	assert.Len(t, byPending, 1, "indexes see it too")
	assert.Len(t, lister.List(), 1)

	older := created.DeepCopy()
	schedulings.Assume(older)
	got, _ = lister.Get(written.ResourceID)
	assert.Equal(t, int64(2), got.InstanceVersion(), "an older document never shadows a newer one")

	// A later write that drops the reservation: the index must stop matching.
	store.mu.Lock()
	delete(store.hide, created.ID)
	store.mu.Unlock()
	release := written.DeepCopy()
	release.Properties.Status.PendingAssignedClusters = nil
	released, err := database.Replace(ctx, c, release)
	require.NoError(t, err)
	schedulings.Assume(released)
	byPending, err = lister.ByIndex(informers.IndexByPendingCluster, informers.KeyOf(cluster))
	require.NoError(t, err)
	assert.Empty(t, byPending, "an assumed document that no longer matches leaves the index result")

	select {
	case rv := <-updates:
		assert.Equal(t, released.ETag, rv, "handlers hear of the write when the feed delivers it")
	case <-time.After(5 * time.Second):
		t.Fatal("no update event for an assumed write")
	}
}

// busyStore writes a new cluster after each change-feed read of Resources, until limit:
// a container that a writer keeps busy, so that every read finds something new. It
// counts each container's reads; Fleet stays idle, so its reads count the polls.
type busyStore struct {
	database.Store
	written, limit atomic.Int64
	reads          sync.Map // container name -> *atomic.Int64
}

func (s *busyStore) Container(name string) database.Container {
	n, _ := s.reads.LoadOrStore(name, new(atomic.Int64))
	return &busyContainer{Container: s.Store.Container(name), store: s, reads: n.(*atomic.Int64)}
}

func (s *busyStore) readsOf(container string) int64 {
	n, _ := s.reads.LoadOrStore(container, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

type busyContainer struct {
	database.Container
	store *busyStore
	reads *atomic.Int64
}

func (c *busyContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	c.reads.Add(1)
	page, err := c.Container.ChangeFeed(ctx, opts)
	if err == nil && c.Name() == api.ResourcesContainer {
		if n := c.store.written.Add(1); n <= c.store.limit.Load() {
			if _, werr := database.Create(ctx, c.Container, clusterDoc("busy", fmt.Sprintf("c%d", n))); werr != nil {
				return page, werr
			}
		}
	}
	return page, err
}

// A poll reads each feed range once while its pages are short: a container whose
// writers never pause is not chased within a poll (every read would find a change
// more), so its requests are bounded by the poll rate, as an idle container's are, and
// what was written since waits for the next poll. Every change still reaches the lister.
func TestBusyContainerCostsOneFeedReadPerPoll(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func(t *testing.T) testStore) {
		const writes, polls = 40, 6
		store := &busyStore{Store: newStore(t).Store}
		factory, err := informers.NewFactory(store, informers.Options{PollInterval: pollInterval, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry()})
		require.NoError(t, err)
		clusters := informers.NewCaches(factory).Clusters()
		informers.NewCaches(factory).ManagementClusters()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		factory.Start(ctx)
		require.True(t, factory.WaitForCacheSync(ctx))

		busy, idle := store.readsOf(api.ResourcesContainer), store.readsOf(api.FleetContainer)
		store.written.Store(0)
		store.limit.Store(writes)
		require.Eventually(t, func() bool { return store.readsOf(api.FleetContainer) >= idle+polls }, 20*time.Second, time.Millisecond)
		busyReads, idleReads := store.readsOf(api.ResourcesContainer)-busy, store.readsOf(api.FleetContainer)-idle
		assert.LessOrEqual(t, busyReads, idleReads+1, "feed reads of the busy container against the idle one's, one a poll")
		require.Less(t, store.written.Load(), int64(writes), "the writer was still busy at the end")

		store.limit.Store(0)
		want := int(min(store.written.Load(), writes))
		assert.Eventually(t, func() bool { return len(clusters.Lister().List()) >= want }, 20*time.Second, 10*time.Millisecond,
			"every cluster written reaches the lister")
	})
}
